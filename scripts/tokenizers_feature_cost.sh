#!/usr/bin/env bash
# What the `tokenizers` cargo feature (o200k_base compiled in by build.rs) costs: the size of the
# stripped binary (`--profile dist`) and the time of a clean build, with default features and with
# the `cli` feature alone. Each build is of the committed HEAD (a `git archive` copy, so edits in the
# work tree do not leak in), in a throwaway target dir of its own, deleted afterwards.
#
# A clean build is the whole dependency tree, so wall-clock time depends on the machine's load: the
# script also reports the CPU time (user + sys) of each build, which other jobs disturb much less.
# Run it under the heavy-job lock, and repeat it before comparing two figures:
#   flock /work/heavy.lock nice -n 10 scripts/tokenizers_feature_cost.sh [BASE_DIR]
# BASE_DIR (default /work/tmp-size) gets the suffixes -src, -a (default features) and -b (none).
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${1:-/work/tmp-size}
rm -rf "$BASE-src"
mkdir -p "$BASE-src"
git archive HEAD | tar -x -C "$BASE-src"
measure() { # label, target dir, extra cargo flags...
  local label=$1 dir=$2
  shift 2
  rm -rf "$dir"
  local t
  TIMEFORMAT='%R %U %S'
  t=$( { time (cd "$BASE-src" && CARGO_TARGET_DIR=$dir cargo build --locked --quiet --profile dist --bin pcsim "$@") ; } 2>&1 | tail -1)
  local size
  size=$(stat -c %s "$dir/dist/pcsim")
  read -r wall user sys <<<"$t"
  printf '%-22s %10d bytes  %7.1f s wall  %7.1f s CPU (user+sys)\n' "$label" "$size" "$wall" "$(echo "$user + $sys" | bc)"
  echo "$size $wall $(echo "$user + $sys" | bc)" >"$dir.result"
  rm -rf "$dir"
}
echo "pcsim $(git rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
# The program needs the `cli` feature (`--bin pcsim` is refused without it): the build without
# tokenizers keeps it.
measure "cli only" "$BASE-b" --no-default-features --features cli
measure "default features" "$BASE-a"
read -r sa wa ca <"$BASE-a.result"
read -r sb wb cb <"$BASE-b.result"
rm -rf "$BASE-a.result" "$BASE-b.result" "$BASE-src"
printf 'tokenizers feature: +%.2f MB stripped binary (%d -> %d bytes); clean build +%.1f s CPU (%.1f -> %.1f s), +%.1f s wall (%.1f -> %.1f s)\n' \
  "$(echo "($sa - $sb) / 1000000" | bc -l)" "$sb" "$sa" "$(echo "$ca - $cb" | bc)" "$cb" "$ca" \
  "$(echo "$wa - $wb" | bc)" "$wb" "$wa"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
