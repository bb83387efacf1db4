"""What the benches that run corescale beside another tool share: each tool's CPU time from
the kernel's accounting of its process, and one `run script` level's figures."""
import json
import resource
import subprocess


def child_cpu(command):
    """Runs a command; returns its output and the CPU seconds it (and its children) used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return output, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def corescale_script(url, script, clients, seconds, work, extra=()):
    """One `run script` level: its tps, CPU seconds per transaction, p50 and p99 (ms)."""
    _, cpu = child_cpu(["./target/release/corescale", "run", "script", "--target", url,
                        "--file", script, *extra, "-w", str(clients), "--repeat", "1",
                        "--duration", f"{seconds}s", "-q", "-o", f"{work}/run.json"])
    level = json.load(open(f"{work}/run.json"))["levels"][0]
    figures = level["workload_figures"]
    return (figures["transactions_per_s"], cpu / figures["transactions"],
            level["latency"]["p50_ms"], level["latency"]["p99_ms"])
