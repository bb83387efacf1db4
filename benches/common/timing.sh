# Shell helpers the benchmark scripts source.

# Runs a command, its output discarded; prints its wall time in seconds, or fails naming it.
seconds() {
    local start
    start=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; return 1; }
    echo "$(date +%s.%N) - $start" | bc
}
