#!/usr/bin/env bash
# Builds corescale for every Linux database server: an x86_64 binary linked against glibc 2.17
# (RHEL/Oracle Linux 7 and later), checked, then bundled with its man pages and shell
# completions as dist/corescale-VERSION-x86_64-linux.tar.gz (+ .sha256), an RPM and a .deb.
#
#   bash scripts/dist.sh          # needs network access to PyPI and crates.io the first time
#
# Tools come from the package registries when missing: Zig and cargo-zigbuild (pip), cargo-deb
# and cargo-generate-rpm (cargo install). The Oracle workload is in this build: ODPI-C loads
# Oracle's client library (Instant Client) at run time, only for oracle:// targets, so the
# binary needs nothing of Oracle's elsewhere; the packages recommend Instant Client.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 0 ] || { echo "dist: no arguments expected, got '$1'" >&2; exit 2; }

target=x86_64-unknown-linux-gnu
glibc=2.17
max_bytes=$((16 * 1024 * 1024))

step() { echo "== $*"; }
fail() { echo "dist: $*" >&2; exit 1; }

step "tools"
if ! command -v cargo-zigbuild >/dev/null; then
    # A virtual environment (system Pythons refuse pip installs, PEP 668), at the target
    # directory's real path: it stays valid when `target` links to a build cache that another
    # clone filled (.ci/run).
    mkdir -p target
    tools="$(cd target && pwd -P)/dist-tools"
    "$tools/bin/python" -c '' 2>/dev/null || { rm -rf "$tools"; python3 -m venv "$tools"; }
    [ -x "$tools/bin/cargo-zigbuild" ] || "$tools/bin/pip" install --quiet ziglang cargo-zigbuild
    export PATH="$tools/bin:$PATH"
fi
command -v cargo-deb >/dev/null || cargo install --locked --quiet cargo-deb
command -v cargo-generate-rpm >/dev/null || cargo install --locked --quiet cargo-generate-rpm

step "portable binary: $target, glibc $glibc"
cargo zigbuild --release --locked --target "$target.$glibc"
binary="target/$target/release/corescale"
[ -x "$binary" ] || fail "no binary at $binary"

step "checks"
newest=$(objdump -T "$binary" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
[ "$(printf '%s\n%s\n' "$newest" "$glibc" | sort -V | tail -1)" = "$glibc" ] \
    || fail "the binary needs glibc $newest, more than $glibc"
echo "newest glibc symbol version: $newest (bound $glibc)"
bytes=$(stat -c %s "$binary")
[ "$bytes" -le "$max_bytes" ] || fail "the binary is $bytes bytes, over 16 MiB"
echo "size: $bytes bytes"
"$binary" --version
"$binary" version --json | grep -q '"oracle"' || fail "the binary has no Oracle workload"
"$binary" host >/dev/null
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$binary" run cpu -w 1 --repeat 1 --job-size 20M -q -o "$scratch/run.json"
[ -s "$scratch/run.json" ] || fail "the binary's short run wrote no result"

step "man pages and completions"
assets=target/dist
rm -rf "$assets"
mkdir -p "$assets/completions"
"$binary" generate-man "$assets/man"
"$binary" completions bash >"$assets/completions/corescale.bash"
"$binary" completions zsh >"$assets/completions/_corescale"
"$binary" completions fish >"$assets/completions/corescale.fish"
bash -n "$assets/completions/corescale.bash" || fail "the bash completion does not parse"

step "bundle"
version=$("$binary" version --json | sed -n 's/.*"version": "\(.*\)".*/\1/p')
name="corescale-$version-x86_64-linux"
rm -rf "dist/$name" "dist/$name.tar.gz" "dist/$name.tar.gz.sha256"
mkdir -p "dist/$name"
cp "$binary" README.md LICENSE "dist/$name/"
cp -r "$assets/man" "$assets/completions" "dist/$name/"
tar -C dist -czf "dist/$name.tar.gz" "$name"
(cd dist && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
rm -rf "dist/$name"

step "packages"
cargo deb --no-build --no-strip --target "$target" --output dist/ >/dev/null
cargo generate-rpm --target "$target" --output dist/ >/dev/null
ls -l dist/
