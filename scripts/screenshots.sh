#!/usr/bin/env bash
# Renders what a reader of `report` sees, for review: the page of the three CERN
# test_cpu_parallel anchor sweeps and the page of one small local run, as PNG at 1400 and
# 700 px wide (the whole page, in one tall image) and as printed A4 PDF pages (one PNG each).
#
#   bash scripts/screenshots.sh [OUT_DIR]     # default: target/screenshots
#
# Needs Chromium (`apt-get install chromium`, or CORESCALE_CHROMIUM naming a binary) and
# pdftoppm (`apt-get install poppler-utils`). Builds the release binary if needed.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-target/screenshots}"
mkdir -p "$out"
chromium="${CORESCALE_CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}"
[ -n "$chromium" ] || { echo "error: no Chromium: apt-get install chromium, or set CORESCALE_CHROMIUM" >&2; exit 2; }
command -v pdftoppm >/dev/null || { echo "error: no pdftoppm: apt-get install poppler-utils" >&2; exit 2; }

cargo build --release --quiet
corescale=target/release/corescale
anchor=tests/fixtures/anchor

echo "== the anchor page (RAC52, RAC54, RAC55)"
args=()
for server in RAC52 RAC54 RAC55; do
    file="$anchor/test_cpu_parallel_rust_$server.csv"
    args+=("$file" --label "$file=$server")
done
"$corescale" report "${args[@]}" --cores RAC52=20/40 --cores RAC54=8/16 --cores RAC55=16/32 \
    -q --html "$out/anchor.html"

echo "== a small local run's page (cpu, 1 and 2 workers)"
"$corescale" run cpu --sweep 1,2 --repeat 3 --job-size 20M --force -q -o "$out/small.json"
"$corescale" report "$out/small.json" -q --html "$out/small.html"

# The page's height at a width, read by Chromium itself, so the image holds the whole page.
page_height() {
    local page="$1" width="$2" probe
    probe="$(mktemp --suffix=.html -p "$out")"
    sed 's#</body>#<script>addEventListener("load",()=>{document.title="H"+document.documentElement.scrollHeight})</script></body>#' \
        "$page" >"$probe"
    "$chromium" --headless --no-sandbox --disable-gpu --window-size="$width,1000" \
        --virtual-time-budget=5000 --dump-dom "file://$PWD/$probe" 2>/dev/null \
        | sed -n 's#.*<title>H\([0-9]*\)</title>.*#\1#p' | head -n 1
    rm -f "$probe"
}

for name in anchor small; do
    page="$PWD/$out/$name.html"
    for width in 1400 700; do
        height="$(page_height "$out/$name.html" "$width")"
        "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
            --window-size="$width,${height:-4000}" --virtual-time-budget=5000 \
            --screenshot="$out/$name-$width.png" "file://$page" 2>/dev/null
        echo "wrote $out/$name-$width.png (${height:-4000} px tall)"
    done
    "$chromium" --headless --no-sandbox --disable-gpu --no-pdf-header-footer \
        --virtual-time-budget=5000 --print-to-pdf="$out/$name.pdf" "file://$page" 2>/dev/null
    rm -f "$out/$name"-page-*.png
    pdftoppm -r 60 -png "$out/$name.pdf" "$out/$name-page"
    echo "wrote $out/$name.pdf ($(ls "$out/$name"-page-*.png | wc -l) pages, as $out/$name-page-*.png)"
done
