#!/usr/bin/env bash
# Writes the reports of every command on every example into OUT, one file per (command, example,
# format), so two builds can be compared byte for byte:
#   scripts/reports.sh /tmp/pcsim-before /tmp/before && scripts/reports.sh target/debug/pcsim /tmp/after
#   diff -r /tmp/before /tmp/after
# Exit codes and standard error are kept too (`.rc`, `.err`), so a changed error is a difference.
set -uo pipefail
BIN=$(realpath "$1"); OUT=$2
cd "$(dirname "$0")/.."
mkdir -p "$OUT"
rec() { # name, args...
  local name=$1; shift
  "$BIN" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"; echo $? >"$OUT/$name.rc"
}
for f in examples/*.toml; do
  e=$(basename "$f" .toml)
  for fmt in table csv json; do
    rec "run-$e-$fmt" run "$f" --format "$fmt"
    rec "compare-$e-$fmt" compare "$f" --format "$fmt"
    rec "whatif-$e-$fmt" whatif "$f" --at-call 5 --add-tools examples/tools/search-server.json --format "$fmt"
  done
  rec "run-$e-runs" run "$f" --runs 20 --format json
  rec "run-$e-calls" run "$f" --calls
  rec "compare-$e-strategies" compare "$f" --strategy cached --strategy explicit:tools+system+last --strategy automatic
  rec "advise-$e-table" advise "$f"
  rec "advise-$e-json" advise "$f" --format json
done
for fmt in table csv json; do
  rec "run-default-$fmt" run --format "$fmt"
  rec "run-models-$fmt" run --model gpt-5.6 --model claude-opus-4.8 --strategy none --strategy cached --strategy explicit:tools --format "$fmt"
  rec "models-$fmt" models --format "$fmt"
  rec "whatif-remove-$fmt" whatif examples/tool-change.toml --at-call 25 --remove-tools web_search,fetch_page,search_code --format "$fmt"
done
rec run-bad-model run --model nope
rec run-bad-strategy run --strategy explicit:often
rec compare-bad-strategy compare --strategy explicit:often
rec compare-only-auto compare --model claude-opus-4.8 --strategy automatic
rec run-unsupported run --model kimi-k3 --strategy explicit:tools
# Replay of every usage-log fixture: table and JSON, every call, a prefix with tool/system
# breakpoints (conversations share the prefix), best-effort caches with the content seed and with
# --seed, all logs at once, and a bad option.
for f in tests/fixtures/usage/*.json tests/fixtures/usage/*.jsonl; do
  e=$(basename "$f"); e=${e%.*}
  rec "replay-$e-table" replay "$f"
  rec "replay-$e-json" replay "$f" --format json --all-calls
  rec "replay-$e-prefix" replay "$f" --prefix-tokens 1000 --strategy explicit:tools+system+last --strategy cached --session-gap-minutes 10
  rec "replay-$e-seed" replay "$f" --model gpt-5.6 --model gemini-3.6-flash --model kimi-k3 --seed 7 --format json
  rec "replay-$e-besteffort" replay "$f" --model gemini-3.6-flash --model kimi-k3 --strategy cached
done
rec replay-all replay tests/fixtures/usage --format json
rec replay-bad-gap replay tests/fixtures/usage/two_sessions.jsonl --gap-seconds=-1
rec replay-all-table replay tests/fixtures/usage --all-calls
rec replay-all-models replay tests/fixtures/usage --model claude-opus-4.8 --model gpt-5.6 --strategy none --strategy cached --prefix-tokens 1500
rec replay-all-change replay tests/fixtures/usage --tool-tokens-delta 500 --invoice-usd 3
rec replay-all-change-json replay tests/fixtures/usage --model claude-opus-4.8 --tool-tokens-delta -200 --invoice-usd 3 --format json
rec replay-one-change replay tests/fixtures/usage/two_sessions.jsonl --tool-tokens-delta 300 --all-calls
