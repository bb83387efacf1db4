#!/usr/bin/env bash
# Two builds of corescale side by side on `run db`, alternating ROUNDS times: the one given in
# OLD (a corescale binary built from an earlier commit) and this checkout's release build.
# Each round runs, on the local PostgreSQL, the default pipelined loop, --pipeline 1 and
# --server-loop, and on MariaDB the default loop: 1 session, WORK_UNIT 64, DURATION each.
# Prints statements/s and the client's CPU per statement for every run and the median ratio
# new/old of each: a change to the session layer must leave both within noise.
# Needs CORESCALE_TEST_PG and CORESCALE_TEST_MYSQL; leaves its tables torn down.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${OLD:?set OLD to the earlier corescale binary}"
: "${CORESCALE_TEST_PG:?set CORESCALE_TEST_PG to a PostgreSQL URL}"
: "${CORESCALE_TEST_MYSQL:?set CORESCALE_TEST_MYSQL to a MySQL/MariaDB URL}"
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5s}
cargo build --release --quiet
new=./target/release/corescale
work=$(mktemp -d)
cleanup() {
    for url in "$CORESCALE_TEST_PG" "$CORESCALE_TEST_MYSQL"; do
        $new db teardown --target "$url" >/dev/null 2>&1 || true
    done
    rm -rf "$work"
}
trap cleanup EXIT
for url in "$CORESCALE_TEST_PG" "$CORESCALE_TEST_MYSQL"; do
    $new db setup --target "$url" --schemas 1 --scale 8192 >/dev/null
done
# One run: prints "statements/s client-CPU-µs/statement".
measure() {
    local bin=$1 url=$2
    shift 2
    $bin run db --target "$url" -w 1 --work-unit 64 --duration "$DURATION" --repeat 1 -q \
        -o "$work/level.json" "$@" 2>/dev/null
    python3 -c '
import json, sys
level = json.load(open(sys.argv[1]))["levels"][0]
figures = level["workload_figures"]
statements = figures["statements"]
cpu_us = figures["client_cpu_s"] / statements * 1e6
rate = statements / level["elapsed_s"]
print(f"{rate:.0f} {cpu_us:.2f}")' "$work/level.json"
}
cases=("pg|$CORESCALE_TEST_PG|" "pg --pipeline 1|$CORESCALE_TEST_PG|--pipeline 1"
    "pg --server-loop|$CORESCALE_TEST_PG|--server-loop" "mariadb|$CORESCALE_TEST_MYSQL|")
for round in $(seq "$ROUNDS"); do
    for case in "${cases[@]}"; do
        IFS='|' read -r name url flags <<<"$case"
        # shellcheck disable=SC2086
        echo "$name|$(measure "$OLD" "$url" $flags)|$(measure "$new" "$url" $flags)"
    done
done >"$work/rounds"
python3 - "$work/rounds" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    name, old, new = line.strip().split("|")
    runs.setdefault(name, []).append([float(x) for x in old.split()] + [float(x) for x in new.split()])
print(f"{'case':18} {'old stmt/s':>11} {'new stmt/s':>11} {'new/old':>8}   {'old CPU µs':>10} {'new CPU µs':>10} {'new/old':>8}")
for name, rounds in runs.items():
    for old_rate, old_cpu, new_rate, new_cpu in rounds:
        print(f"{name:18} {old_rate:11.0f} {new_rate:11.0f} {new_rate / old_rate:8.3f}   {old_cpu:10.2f} {new_cpu:10.2f} {new_cpu / old_cpu:8.3f}")
    rate = statistics.median(r[2] / r[0] for r in rounds)
    cpu = statistics.median(r[3] / r[1] for r in rounds)
    print(f"{name:18} median new/old: statements/s {rate:.3f}, client CPU per statement {cpu:.3f}")
PY
