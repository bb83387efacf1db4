#!/usr/bin/env bash
# Side by side on PostgreSQL: corescale's client loop (one round trip per statement) against
# --server-loop (the statements loop in PL/pgSQL inside the server, as pgio does), alternating
# ROUNDS times at WORK_UNIT 255 with one session. Prints the database's LIO/s for both and their
# ratio (target: client >= 0.90 x server). Needs a PostgreSQL URL in CORESCALE_TEST_PG.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${CORESCALE_TEST_PG:?set CORESCALE_TEST_PG to a PostgreSQL URL}"
ROUNDS=${ROUNDS:-3}
cargo build --release --quiet
bin=./target/release/corescale
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
$bin db setup --target "$CORESCALE_TEST_PG" --schemas 1 --scale 8192 >/dev/null
rate() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["levels"][0]["workload_figures"]["db_lio_per_s"])' "$1"; }
client=(); server=()
for round in $(seq "$ROUNDS"); do
    $bin run db --target "$CORESCALE_TEST_PG" -w 1 --work-unit 255 --duration 5s --repeat 1 -q -o "$work/client.json"
    $bin run db --target "$CORESCALE_TEST_PG" -w 1 --work-unit 255 --duration 5s --repeat 1 --server-loop -q -o "$work/server.json"
    client+=("$(rate "$work/client.json")"); server+=("$(rate "$work/server.json")")
done
python3 - "${client[*]}" "${server[*]}" <<'PY'
import statistics, sys
client = [float(x) for x in sys.argv[1].split()]
server = [float(x) for x in sys.argv[2].split()]
print("client loop  LIO/s:", [round(x) for x in client], "median", round(statistics.median(client)))
print("server loop  LIO/s:", [round(x) for x in server], "median", round(statistics.median(server)))
print(f"client / server = {statistics.median(client) / statistics.median(server):.3f} (target >= 0.90)")
PY
