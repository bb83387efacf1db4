"""What the benches that run corescale beside another tool share: each tool's CPU time from
the kernel's accounting of its process, and one `run script` level's figures."""
import json
import resource
import subprocess


def child_cpu(command):
    """Runs a command; returns its output, the CPU seconds it (and its children) used, and
    the part of them spent in its own code (user time: the rest is the kernel's, sending,
    receiving and waking up)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    user = after.ru_utime - before.ru_utime
    return output, user + (after.ru_stime - before.ru_stime), user


def corescale_script(url, script, clients, seconds, work, extra=()):
    """One `run script` level: its tps, CPU seconds per transaction, p50 and p99 (ms), and
    user CPU seconds per transaction."""
    _, cpu, user = child_cpu(["./target/release/corescale", "run", "script", "--target", url,
                        "--file", script, *extra, "-w", str(clients), "--repeat", "1",
                        "--duration", f"{seconds}s", "-q", "-o", f"{work}/run.json"])
    level = json.load(open(f"{work}/run.json"))["levels"][0]
    figures = level["workload_figures"]
    return (figures["transactions_per_s"], cpu / figures["transactions"],
            level["latency"]["p50_ms"], level["latency"]["p99_ms"], user / figures["transactions"])
