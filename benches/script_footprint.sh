#!/usr/bin/env bash
# The client's footprint beside pgbench at SESSIONS sessions on PostgreSQL (default 96: the
# server's default max_connections is 100): peak resident memory of each tool's process, and
# the time from its start to its first statement, read from the server's clock (each session
# runs one transaction that inserts clock_timestamp(); the earliest is the first statement).
# BUSY=1 runs it beside a CPU hog (issue 53: under 0.3 s on an idle or a busy host).
# Then each tool's peak memory over DURATION seconds (default 3) of pgbench's TPC-B
# transaction (7 statements, each timed by corescale) at the same sessions. Targets (issue 39, at 128 sessions): memory
# within 2x pgbench's, start to first statement under 0.3 s. Needs a PostgreSQL URL in CORESCALE_TEST_PG (on this host: both clocks are
# one) and pgbench on PATH (or PGBENCH); works in a database of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
SESSIONS=${SESSIONS:-96}
DURATION=${DURATION:-3}
# ROUNDS (default 1): how many times the one-transaction part runs.
# Peak RSS comes from GNU time: a child of this script's python would carry python's own
# high-water mark through its exec (Linux keeps ru_maxrss across exec).
[ -x /usr/bin/time ] || { echo "needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 1; }
source benches/pgbench_database.sh footprint
psql "$url" -qc "CREATE TABLE first_statement (at timestamptz NOT NULL)" >/dev/null
printf '%s\n' 'INSERT INTO first_statement (at) VALUES (clock_timestamp());' >"$work/first.sql"
# One tool in a process of its own: its peak RSS (KiB), wall seconds, and seconds from its
# start to its first statement.
measure() {
    psql "$url" -qc "TRUNCATE first_statement" >/dev/null
    python3 - "$url" "$@" <<'PY'
import os, subprocess, sys, tempfile, time
url, command = sys.argv[1], sys.argv[2:]
peak = tempfile.NamedTemporaryFile()
began_wall, began = time.time(), time.monotonic()
subprocess.run(["/usr/bin/time", "-f", "%M", "-o", peak.name, *command], check=True, capture_output=True)
wall = time.monotonic() - began
first = subprocess.run(["psql", url, "-Atc", "SELECT extract(epoch FROM min(at)) FROM first_statement"],
                       check=True, capture_output=True, text=True).stdout.strip()
print(open(peak.name).read().strip(), f"{wall:.3f}", f"{float(first) - began_wall:.3f}")
PY
}
# The tools alternate, a second apart; with BUSY=1, beside a CPU hog (one busy process).
if [ "${BUSY:-0}" = 1 ]; then
    yes >/dev/null &
    hog=$!
    trap 'kill $hog 2>/dev/null; cleanup' EXIT
    echo "beside a CPU hog (pid $hog):"
fi
for _ in $(seq "${ROUNDS:-1}"); do
    sleep 1
    read -r pgbench_kib pgbench_s pgbench_first < <(measure "$PGBENCH" -n -M prepared -f "$work/first.sql" -c "$SESSIONS" -j 2 -t 1 "$url")
    read -r corescale_kib corescale_s corescale_first < <(measure ./target/release/corescale run script --target "$url" --file "$work/first.sql" -w "$SESSIONS" --force --repeat 1 --job-size 1 -q -o "$work/run.json")
    echo "$SESSIONS sessions, one transaction each:"
    echo "  pgbench    peak RSS $((pgbench_kib / 1024)) MiB, start to first statement ${pgbench_first} s, wall ${pgbench_s} s"
    echo "  corescale  peak RSS $((corescale_kib / 1024)) MiB, start to first statement ${corescale_first} s, wall ${corescale_s} s"
    python3 -c 'import sys; print(f"  memory ratio {int(sys.argv[1]) / int(sys.argv[2]):.2f}x (target: at most 2x); corescale first statement after {sys.argv[3]} s (target: under 0.3 s)")' "$corescale_kib" "$pgbench_kib" "$corescale_first"
done
# A longer run: DURATION s of pgbench's TPC-B transaction, each tool in a process of its own.
tpcb_kib() {
    /usr/bin/time -f %M -o "$work/peak" "$@" >/dev/null 2>&1
    cat "$work/peak"
}
pgbench_tpcb=$(tpcb_kib "$PGBENCH" -n -M prepared -f fuzz/inputs/script/tpcb.sql -D scale=1 -c "$SESSIONS" -j 2 -T "$DURATION" "$url")
corescale_tpcb=$(tpcb_kib ./target/release/corescale run script --target "$url" --file fuzz/inputs/script/tpcb.sql --set scale=1 -w "$SESSIONS" --force --repeat 1 --duration "${DURATION}s" -q -o "$work/tpcb.json")
echo "$SESSIONS sessions, pgbench's TPC-B for $DURATION s:"
echo "  pgbench    peak RSS $((pgbench_tpcb / 1024)) MiB"
echo "  corescale  peak RSS $((corescale_tpcb / 1024)) MiB"
python3 -c 'import sys; print(f"  memory ratio {int(sys.argv[1]) / int(sys.argv[2]):.2f}x")' "$corescale_tpcb" "$pgbench_tpcb"
