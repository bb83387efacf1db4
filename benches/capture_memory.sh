#!/usr/bin/env bash
# A large log captured with bounded memory: a csvlog of SIZE_MB megabytes (default 1024) is
# made from a pgbench-like workload (SESSIONS sessions at once, the extended protocol with
# its parameters, connections and disconnections), then `corescale capture` reads it; its
# peak resident memory (GNU time's: Linux keeps a forked Python's high-water mark in wait4's
# across the exec) and time are printed. Target: under 200 MB.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE_MB=${SIZE_MB:-1024}
SESSIONS=${SESSIONS:-200}
cargo build --release --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 benches/common/pg_csvlog.py "$work/big.csv" "$SIZE_MB" "$SESSIONS"
python3 - "$PWD/target/release/corescale" "$work/big.csv" "$work/big.capture" <<'PY'
import os, sys, time
sys.path.insert(0, "benches")
from beside import child_cpu
began = time.monotonic()
_, _, _, peak = child_cpu([sys.argv[1], "capture", sys.argv[2], "-o", sys.argv[3], "-q"])
took = time.monotonic() - began
print("capture: %.1f s, peak memory %.0f MB, capture %.0f MB" % (took, peak, os.path.getsize(sys.argv[3]) / 2**20))
PY
