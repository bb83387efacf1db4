#!/usr/bin/env bash
# SLOB's `db setup` by two builds side by side: OLD (a corescale binary built from an earlier
# commit) and this checkout's release build, alternating ROUNDS times on the local PostgreSQL
# and MariaDB (SCHEMAS tables of SCALE each). Wall time of each setup and the median ratio
# new/old: a change to how setup loads must not make it slower. Works in databases of its own,
# dropped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${OLD:?set OLD to the earlier corescale binary}"
ROUNDS=${ROUNDS:-3}
SCHEMAS=${SCHEMAS:-2}
SCALE=${SCALE:-64M}
cargo build --release --quiet
new=$PWD/target/release/corescale
cleanup() {
    psql -q -h 127.0.0.1 -U postgres postgres -c 'DROP DATABASE IF EXISTS cs_bench_slob' 2>/dev/null || true
    mysql -h 127.0.0.1 -u root -e 'DROP DATABASE IF EXISTS cs_bench_slob' || true
}
trap cleanup EXIT
cleanup
psql -q -h 127.0.0.1 -U postgres postgres -c 'CREATE DATABASE cs_bench_slob'
mysql -h 127.0.0.1 -u root -e 'CREATE DATABASE cs_bench_slob'
# shellcheck source=benches/common/timing.sh
. benches/common/timing.sh
for url in postgres://postgres@127.0.0.1:5432/cs_bench_slob mysql://root@127.0.0.1:3306/cs_bench_slob; do
    olds=(); news=()
    for round in $(seq "$ROUNDS"); do
        took=$(seconds "$OLD" db setup --schemas "$SCHEMAS" --scale "$SCALE" --target "$url")
        olds+=("$took")
        "$OLD" db teardown --target "$url" >/dev/null
        took=$(seconds "$new" db setup --schemas "$SCHEMAS" --scale "$SCALE" --target "$url")
        news+=("$took")
        "$new" db teardown --target "$url" >/dev/null
        echo "${url%%:*} round $round: old ${olds[-1]} s, new ${news[-1]} s"
    done
    python3 -c '
import statistics, sys
name, old, new = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
a, b = statistics.median(old), statistics.median(new)
print(f"{name}: median old {a:.2f} s, new {b:.2f} s, new/old {b/a:.2f}")
' "${url%%:*}" "${olds[*]}" "${news[*]}"
done
