#!/usr/bin/env bash
# corescale's replay beside pgreplay on one capture: a private PostgreSQL logs a pgbench run
# (csvlog, log_statement=all) of CLIENTS clients at RATE transactions/s for DURATION s; then,
# alternating ROUNDS times, pgreplay and `corescale run replay` send it again at 1x and at
# each of SPEEDS, each to a fresh copy of the database taken before the run. Per replay: its
# run time against the captured span over the speed, how far it fell behind the schedule
# (pgreplay's "maximum lag", corescale's schedule lag p99 and whether it kept up), and
# whether it left the rows the captured run left (history rows, the sums of their deltas and
# of the balances: pgbench's opening TRUNCATE must run before the clients' inserts).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v pgreplay >/dev/null || { echo "needs pgreplay (apt-get install pgreplay)"; exit 1; }
CLIENTS=${CLIENTS:-4}
RATE=${RATE:-200}
DURATION=${DURATION:-10}
SPEEDS=${SPEEDS:-1 8 32}
ROUNDS=${ROUNDS:-3}
bindir=/usr/lib/postgresql/$(ls /etc/postgresql | sort -n | tail -1)/bin
cargo build --release --quiet
corescale=$PWD/target/release/corescale
work=$(mktemp -d)
chown postgres "$work"
as_postgres() { runuser -u postgres -- "$@"; }
cleanup() {
    as_postgres "$bindir/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
as_postgres "$bindir/initdb" -D "$work/data" -U postgres -A trust --no-sync >/dev/null
as_postgres "$bindir/pg_ctl" -D "$work/data" -l "$work/server.log" -w start -o \
    "-p $port -k $work -c listen_addresses=127.0.0.1 -c fsync=off -c logging_collector=on \
     -c log_directory=$work/log -c log_filename=pg -c log_destination=csvlog \
     -c log_connections=on -c log_disconnections=on" >/dev/null
psql() { as_postgres "$bindir/psql" -h "$work" -p "$port" -U postgres -qX "$@"; }
psql -c 'CREATE DATABASE pristine' postgres
as_postgres "$bindir/pgbench" -h "$work" -p "$port" -U postgres -i -s 4 -q pristine >/dev/null 2>&1
fresh() { psql -c 'DROP DATABASE IF EXISTS bench' -c 'CREATE DATABASE bench TEMPLATE pristine' postgres; }
fresh
psql -c "ALTER DATABASE bench SET log_statement = 'all'" postgres
as_postgres "$bindir/pgbench" -h 127.0.0.1 -p "$port" -U postgres -c "$CLIENTS" -T "$DURATION" \
    -R "$RATE" -M prepared bench >/dev/null 2>&1
psql -c "ALTER DATABASE bench RESET log_statement" postgres
STATE="SELECT (SELECT count(*) FROM pgbench_history) || ' ' || (SELECT coalesce(sum(delta), 0) FROM pgbench_history) || ' ' || (SELECT sum(abalance) FROM pgbench_accounts) || ' ' || (SELECT sum(bbalance) FROM pgbench_branches) || ' ' || (SELECT sum(tbalance) FROM pgbench_tellers)"
captured=$(psql -tA -c "$STATE" bench)
rows() { [ "$(psql -tA -c "$STATE" bench)" = "$captured" ] && echo same || echo "differ ($(psql -tA -c "$STATE" bench) against $captured)"; }
sleep 1
cp "$work/log/pg.csv" "$work/capture.csv"
"$corescale" capture "$work/capture.csv" -o "$work/bench.capture" -q
span=$(zcat "$work/bench.capture" | python3 -c '
import json, sys
times = [json.loads(line)["at_us"] for line in sys.stdin if "\"record\":\"statement\"" in line]
print((max(times) - min(times)) / 1e6)')
echo "captured span ${span} s; replays at ${SPEEDS} x, ${ROUNDS} rounds"
printf '%-5s %-9s %6s %10s %10s %14s %-30s %s\n' round tool speed run_s expect_s lag kept rows
for round in $(seq "$ROUNDS"); do
    for speed in $SPEEDS; do
        fresh
        # pgreplay ends after 3x the replay's length plus a minute, or is said not to.
        limit=$(python3 -c "print(int(3 * $span / $speed + 60))")
        out=$(timeout "$limit" pgreplay -c -h 127.0.0.1 -p "$port" -s "$speed" "$work/capture.csv" 2>&1 \
            || echo "Total run time: no end within ${limit}")
        run=$(echo "$out" | sed -En 's/.*Total run time: *([0-9.]+|no end within [0-9]+).*/\1/p' | tail -1)
        lag=$(echo "$out" | sed -En 's/.*Maximum lag behind schedule: *([0-9.]+).*/\1/p' | head -1)
        printf '%-5s %-9s %6s %10s %10.3f %14s %-30s %s\n' "$round" pgreplay "$speed" "${run:-?}" \
            "$(python3 -c "print($span/$speed)")" "max ${lag:-?} s" "-" "$(rows)"
        fresh
        "$corescale" run replay --target "postgres://postgres@127.0.0.1:$port/bench" \
            --capture "$work/bench.capture" --speed "$speed" --allow-writes -q \
            -o "$work/replay.json" 2>/dev/null
        python3 - "$work/replay.json" "$round" "$speed" "$span" <<'PY'
import json, sys
level = json.load(open(sys.argv[1]))["levels"][0]
lag = level["latency"].get("schedule_lag", {})
rate = level["latency"]["rate"]
print("%-5s %-9s %6s %10.3f %10.3f %14s %-30s " % (sys.argv[2], "corescale", sys.argv[3],
      level["elapsed_s"], float(sys.argv[4]) / float(sys.argv[3]),
      "p99 %.2f ms" % lag.get("p99_ms", float("nan")),
      "kept" if rate["sustained"] else "fell behind (%d of %d sent)" % (rate["sent"], rate["due"])),
      end="")
PY
        rows
    done
done
