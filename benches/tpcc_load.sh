#!/usr/bin/env bash
# Load time of the order-entry tables: `corescale db setup --workload tpcc` beside
# Percona-Lab's sysbench-tpcc `prepare` (Lua scripts for sysbench 1.0, run by Debian's
# sysbench; SBTPCC names the folder holding tpcc.lua, fetched, never committed), at the same
# warehouses (WAREHOUSES) and sessions (one per warehouse), on the local PostgreSQL and
# MariaDB, alternating ROUNDS times. sysbench-tpcc runs without foreign keys (--use_fk=0),
# as corescale creates none. Wall time of each, the median of each and their ratio
# corescale/sysbench. sysbench-tpcc's prepare sleeps 30 s once its tables are created, before
# it loads them ("Waiting on tables 30 sec", tpcc_common.lua): its time is counted without
# that sleep. Each works in a database of its own, dropped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${SBTPCC:?set SBTPCC to a checkout of Percona-Lab/sysbench-tpcc}"
WAREHOUSES=${WAREHOUSES:-2}
ROUNDS=${ROUNDS:-3}
cargo build --release --quiet
corescale=$PWD/target/release/corescale
pg="postgres://postgres@127.0.0.1:5432"
my="mysql://root@127.0.0.1:3306"
cleanup() {
    psql -q -h 127.0.0.1 -U postgres postgres -c 'DROP DATABASE IF EXISTS cs_bench_load' -c 'DROP DATABASE IF EXISTS sb_bench_load' 2>/dev/null || true
    mysql -h 127.0.0.1 -u root -e 'DROP DATABASE IF EXISTS cs_bench_load; DROP DATABASE IF EXISTS sb_bench_load' || true
}
trap cleanup EXIT
cleanup
psql -q -h 127.0.0.1 -U postgres postgres -c 'CREATE DATABASE cs_bench_load' -c 'CREATE DATABASE sb_bench_load'
mysql -h 127.0.0.1 -u root -e 'CREATE DATABASE cs_bench_load; CREATE DATABASE sb_bench_load'
# shellcheck source=benches/common/timing.sh
. benches/common/timing.sh
sysbench_tpcc() {
    local driver=$1 command=$2
    (cd "$SBTPCC" && sysbench tpcc.lua --db-driver="$driver" \
        --pgsql-host=127.0.0.1 --pgsql-user=postgres --pgsql-db=sb_bench_load \
        --mysql-host=127.0.0.1 --mysql-user=root --mysql-db=sb_bench_load \
        --tables=1 --scale="$WAREHOUSES" --threads="$WAREHOUSES" --use_fk=0 "$command")
}
for server in pgsql mysql; do
    url=$pg/cs_bench_load; [ $server = mysql ] && url=$my/cs_bench_load
    ours=(); theirs=()
    for round in $(seq "$ROUNDS"); do
        took=$(seconds "$corescale" db setup --workload tpcc --warehouses "$WAREHOUSES" --loaders "$WAREHOUSES" --target "$url")
        ours+=("$took")
        "$corescale" db teardown --target "$url" >/dev/null
        took=$(seconds sysbench_tpcc $server prepare)
        theirs+=("$(echo "$took - 30" | bc)")
        sysbench_tpcc $server cleanup >/dev/null 2>&1
        echo "$server round $round: corescale ${ours[-1]} s, sysbench-tpcc ${theirs[-1]} s"
    done
    python3 -c '
import statistics, sys
server, ours, theirs = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
a, b = statistics.median(ours), statistics.median(theirs)
print(f"{server}: median corescale {a:.1f} s, sysbench-tpcc {b:.1f} s, ratio {a/b:.2f}")
' "$server" "${ours[*]}" "${theirs[*]}"
done
