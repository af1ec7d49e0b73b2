#!/usr/bin/env bash
# What the `tokenizers` cargo feature (embedded o200k_base, tiktoken-rs) costs: the size of the
# stripped binary (`--profile dist`) and the time of a clean build, with default features and with
# `--no-default-features`, each in a throwaway target dir of its own (deleted afterwards).
#
# A clean build is the whole dependency tree, so the figure depends on the machine and on its load:
# run it under the heavy-job lock on a quiet machine, and repeat it before comparing two figures:
#   flock /work/heavy.lock nice -n 10 scripts/tokenizers_feature_cost.sh [BASE_DIR]
# BASE_DIR (default /work/tmp-size) gets the suffixes -a (default features) and -b (none).
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${1:-/work/tmp-size}
measure() { # label, target dir, extra cargo flags...
  local label=$1 dir=$2
  shift 2
  rm -rf "$dir"
  local start end
  start=$(date +%s.%N)
  CARGO_TARGET_DIR=$dir cargo build --locked --quiet --profile dist --bin pcsim "$@"
  end=$(date +%s.%N)
  local size
  size=$(stat -c %s "$dir/dist/pcsim")
  printf '%-22s %10d bytes  %7.1f s clean build\n' "$label" "$size" "$(echo "$end - $start" | bc)"
  echo "$size $(echo "$end - $start" | bc)" >"$dir.result"
  rm -rf "$dir"
}
echo "pcsim $(git rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
measure "default features" "$BASE-a"
measure "--no-default-features" "$BASE-b" --no-default-features
read -r sa ta <"$BASE-a.result"
read -r sb tb <"$BASE-b.result"
rm -f "$BASE-a.result" "$BASE-b.result"
printf 'tokenizers feature: +%.2f MB stripped binary (%d -> %d bytes), +%.1f s clean build (%.1f -> %.1f s)\n' \
  "$(echo "($sa - $sb) / 1000000" | bc -l)" "$sb" "$sa" "$(echo "$ta - $tb" | bc)" "$tb" "$ta"
