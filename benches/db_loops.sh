#!/usr/bin/env bash
# Side by side on PostgreSQL, alternating ROUNDS times at WORK_UNIT 255 with one session:
#   - corescale's default client loop (pipelined: batches of 32 statements under one Sync,
#     two batches in flight),
#   - the same loop with --pipeline 1 (one round trip per statement),
#   - --server-loop (the statements loop in PL/pgSQL inside the server, as pgio does).
# Prints the database's LIO/s and the host's steal time for every run, the ratio to the server
# loop of each round (runs of one round are seconds apart, so slow drift cancels), their
# median, and the median over the rounds where neither run lost more than QUIET_STEAL percent
# to steal: on a shared VM steal moves LIO/s more than the client loop does (target: default
# client loop >= 0.90 x server loop). Needs a PostgreSQL URL in CORESCALE_TEST_PG.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${CORESCALE_TEST_PG:?set CORESCALE_TEST_PG to a PostgreSQL URL}"
ROUNDS=${ROUNDS:-3}
QUIET_STEAL=${QUIET_STEAL:-5}
cargo build --release --quiet
bin=./target/release/corescale
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
$bin db setup --target "$CORESCALE_TEST_PG" --schemas 1 --scale 8192 >/dev/null
# One run: prints "LIO/s steal%".
measure() {
    $bin run db --target "$CORESCALE_TEST_PG" -w 1 --work-unit 255 --duration 5s --repeat 1 -q -o "$work/level.json" "$@"
    python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["levels"][0]; print(l["workload_figures"]["db_lio_per_s"], l["os"]["steal_pct"])' "$work/level.json"
}
for round in $(seq "$ROUNDS"); do
    echo "$(measure) $(measure --pipeline 1) $(measure --server-loop)"
done >"$work/rounds"
python3 - "$work/rounds" "$QUIET_STEAL" <<'PY'
import statistics, sys
rounds = [[float(x) for x in line.split()] for line in open(sys.argv[1])]
quiet_steal = float(sys.argv[2])
print("round  client loop (steal)   --pipeline 1 (steal)   server loop (steal)   client/server  pipeline-1/server")
for i, (client, client_steal, single, single_steal, server, server_steal) in enumerate(rounds, 1):
    print(f"{i:5}  {client/1e6:6.3f} M ({client_steal:4.1f}%)   {single/1e6:6.3f} M ({single_steal:4.1f}%)"
          f"     {server/1e6:6.3f} M ({server_steal:4.1f}%)      {client/server:6.3f}        {single/server:6.3f}")
# Each rounds entry: client, its steal, --pipeline 1, its steal, server, its steal.
def ratio(label, index, quiet_only):
    """Median over rounds of run `index` / server; with quiet_only, only rounds where both
    runs compared had steal below the threshold."""
    chosen = [r[index] / r[4] for r in rounds
              if not quiet_only or (r[index + 1] < quiet_steal and r[5] < quiet_steal)]
    if not chosen:
        return f"{label}: no such rounds"
    return f"{label} = {statistics.median(chosen):.3f} ({len(chosen)} rounds)"
for quiet_only, name in [(False, "median of all rounds"),
                         (True, f"median of rounds whose two runs had steal < {quiet_steal:g}%")]:
    print(f"{name}: {ratio('default client / server', 0, quiet_only)} (target >= 0.90), "
          f"{ratio('--pipeline 1 / server', 2, quiet_only)}")
PY
