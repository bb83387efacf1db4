#!/usr/bin/env bash
# How long `run script --find` takes beside the sweep a DBA would run to reach the same
# precision without it, on the known answer of tests/db/search.rs: a transaction that holds
# an advisory lock 2 ms (one at a time). The search for p99 <= 50 ms runs first; the sweep
# then offers rates 5% apart (--find-precision's default) from half the closed-loop capacity,
# where the search starts, up to the search's broken rate, each level long enough for 1,000
# responses at the lowest rate (what a probe needs for p99), with the sessions the search's
# last probe used. Both are timed by the wall clock, side by side, ROUNDS times (default 1),
# and the sweep's largest rate that kept p99 <= 50 ms (by its p99 estimate, with no interval)
# is printed beside the search's bracket. Needs CORESCALE_TEST_PG; works in a database of
# its own (the lock is the database's).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${CORESCALE_TEST_PG:?set CORESCALE_TEST_PG to a PostgreSQL URL}"
cargo build --release --quiet
work=$(mktemp -d)
database="cs_bench_search_$$"
base="$CORESCALE_TEST_PG"
url=$(python3 -c 'import sys, urllib.parse as u; p = u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(path="/" + sys.argv[2])))' "$base" "$database")
trap 'psql "$base" -qc "DROP DATABASE IF EXISTS \"$database\" WITH (FORCE)" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
psql "$base" -qc "CREATE DATABASE \"$database\"" >/dev/null
printf '%s\n' '\startpipeline' 'BEGIN;' 'SELECT pg_advisory_xact_lock(770077);' \
    'SELECT pg_sleep(0.002);' 'COMMIT;' '\endpipeline' >"$work/lock.sql"
corescale=./target/release/corescale
for round in $(seq "${ROUNDS:-1}"); do
    began=$(date +%s.%N)
    "$corescale" run script --target "$url" --file "$work/lock.sql" --find 'p99<=50ms' -q -o "$work/search.json" >/dev/null
    search_s=$(python3 -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$began")
    # The sweep's rates and length from the search's own record.
    read -r rates duration sessions < <(python3 - "$work/search.json" <<'PY'
import json, math, sys
search = json.load(open(sys.argv[1]))["search"]
start, broken = 0.5 * search["capacity_per_s"], search["broken_rate"]
steps = math.ceil(math.log(broken / start) / math.log(1.05)) + 1
rates = [start * 1.05 ** k for k in range(steps)]
print(",".join(f"{rate:.1f}" for rate in rates), f"{math.ceil(1000 / start)}s", search["probes"][-1]["sessions"])
PY
)
    began=$(date +%s.%N)
    "$corescale" run script --target "$url" --file "$work/lock.sql" -w "$sessions" --rate "$rates" \
        --duration "$duration" --repeat 1 -q -o "$work/sweep.json" >/dev/null
    sweep_s=$(python3 -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$began")
    python3 - "$work/search.json" "$work/sweep.json" "$search_s" "$sweep_s" "$round" <<'PY'
import json, sys
search = json.load(open(sys.argv[1]))["search"]
levels = json.load(open(sys.argv[2]))["levels"]
search_s, sweep_s = float(sys.argv[3]), float(sys.argv[4])
kept = [l["latency"]["rate"]["target_per_s"] for l in levels
        if l["latency"]["p99_ms"] <= 50 and l["latency"]["rate"]["sustained"]]
print(f"round {sys.argv[5]}:")
print(f"  search  {search_s:6.1f} s: {len(search['probes'])} probes and a 3 s capacity level; "
      f"kept {search['kept_rate']:.0f}/s, broken {search['broken_rate']:.0f}/s ({search['stopped']})")
print(f"  sweep   {sweep_s:6.1f} s: {len(levels)} levels 5% apart; largest kept (p99 estimate) "
      f"{max(kept) if kept else float('nan'):.0f}/s")
print(f"  the search took {search_s / sweep_s:.2f} of the sweep's time")
PY
done
