"""What the benches that run corescale beside another tool share: each tool's CPU time from
the kernel's accounting of its process, and one `run script` level's figures."""
import json
import subprocess
import tempfile


def child_cpu(command):
    """Runs a command; returns its output, the CPU seconds it used, the part of them spent
    in its own code (user time: the rest is the kernel's, sending, receiving and waking up),
    and its peak resident memory in MB, as GNU time measures them (a forked Python's own
    memory would count in wait4's maximum, which Linux keeps across the exec)."""
    with tempfile.NamedTemporaryFile(mode="r") as figures:
        output = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", figures.name, *command],
                                check=True, capture_output=True, text=True).stdout
        user, system, peak_kb = figures.read().split()[-3:]
    return output, float(user) + float(system), float(user), int(peak_kb) / 1024


def corescale_script(url, script, clients, seconds, work, extra=()):
    """One `run script` level: its tps, CPU seconds per transaction, p50 and p99 (ms), user
    CPU seconds per transaction and peak memory (MB)."""
    _, cpu, user, peak = child_cpu(["./target/release/corescale", "run", "script", "--target", url,
                        "--file", script, *extra, "-w", str(clients), "--repeat", "1",
                        "--duration", f"{seconds}s", "-q", "-o", f"{work}/run.json"])
    level = json.load(open(f"{work}/run.json"))["levels"][0]
    figures = level["workload_figures"]
    return (figures["transactions_per_s"], cpu / figures["transactions"],
            level["latency"]["p50_ms"], level["latency"]["p99_ms"], user / figures["transactions"],
            peak)
