#!/usr/bin/env bash
# Client CPU per statement when the sessions are spread over two instances against one:
# a private PostgreSQL primary and a streaming replica (initdb and pg_basebackup -R in a
# temporary directory, each on its own port), `run db` at 2 sessions on the primary alone and
# on both (round robin), alternating rounds. The ratio two/one should stay within 10%.
#
#   bash benches/cluster_cpu.sh [ROUNDS]      (needs PostgreSQL's server binaries)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
bindir=${CORESCALE_TEST_PG_BINDIR:-/usr/lib/postgresql/$(ls /etc/postgresql)/bin}
cargo build --release --quiet
work=$(mktemp -d)
as_owner=()
if [ "$(id -u)" = 0 ]; then
    chown postgres: "$work"
    as_owner=(runuser -u postgres --)
fi
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
primary_port=$(free_port)
replica_port=$(free_port)
cleanup() {
    for data in "$work/primary" "$work/replica"; do
        [ -d "$data" ] && "${as_owner[@]}" "$bindir/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1 || true
    done
    rm -rf "$work"
}
trap cleanup EXIT
start() { # data-directory port
    "${as_owner[@]}" "$bindir/pg_ctl" -D "$1" -l "$1.log" -w start \
        -o "-p $2 -k $work -c listen_addresses=127.0.0.1 -c fsync=off -c shared_buffers=64MB -c autovacuum=off" >/dev/null
}
"${as_owner[@]}" "$bindir/initdb" -D "$work/primary" -U postgres -A trust --no-sync >/dev/null
printf 'local all postgres trust\nlocal replication postgres trust\nhost all postgres 127.0.0.1/32 trust\n' \
    >"$work/primary/pg_hba.conf"
start "$work/primary" "$primary_port"
"${as_owner[@]}" "$bindir/pg_basebackup" -h "$work" -p "$primary_port" -U postgres \
    -D "$work/replica" -R -X stream --no-sync
start "$work/replica" "$replica_port"
one="postgres://postgres@127.0.0.1:$primary_port/postgres"
two="postgres://postgres@127.0.0.1:$primary_port,127.0.0.1:$replica_port/postgres"
target/release/corescale db setup --target "$two" --schemas 2 --scale 2000 >/dev/null

# Client CPU seconds per statement of one 2-session level of 3 s.
cpu_per_statement() {
    target/release/corescale run db --target "$1" -w 2 --duration 3s --repeat 1 -q --pipeline 1 \
        -o "$work/level.json"
    python3 -c '
import json, sys
level = json.load(open(sys.argv[1]))["levels"][0]["workload_figures"]
print(level["client_cpu_s"] / level["statements"])' "$work/level.json"
}
ratios=()
for round in $(seq "$rounds"); do
    a=$(cpu_per_statement "$one")
    b=$(cpu_per_statement "$two")
    ratio=$(python3 -c "print(f'{$b / $a:.3f}')")
    ratios+=("$ratio")
    printf 'round %d: one instance %.2f us, two instances %.2f us per statement: %s\n' \
        "$round" "$(python3 -c "print($a * 1e6)")" "$(python3 -c "print($b * 1e6)")" "$ratio"
done
python3 -c "
import statistics, sys
ratios = [float(r) for r in sys.argv[1:]]
median = statistics.median(ratios)
print(f'median ratio two instances / one: {median:.3f} (target within 10%: {\"met\" if abs(median - 1) <= 0.10 else \"NOT met\"})')" "${ratios[@]}"
