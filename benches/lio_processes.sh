#!/usr/bin/env bash
# What the shared buffer cache costs 2 sessions on separate schemas, against the platform's own
# ceiling. Each of ROUNDS rounds runs, seconds apart, with SCALE rows per schema:
#   - solo: one process, one session;
#   - apart: two processes at once, one session each, so they share no memory at all
#     (what two independent programs get from this host's two CPUs);
#   - shared: one process, 2 sessions on 2 schemas in one buffer cache (`run lio -w 2`).
# Prints LIO/s and steal for every run, then the medians of apart / solo (the platform's
# ceiling), shared / solo (the engine's scaling) and shared / apart (what sharing one cache
# costs; 1.0 means nothing). On a shared VM single rounds move by tens of percent, so the
# round ratios, not single runs, are the figure.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-8}
SCALE=${SCALE:-64M}
cargo build --release --quiet
bin=./target/release/corescale
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# One run of `run lio` with the given options; writes its JSON to $work/$1.json.
run() {
    local name=$1
    shift
    $bin run lio --scale "$SCALE" --duration 1s --repeat 3 -q -o "$work/$name.json" "$@"
}
# "LIO/s steal%" of a finished run.
figures() {
    python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["levels"][0]; print(l["workload_figures"]["lio_per_s"], l["os"]["steal_pct"])' "$work/$1.json"
}
for round in $(seq "$ROUNDS"); do
    run solo -w 1 --schemas 1
    run apart_a -w 1 --schemas 1 &
    run apart_b -w 1 --schemas 1
    wait
    run shared -w 2 --schemas 2
    echo "$(figures solo) $(figures apart_a) $(figures apart_b) $(figures shared)"
done >"$work/rounds"
python3 - "$work/rounds" "$SCALE" <<'PY'
import statistics, sys
rounds = [[float(x) for x in line.split()] for line in open(sys.argv[1])]
print(f"{len(rounds)} rounds, {sys.argv[2]} rows per schema")
print("round  solo (steal)        apart: sum of 2 (steal)   shared, 2 sessions (steal)   apart/solo  shared/solo  shared/apart")
ratios = {"apart/solo": [], "shared/solo": [], "shared/apart": []}
for i, (solo, solo_steal, a, a_steal, b, _, shared, shared_steal) in enumerate(rounds, 1):
    apart = a + b
    for name, value in [("apart/solo", apart / solo), ("shared/solo", shared / solo),
                        ("shared/apart", shared / apart)]:
        ratios[name].append(value)
    print(f"{i:5}  {solo/1e6:6.2f} M ({solo_steal:4.1f}%)   {apart/1e6:6.2f} M ({a_steal:4.1f}%)"
          f"           {shared/1e6:6.2f} M ({shared_steal:4.1f}%)"
          f"               {apart/solo:6.3f}       {shared/solo:6.3f}        {shared/apart:6.3f}")
print("medians: " + ", ".join(f"{name} {statistics.median(values):.3f}" for name, values in ratios.items()))
PY
