#!/usr/bin/env bash
# The client's footprint beside pgbench at SESSIONS sessions on PostgreSQL (default 96: the
# server's default max_connections is 100): peak resident memory of each tool's process, and
# the wall time of a run of one transaction per session, connecting included (start to the
# first statements answered, and out). Targets (issue 39, at 128 sessions): memory within 2x
# pgbench's, start to first statement under 0.3 s. Needs a PostgreSQL URL in
# CORESCALE_TEST_PG and pgbench on PATH (or PGBENCH); works in a database of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
SESSIONS=${SESSIONS:-96}
source benches/pgbench_database.sh footprint
# One tool in a process of its own: its peak RSS (KiB) and wall seconds.
measure() {
    python3 - "$@" <<'PY'
import resource, subprocess, sys, time
started = time.monotonic()
subprocess.run(sys.argv[1:], check=True, capture_output=True)
wall = time.monotonic() - started
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, f"{wall:.3f}")
PY
}
read -r pgbench_kib pgbench_s < <(measure "$PGBENCH" -n -M prepared -f "$work/select.sql" -D scale=1 -c "$SESSIONS" -j 2 -t 1 "$url")
read -r corescale_kib corescale_s < <(measure ./target/release/corescale run script --target "$url" --file "$work/select.sql" --set scale=1 -w "$SESSIONS" --force --repeat 1 --job-size 1 -q -o "$work/run.json")
echo "$SESSIONS sessions, one transaction each:"
echo "  pgbench    peak RSS $((pgbench_kib / 1024)) MiB, wall ${pgbench_s} s"
echo "  corescale  peak RSS $((corescale_kib / 1024)) MiB, wall ${corescale_s} s"
python3 -c 'import sys; print(f"  memory ratio {int(sys.argv[1]) / int(sys.argv[2]):.1f}x (target: at most 2x)")' "$corescale_kib" "$pgbench_kib"
