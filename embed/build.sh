#!/usr/bin/env bash
# Builds the embeddable flows' bundle (docs/embed.md) into target/site/embed/:
#   boot.js              the module the flow page loads (starts the WebAssembly)
#   gable_embed.js       wasm-bindgen's glue (--target web)
#   gable_embed_bg.wasm  the four flows, optimised for size
#   embed.css            the flows' styles (style/embed.css)
# The server reads these at start-up and serves them under /embed/assets/{version}/.
# Cargo builds into target/embed (its own target dir: it never waits on the server's
# build lock). Needs the wasm32 target, wasm-bindgen-cli and binaryen's wasm-opt
# (.ci/install-tools; .ci/env puts them on PATH).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=.ci/env
source .ci/env

OUT=target/site/embed
WASM=target/embed/wasm32-unknown-unknown/wasm-release/gable_embed.wasm

run() { # prints a command, then runs it
    printf '+ %s\n' "$*"
    "$@"
}

run env CARGO_TARGET_DIR=target/embed cargo build -p gable-embed --lib --target wasm32-unknown-unknown --profile wasm-release

mkdir -p "$OUT"
# Only the bundle's four files: nothing stale is left for the server to serve.
find "$OUT" -mindepth 1 -maxdepth 1 ! -name boot.js ! -name gable_embed.js ! -name gable_embed_bg.wasm ! -name embed.css -exec rm -rf {} +

run wasm-bindgen --target web --no-typescript --out-dir "$OUT" --out-name gable_embed "$WASM"
run wasm_opt_size "$OUT/gable_embed_bg.wasm" "$OUT/gable_embed_bg.wasm"
run cp embed/boot.js "$OUT/boot.js"
run cp style/embed.css "$OUT/embed.css"

raw=$(wc -c <"$OUT/gable_embed_bg.wasm")
gz=$(gzip -9 -c "$OUT/gable_embed_bg.wasm" | wc -c)
printf 'gable_embed_bg.wasm: %d bytes raw, %d bytes gzipped (%d KB; budget 200 KB)\n' "$raw" "$gz" $(((gz + 1023) / 1024))
for f in boot.js gable_embed.js embed.css; do
    printf '%s: %d bytes raw, %d bytes gzipped\n' "$f" "$(wc -c <"$OUT/$f")" "$(gzip -9 -c "$OUT/$f" | wc -c)"
done
ls -l "$OUT"
