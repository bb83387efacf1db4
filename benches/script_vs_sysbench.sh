#!/usr/bin/env bash
# `run script` beside sysbench on MySQL/MariaDB: sysbench's own Lua test oltp_point_select
# (one point select by uniform random key a transaction) and a corescale script issuing the
# same statement, alternating ROUNDS times at each of CLIENTS (default 1 2 8) for
# SECONDS_EACH each. Prints
# transactions per second (target: corescale within 10% of sysbench, median of rounds),
# client CPU per transaction (each tool's whole process, from the kernel's accounting, and
# its user-space part) and
# p50/p99 (sysbench's from its --histogram rows, corescale's from its histograms) and peak
# memory (GNU time's; target at 8 clients: corescale at most 1.5x sysbench). Needs a
# MySQL/MariaDB URL in CORESCALE_TEST_MYSQL and sysbench on PATH; works in a database of its
# own, dropped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${CORESCALE_TEST_MYSQL:?set CORESCALE_TEST_MYSQL to a MySQL/MariaDB URL}"
ROUNDS=${ROUNDS:-3}
SECONDS_EACH=${SECONDS_EACH:-5}
CLIENTS=${CLIENTS:-1 2 8}
ROWS=10000
cargo build --release --quiet
work=$(mktemp -d)
database="cs_bench_sysbench_$$"
read -r host port user < <(python3 -c 'import sys, urllib.parse as u; p = u.urlsplit(sys.argv[1]); print(p.hostname, p.port or 3306, p.username or "root")' "$CORESCALE_TEST_MYSQL")
url=$(python3 -c 'import sys, urllib.parse as u; p = u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(path="/" + sys.argv[2])))' "$CORESCALE_TEST_MYSQL" "$database")
mysql_admin() { mysql -h "$host" -P "$port" -u "$user" -e "$1"; }
cleanup() {
    mysql_admin "DROP DATABASE IF EXISTS \`$database\`" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
mysql_admin "CREATE DATABASE \`$database\`"
sysbench oltp_point_select --mysql-host="$host" --mysql-port="$port" --mysql-user="$user" \
    --mysql-db="$database" --tables=1 --table-size=$ROWS prepare >/dev/null
cat >"$work/point_select.sql" <<SQL
\\set id random(1, $ROWS)
SELECT c FROM sbtest1 WHERE id = :id;
SQL
python3 - "$work" "$url" "$ROUNDS" "$SECONDS_EACH" "$host" "$port" "$user" "$database" "$CLIENTS" <<'PY'
import statistics, sys
sys.path.insert(0, "benches")
from beside import child_cpu, corescale_script
work, url, rounds, seconds, host, port, user, database = sys.argv[1:9]
rounds = int(rounds)
counts = [int(clients) for clients in sys.argv[9].split()]

def rank(pairs, percentile):
    """Nearest rank over (value, count) rows."""
    total = sum(count for _, count in pairs)
    wanted = -(-total * percentile // 100)
    seen = 0
    for value, count in pairs:
        seen += count
        if seen >= wanted:
            return value

def run_sysbench(clients):
    output, cpu, user_cpu, peak = child_cpu(["sysbench", "oltp_point_select", f"--mysql-host={host}",
                             f"--mysql-port={port}", f"--mysql-user={user}", f"--mysql-db={database}",
                             "--tables=1", "--table-size=10000", "--point-selects=1",
                             "--rand-type=uniform", f"--threads={clients}", f"--time={seconds}",
                             "--histogram=on", "run"])
    lines = output.splitlines()
    done = int(next(l for l in lines if l.strip().startswith("transactions:")).split()[1])
    tps = float(next(l for l in lines if l.strip().startswith("transactions:")).split("(")[1].split()[0])
    rows = [(float(l.split("|")[0]), int(l.split()[-1])) for l in lines if "|" in l and l.split("|")[0].strip()[:1].isdigit()]
    return tps, cpu / done, rank(rows, 50), rank(rows, 99), user_cpu / done, peak

def run_corescale(clients):
    # --force: more sessions than 8 a CPU is the point of a footprint's 128.
    return corescale_script(url, f"{work}/point_select.sql", clients, seconds, work, ["--force"])

results = {}
for _ in range(rounds):
    for clients in counts:
        for tool, run in [("sysbench", run_sysbench), ("corescale", run_corescale)]:
            results.setdefault((clients, tool), []).append(run(clients))

print(f"median of {rounds} alternating rounds, {seconds} s each, point select by uniform random key")
print("clients  sysbench tps  corescale tps  ratio  CPU us/xact sysbench  corescale  ratio"
      "  user us/xact sysbench  corescale  p50 ms sysbench  corescale  p99 ms sysbench  corescale"
      "  peak MB sysbench  corescale  ratio")
for clients in counts:
    theirs = [statistics.median(column) for column in zip(*results[(clients, "sysbench")])]
    ours = [statistics.median(column) for column in zip(*results[(clients, "corescale")])]
    print(f"{clients:7}  {theirs[0]:12.0f}  {ours[0]:13.0f}  {ours[0] / theirs[0]:5.2f}"
          f"  {1e6 * theirs[1]:20.1f}  {1e6 * ours[1]:9.1f}  {ours[1] / theirs[1]:5.2f}"
          f"  {1e6 * theirs[4]:21.1f}  {1e6 * ours[4]:9.1f}  {theirs[2]:15.3f}  {ours[2]:9.3f}"
          f"  {theirs[3]:15.3f}  {ours[3]:9.3f}  {theirs[5]:16.1f}  {ours[5]:9.1f}"
          f"  {ours[5] / theirs[5]:5.2f}")
PY
