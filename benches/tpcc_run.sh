#!/usr/bin/env bash
# Order entry under load: `corescale run tpcc` beside Percona-Lab's sysbench-tpcc `run` (Lua
# scripts for sysbench 1.0, run by Debian's sysbench; SBTPCC names the folder holding
# tpcc.lua, fetched, never committed), on the local PostgreSQL and MariaDB, at the same
# warehouses (WAREHOUSES), sessions (SESSIONS) and isolation (the server's default: READ
# COMMITTED on PostgreSQL, REPEATABLE READ on MariaDB), each after a warm-up run of its own
# (WARMUP s; sysbench 1.0 has no --warmup-time) before DURATION s measured, alternating ROUNDS
# times. Per round: transactions per second as each tool counts them (sysbench-tpcc: its
# events; corescale: transactions_per_s), and the client's CPU (user + system of the whole
# measured process, by /usr/bin/time) per transaction. Medians and ratios
# corescale/sysbench-tpcc.
# Each tool has tables of its own in a database of its own, dropped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${SBTPCC:?set SBTPCC to a checkout of Percona-Lab/sysbench-tpcc}"
WAREHOUSES=${WAREHOUSES:-2}
SESSIONS=${SESSIONS:-2}
ROUNDS=${ROUNDS:-3}
WARMUP=${WARMUP:-5}
DURATION=${DURATION:-20}
cargo build --release --quiet
corescale=$PWD/target/release/corescale
pg="postgres://postgres@127.0.0.1:5432"
my="mysql://root@127.0.0.1:3306"
work=$(mktemp -d)
cleanup() {
    psql -q -h 127.0.0.1 -U postgres postgres -c 'DROP DATABASE IF EXISTS cs_bench_run' -c 'DROP DATABASE IF EXISTS sb_bench_run' 2>/dev/null || true
    mysql -h 127.0.0.1 -u root -e 'DROP DATABASE IF EXISTS cs_bench_run; DROP DATABASE IF EXISTS sb_bench_run' || true
    rm -rf "$work"
}
trap cleanup EXIT
cleanup
work=$(mktemp -d)
psql -q -h 127.0.0.1 -U postgres postgres -c 'CREATE DATABASE cs_bench_run' -c 'CREATE DATABASE sb_bench_run'
mysql -h 127.0.0.1 -u root -e 'CREATE DATABASE cs_bench_run; CREATE DATABASE sb_bench_run'
sysbench_tpcc() {
    local driver=$1 command=$2 level=RR
    shift 2
    [ "$driver" = pgsql ] && level=RC
    # shellcheck disable=SC2086 # $timed is a command prefix, or nothing.
    (cd "$SBTPCC" && ${timed:-} sysbench tpcc.lua --db-driver="$driver" \
        --pgsql-host=127.0.0.1 --pgsql-user=postgres --pgsql-db=sb_bench_run \
        --mysql-host=127.0.0.1 --mysql-user=root --mysql-db=sb_bench_run \
        --tables=1 --scale="$WAREHOUSES" --use_fk=0 --trx_level=$level "$@" "$command")
}
# Prints "tps cpu_s transactions" of one tool's run. corescale runs one batch (--repeat 1;
# its default is 3 batches of --duration each), so both tools measure DURATION s.
ours_round() {
    local url=$1
    "$corescale" run tpcc --target "$url" --sweep "$SESSIONS" --duration "${WARMUP}s" \
        --repeat 1 --quiet >/dev/null 2>&1
    /usr/bin/time -f %U:%S -o "$work/time" "$corescale" run tpcc --target "$url" \
        --sweep "$SESSIONS" --duration "${DURATION}s" --repeat 1 --quiet \
        -o "$work/run.json" >/dev/null 2>&1
    python3 -c '
import json, sys
level = json.load(open(sys.argv[1]))["levels"][0]["workload_figures"]
user, system = map(float, open(sys.argv[2]).read().replace(":", " ").split()[-2:])
print(level["transactions_per_s"], user + system, level["transactions"])
' "$work/run.json" "$work/time"
}
theirs_round() {
    local driver=$1
    sysbench_tpcc "$driver" run --threads="$SESSIONS" --time="$WARMUP" >/dev/null 2>&1
    timed="/usr/bin/time -f %U:%S -o $work/time" sysbench_tpcc "$driver" run \
        --threads="$SESSIONS" --time="$DURATION" --report-interval=0 >"$work/sysbench.out" 2>&1
    python3 -c '
import re, sys
text = open(sys.argv[1]).read()
count, tps = re.search(r"transactions:\s+(\d+)\s+\(([\d.]+) per sec", text).groups()
user, system = map(float, open(sys.argv[2]).read().replace(":", " ").split()[-2:])
print(tps, user + system, count)
' "$work/sysbench.out" "$work/time"
}
for server in pgsql mysql; do
    url=$pg/cs_bench_run; [ $server = mysql ] && url=$my/cs_bench_run
    "$corescale" db setup --workload tpcc --warehouses "$WAREHOUSES" --target "$url" >/dev/null
    sysbench_tpcc $server prepare --threads="$WAREHOUSES" >/dev/null
    rows=()
    for round in $(seq "$ROUNDS"); do
        read -r our_tps our_cpu our_count < <(ours_round "$url")
        read -r their_tps their_cpu their_count < <(theirs_round $server)
        rows+=("$our_tps $our_cpu $our_count $their_tps $their_cpu $their_count")
        echo "$server round $round: corescale $our_tps tps, $our_cpu s CPU for $our_count; sysbench-tpcc $their_tps tps, $their_cpu s CPU for $their_count"
    done
    python3 -c '
import statistics, sys
server = sys.argv[1]
rows = [list(map(float, row.split())) for row in sys.argv[3:]]
ours_tps = statistics.median(r[0] for r in rows)
theirs_tps = statistics.median(r[3] for r in rows)
# CPU per transaction: the measured process CPU over the transactions it counted.
ours_cpu = statistics.median(1e6 * r[1] / r[2] for r in rows)
theirs_cpu = statistics.median(1e6 * r[4] / r[5] for r in rows)
print(f"{server}: median corescale {ours_tps:.0f} tps, {ours_cpu:.0f} us CPU/transaction; "
      f"sysbench-tpcc {theirs_tps:.0f} tps, {theirs_cpu:.0f} us CPU/transaction; "
      f"ratios {ours_tps/theirs_tps:.2f} tps, {ours_cpu/theirs_cpu:.2f} CPU/transaction")
' "$server" "$DURATION" "${rows[@]}"
    "$corescale" db teardown --target "$url" >/dev/null
    sysbench_tpcc $server cleanup >/dev/null 2>&1
done
