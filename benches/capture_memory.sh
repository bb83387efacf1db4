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
python3 benches/common/pg_csvlog.py "$work/big.csv" "$SIZE_MB" "$SESSIONS"
python3 - "$PWD/target/release/corescale" "$work/big.csv" "$work/big.capture" <<'PY'
import os, resource, subprocess, sys, time
began = time.monotonic()
subprocess.run([sys.argv[1], "capture", sys.argv[2], "-o", sys.argv[3], "-q"], check=True)
took = time.monotonic() - began
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print("capture: %.1f s, peak memory %.0f MB, capture %.0f MB" % (took, peak, os.path.getsize(sys.argv[3]) / 2**20))
PY
