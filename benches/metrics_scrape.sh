#!/usr/bin/env bash
# What a scrape costs the run it watches: `corescale run db` on the local PostgreSQL at SESSIONS
# sessions for DURATION s, with `--metrics-listen` and a real Prometheus scraping it every
# second, and without either, alternating ROUNDS times. Per round: the level's rate of merit
# (the database's LIO/s) and statements per second. Medians, and the scraped runs' median over
# the unscraped runs' beside the unscraped rounds' own spread (max/min).
# The SLOB tables live in a database of their own, dropped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v prometheus >/dev/null || { echo "needs prometheus (apt-get install prometheus)"; exit 1; }
SESSIONS=${SESSIONS:-2}
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-10}
cargo build --release --quiet
corescale=$PWD/target/release/corescale
url="postgres://postgres@127.0.0.1:5432/cs_bench_scrape"
work=$(mktemp -d)
prometheus_pid=
cleanup() {
    [ -z "$prometheus_pid" ] || kill "$prometheus_pid" 2>/dev/null || true
    psql -q -h 127.0.0.1 -U postgres postgres -c 'DROP DATABASE IF EXISTS cs_bench_scrape' 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
psql -q -h 127.0.0.1 -U postgres postgres -c 'DROP DATABASE IF EXISTS cs_bench_scrape' -c 'CREATE DATABASE cs_bench_scrape'
"$corescale" db setup --target "$url" --schemas "$SESSIONS" --scale 32M >/dev/null
port=19187
cat > "$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: corescale
    static_configs:
      - targets: ['127.0.0.1:$port']
EOF
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
    --web.listen-address=127.0.0.1:19090 >/dev/null 2>&1 &
prometheus_pid=$!
sleep 2
run() {
    local out=$1
    shift
    "$corescale" run db --target "$url" --sweep "$SESSIONS" --duration "${DURATION}s" \
        --repeat 1 -q -o "$out" "$@"
    python3 - "$out" <<'PY'
import json, sys
level = json.load(open(sys.argv[1]))["levels"][0]
print(level["workload_rate"], level["workload_figures"]["statements"] / level["elapsed_s"])
PY
}
: > "$work/plain"
: > "$work/scraped"
for round in $(seq "$ROUNDS"); do
    run "$work/plain.json" >> "$work/plain"
    run "$work/scraped.json" --metrics-listen "$port" >> "$work/scraped"
    echo "round $round: plain $(tail -n1 "$work/plain"), scraped $(tail -n1 "$work/scraped")"
done
scrapes=$(curl -s "http://127.0.0.1:19090/api/v1/query?query=sum_over_time(up%5B1h%5D)" \
    | python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)')
python3 - "$work/plain" "$work/scraped" "$scrapes" <<'PY'
import statistics, sys
def rows(path):
    return [tuple(map(float, line.split())) for line in open(path) if line.strip()]
plain, scraped = rows(sys.argv[1]), rows(sys.argv[2])
for column, name in [(0, "LIO/s"), (1, "statements/s")]:
    p = [row[column] for row in plain]
    s = [row[column] for row in scraped]
    print(f"{name}: unscraped median {statistics.median(p):.0f} (spread {max(p)/min(p):.3f}x), "
          f"scraped median {statistics.median(s):.0f} (spread {max(s)/min(s):.3f}x), "
          f"scraped/unscraped {statistics.median(s)/statistics.median(p):.3f}")
print(f"Prometheus scraped the runs {sys.argv[3]} times (successful scrapes)")
PY
