#!/usr/bin/env bash
# A large log captured with bounded memory: a csvlog of SIZE_MB megabytes (default 1024) is
# made from a pgbench-like workload (SESSIONS sessions at once, the extended protocol with
# its parameters, connections and disconnections), then `corescale capture` reads it; its
# peak resident memory (wait4's ru_maxrss) and time are printed. Target: under 200 MB.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE_MB=${SIZE_MB:-1024}
SESSIONS=${SESSIONS:-200}
cargo build --release --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work/big.csv" "$SIZE_MB" "$SESSIONS" <<'PY'
import sys, datetime
path, size_mb, sessions = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
limit = size_mb << 20
start = datetime.datetime(2026, 11, 29, 8, 0, 0)
statements = [
    ('UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;', 2),
    ('SELECT abalance FROM pgbench_accounts WHERE aid = $1', 1),
    ('UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2;', 2),
    ('INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP);', 4),
]
written = 0
line = 0
with open(path, "w") as out:
    tick = 0
    while written < limit:
        for session in range(sessions):
            tick += 1
            at = (start + datetime.timedelta(microseconds=tick * 50)).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"
            sid = "6b0be61f.%x" % (session + (tick // 100000) * sessions)
            sql, count = statements[tick % len(statements)]
            params = ", ".join("$%d = '%d'" % (n + 1, (tick * 7919 + n) % 100000) for n in range(count))
            row = '%s,"app","shop",%d,"[local]",%s,%d,"UPDATE",2026-11-29 08:00:00 UTC,3/1,0,LOG,00000,"execute P_%d: %s","parameters: %s",,,,,,,,"pgbench","client backend",,0\n' % (
                at, 1000 + session, sid, tick, tick % 4, sql, params)
            out.write(row)
            written += len(row)
print("made %.0f MB" % (written / 2**20))
PY
python3 - "$PWD/target/release/corescale" "$work/big.csv" "$work/big.capture" <<'PY'
import os, resource, subprocess, sys, time
began = time.monotonic()
subprocess.run([sys.argv[1], "capture", sys.argv[2], "-o", sys.argv[3], "-q"], check=True)
took = time.monotonic() - began
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print("capture: %.1f s, peak memory %.0f MB, capture %.0f MB" % (took, peak, os.path.getsize(sys.argv[3]) / 2**20))
PY
