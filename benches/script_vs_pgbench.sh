#!/usr/bin/env bash
# `run script` beside pgbench on PostgreSQL, the same script files, alternating ROUNDS times at
# each of CLIENTS (default 1 2 8) for SECONDS_EACH each: a read-only select by random key, and pgbench's TPC-B
# read-write transaction. For each: transactions per second (target: corescale within 10% of
# pgbench, median of rounds), client CPU per transaction (corescale's whole process against
# pgbench's, from the kernel's accounting of each child, and the user-space part of it), and
# p50/p99 of the transactions'
# latency (pgbench's from its --log, corescale's from its histograms). pgbench runs in
# prepared mode, as corescale prepares every statement. Needs a PostgreSQL URL in
# CORESCALE_TEST_PG and pgbench on PATH (or PGBENCH); works in a database of its own, dropped
# at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
SECONDS_EACH=${SECONDS_EACH:-5}
CLIENTS=${CLIENTS:-1 2 8}
source benches/pgbench_database.sh script
# pgbench's TPC-B transaction, as its builtin script is written.
cp fuzz/inputs/script/tpcb.sql "$work/tpcb.sql"
python3 - "$work" "$url" "$ROUNDS" "$SECONDS_EACH" "$PGBENCH" "$CLIENTS" <<'PY'
import glob, os, statistics, sys
sys.path.insert(0, "benches")
from beside import child_cpu, corescale_script
work, url, rounds, seconds, pgbench = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
counts = [int(clients) for clients in sys.argv[6].split()]

def rank(values, percentile):
    values = sorted(values)
    index = max(1, -(-len(values) * percentile // 100)) - 1
    return values[int(index)]

def run_pgbench(script, clients):
    for old in glob.glob(f"{work}/log.*"):
        os.remove(old)
    output, cpu, user, _ = child_cpu([pgbench, "-n", "-M", "prepared", "-f", f"{work}/{script}.sql",
                             "-D", "scale=1", "-c", str(clients), "-j", str(clients), "-T", seconds,
                             "-l", "--log-prefix", f"{work}/log", url])
    tps = float(next(line for line in output.splitlines() if line.startswith("tps = ")).split()[2])
    done = int(next(line for line in output.splitlines()
                    if line.startswith("number of transactions actually processed")).split(":")[1].split("/")[0])
    times = [int(line.split()[2]) / 1000 for path in glob.glob(f"{work}/log.*")
             for line in open(path) if line.split()[2].isdigit()]
    return tps, cpu / done, rank(times, 50), rank(times, 99), user / done

def run_corescale(script, clients):
    return corescale_script(url, f"{work}/{script}.sql", clients, seconds, work, ["--set", "scale=1"])

results = {}
for _ in range(rounds):
    for script in ["select", "tpcb"]:
        for clients in counts:
            for tool, run in [("pgbench", run_pgbench), ("corescale", run_corescale)]:
                results.setdefault((script, clients, tool), []).append(run(script, clients))

print(f"median of {rounds} alternating rounds, {seconds} s each")
print("script  clients  pgbench tps  corescale tps  ratio  CPU us/xact pgbench  corescale  ratio"
      "  user us/xact pgbench  corescale  p50 ms pgbench  corescale  p99 ms pgbench  corescale")
for script in ["select", "tpcb"]:
    for clients in counts:
        theirs = [statistics.median(column) for column in zip(*results[(script, clients, "pgbench")])]
        ours = [statistics.median(column) for column in zip(*results[(script, clients, "corescale")])]
        print(f"{script:6}  {clients:7}  {theirs[0]:11.0f}  {ours[0]:13.0f}  {ours[0] / theirs[0]:5.2f}"
              f"  {1e6 * theirs[1]:19.1f}  {1e6 * ours[1]:9.1f}  {ours[1] / theirs[1]:5.2f}"
              f"  {1e6 * theirs[4]:20.1f}  {1e6 * ours[4]:9.1f}  {theirs[2]:14.3f}  {ours[2]:9.3f}"
              f"  {theirs[3]:14.3f}  {ours[3]:9.3f}")
PY
