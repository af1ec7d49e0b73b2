#!/bin/sh
# Regenerates the chart images shown in the README from the README's own example commands:
#   pcsim run examples/default.toml --out <tmp> --chart-size 1200x750
#   pcsim sweep --out <tmp> --chart-size 1200x750
# and copies the charts the README shows into docs/img/. Output is byte-identical on every machine
# (embedded font, deterministic PNG encoder), so `git diff` shows a change only when the charts do.
#
# Usage: docs/make-images.sh            (builds and runs the release binary)
#        PCSIM=path/to/pcsim docs/make-images.sh   (uses an existing binary)
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "${PCSIM:-}" ]; then
    cargo build --quiet --release
    PCSIM=${CARGO_TARGET_DIR:-target}/release/pcsim
fi
"$PCSIM" run examples/default.toml --out "$tmp" --chart-size 1200x750 >/dev/null
"$PCSIM" sweep --out "$tmp" --chart-size 1200x750 >/dev/null
mkdir -p docs/img
for name in cumulative-by-call.png per-call-claude-opus-4.8-none.png per-call-claude-opus-4.8-cached.png \
    sweep-tokens.png; do
    cp "$tmp/$name" "docs/img/$name"
    echo "docs/img/$name"
done
