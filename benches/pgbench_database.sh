# Sourced by the benches that run beside pgbench: builds corescale, makes a work folder and a
# database of the bench's own (named after $1) with pgbench's tables at scale 1, both removed
# when the bench exits; sets $work, $database, $url and $PGBENCH. Needs CORESCALE_TEST_PG.
: "${CORESCALE_TEST_PG:?set CORESCALE_TEST_PG to a PostgreSQL URL}"
PGBENCH=${PGBENCH:-pgbench}
cargo build --release --quiet
work=$(mktemp -d)
database="cs_bench_$1_$$"
base="$CORESCALE_TEST_PG"
url=$(python3 -c 'import sys, urllib.parse as u; p = u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(path="/" + sys.argv[2])))' "$base" "$database")
cleanup() {
    psql "$base" -qc "DROP DATABASE IF EXISTS \"$database\" WITH (FORCE)" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
psql "$base" -qc "CREATE DATABASE \"$database\"" >/dev/null
"$PGBENCH" -i -q -s 1 "$url" >/dev/null 2>&1
# pgbench's select-only transaction, as its builtin script is written.
printf '%s\n' '\set aid random(1, 100000 * :scale)' 'SELECT abalance FROM pgbench_accounts WHERE aid = :aid;' >"$work/select.sql"
