#!/usr/bin/env bash
# Capture speed beside pgreplay's parser: a synthetic log of SIZE_MB megabytes (default 200;
# benches/common/pg_csvlog.py) in each format, read by `corescale capture` and, for the two
# pgreplay reads (csvlog and stderr with its '%m|%u|%d|%c|' prefix), by `pgreplay -f` into
# its replay file, in alternating rounds (ROUNDS, default 2). jsonlog and MySQL's slow log
# are corescale's alone: its MB/s there against its csvlog's. Printed per read: wall and CPU
# seconds (user + system, GNU time's), MB/s of wall time, peak resident memory. Target: corescale
# at least as fast as pgreplay on the same log, in bounded memory.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE_MB=${SIZE_MB:-200}
ROUNDS=${ROUNDS:-2}
[ -x /usr/bin/time ] || { echo "needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 1; }
command -v pgreplay >/dev/null || { echo "pgreplay is needed (Debian's package)"; exit 1; }
cargo build --release --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for format in csv stderr json slow; do
    python3 benches/common/pg_csvlog.py "$work/log.$format" "$SIZE_MB" 200 "$format" >/dev/null
done
python3 - "$PWD/target/release/corescale" "$work" "$ROUNDS" <<'PY'
import os, sys, time
sys.path.insert(0, "benches")
from beside import child_cpu
corescale, work, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])

def timed(command):
    """Wall and CPU (user + system) seconds and peak resident MB."""
    began = time.monotonic()
    _, cpu, _, peak = child_cpu(command)
    return time.monotonic() - began, cpu, peak

reads = {
    "csv": [("corescale", [corescale, "capture", "LOG", "-o", "OUT", "-q"]),
            ("pgreplay", ["pgreplay", "-f", "-c", "-o", "OUT", "LOG"])],
    "stderr": [("corescale", [corescale, "capture", "LOG", "-o", "OUT", "-q"]),
               ("pgreplay", ["pgreplay", "-f", "-o", "OUT", "LOG"])],
    "json": [("corescale", [corescale, "capture", "LOG", "-o", "OUT", "-q"])],
    "slow": [("corescale", [corescale, "capture", "LOG", "-o", "OUT", "-q"])],
}
print("| round | log | tool | MB | wall s | CPU s | MB/s | peak MB |")
print("|---|---|---|---|---|---|---|---|")
for round in range(1, rounds + 1):
    for log, tools in reads.items():
        path = "%s/log.%s" % (work, log)
        size = os.path.getsize(path) / 2**20
        # Alternating: each round starts with the other tool.
        for tool, command in (tools if round % 2 else tools[::-1]):
            out = "%s/out.%s" % (work, tool)
            command = [out if part == "OUT" else path if part == "LOG" else part for part in command]
            wall, cpu, peak = timed(command)
            os.remove(out)
            print("| %d | %s | %s | %.0f | %.2f | %.2f | %.1f | %.0f |" % (
                round, log, tool, size, wall, cpu, size / wall, peak))
PY
