#!/usr/bin/env bash
# Side-by-side check of corescale's bandwidth workload against a C STREAM-style triad built
# here with gcc -O3 from benches/stream/triad.c, on the same array size, one thread each,
# alternating ROUNDS times. Prints both medians and their ratio (target: corescale >= 0.90).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-3}
cargo build --release --quiet
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O3 -o "$work/triad" benches/stream/triad.c
# Same default as corescale: 4x the last-level cache per array.
array_bytes=$(./target/release/corescale host --json | python3 -c '
import json, sys
caches = json.load(sys.stdin)["topology"]["caches"]
print(4 * max(c["size_bytes"] for c in caches if c["name"] != "L1i"))')
c_rates=(); rust_rates=()
for _ in $(seq "$ROUNDS"); do
    c_rates+=("$("$work/triad" "$array_bytes" 10 2>/dev/null)")
    ./target/release/corescale run bandwidth -w 1 --array-size "$array_bytes" --job-size 1 \
        --repeat 10 -q -o "$work/bw.json"
    rust_rates+=("$(python3 -c '
import json, sys, statistics
level = json.load(open(sys.argv[1]))["levels"][0]
print("%.3f" % (statistics.median(s["ops"] / s["wall_s"] for s in level["samples"]) / 1e9))' "$work/bw.json")")
done
python3 - "${c_rates[*]}" "${rust_rates[*]}" "$array_bytes" <<'PY'
import statistics, sys
c = [float(x) for x in sys.argv[1].split()]
r = [float(x) for x in sys.argv[2].split()]
print(f"array size {int(sys.argv[3]) / 2**20:.0f} MiB x 3, one thread")
print(f"C triad (gcc -O3)   GB/s per round: {c}  median {statistics.median(c):.2f}")
print(f"corescale bandwidth GB/s per round: {r}  median {statistics.median(r):.2f}")
print(f"corescale / C = {statistics.median(r) / statistics.median(c):.3f} (target >= 0.90)")
PY
