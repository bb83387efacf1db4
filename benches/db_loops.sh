#!/usr/bin/env bash
# Side by side on PostgreSQL, alternating ROUNDS times at WORK_UNIT 255 with one session:
#   - corescale's default client loop (pipelined: batches of 32 statements under one Sync,
#     two batches in flight),
#   - the same loop with --pipeline 1 (one round trip per statement),
#   - --server-loop (the statements loop in PL/pgSQL inside the server, as pgio does).
# Prints the database's LIO/s for each and the ratios to the server loop (target: default
# client loop >= 0.90 x server loop). Needs a PostgreSQL URL in CORESCALE_TEST_PG.
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
measure() {
    $bin run db --target "$CORESCALE_TEST_PG" -w 1 --work-unit 255 --duration 5s --repeat 1 -q -o "$work/level.json" "$@"
    rate "$work/level.json"
}
pipelined=(); single=(); server=()
for round in $(seq "$ROUNDS"); do
    pipelined+=("$(measure)")
    single+=("$(measure --pipeline 1)")
    server+=("$(measure --server-loop)")
done
python3 - "${pipelined[*]}" "${single[*]}" "${server[*]}" <<'PY'
import statistics, sys
names = ["client loop (default, pipelined)", "client loop (--pipeline 1)", "server loop"]
series = [[float(x) for x in arg.split()] for arg in sys.argv[1:4]]
for name, values in zip(names, series):
    print(f"{name:34} LIO/s: {[round(x) for x in values]} median {round(statistics.median(values))}")
server = statistics.median(series[2])
print(f"default client / server = {statistics.median(series[0]) / server:.3f} (target >= 0.90)")
print(f"--pipeline 1   / server = {statistics.median(series[1]) / server:.3f}")
PY
