#!/usr/bin/env bash
# Every input limit at its maximum, and just past it: wall time and peak memory of a release build.
#
#   cargo build --release && scripts/limits_at_max.sh [path/to/pcsim]
#
# Prints one line per case: exit code, seconds, peak resident memory (/usr/bin/time -v), and the
# first line of the error for refused inputs. Inputs are generated in a temporary folder. Figures
# depend on the machine: the README states those of the development machine (2 shared cores).
# A case still running after LIMIT_SECONDS (default 120) is killed: exit 137 and the time it had.
set -euo pipefail
PCSIM=${1:-${CARGO_TARGET_DIR:-target}/release/pcsim}
PCSIM=$(realpath "$PCSIM")
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (GNU time)" >&2; exit 2; }
SERVER=$(realpath "$(dirname "$0")/../tests/fuzz/script_server.py")
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
cd "$DIR"

SERVER="$SERVER" python3 - <<'EOF'
import json, os

def tools(n, prefix="t"):
    return json.dumps({"tools": [{"name": f"{prefix}{i}", "description": "Reads a file from the workspace.",
        "inputSchema": {"type": "object", "properties": {"path": {"type": "string", "description": "The path."}},
                        "required": ["path"]}} for i in range(n)]})

open("tools-max.json", "w").write(tools(10000))
open("tools-over.json", "w").write(tools(10001))
servers = lambda n: json.dumps({"mcpServers": {f"s{i}": {"command": "sh", "args": ["-c", "exit 0"]} for i in range(n)}})
open("config-max.json", "w").write(servers(256))
open("config-over.json", "w").write(servers(257))
entry = {"input_cost_per_token": 3e-6, "output_cost_per_token": 1.5e-5, "cache_read_input_token_cost": 3e-7,
         "cache_creation_input_token_cost": 3.75e-6, "litellm_provider": "anthropic", "mode": "chat",
         "max_input_tokens": 200000}
open("litellm-max.json", "w").write(json.dumps({f"claude-m{i}": entry for i in range(10000)}))
open("litellm-over.json", "w").write(json.dumps({f"claude-m{i}": entry for i in range(10001)}))
# A scenario with the tool list at its maximum (the 10,000-tool file) and a synthetic list at its
# maximum parameters (2,500 tools x 20 parameters = 50,000), and one tool more.
open("run-tools-max.toml", "w").write('name = "t"\nmodels = ["claude-opus-4.8"]\nstrategies = ["cached"]\n'
    '[tools]\nfiles = ["tools-max.json"]\n[session]\ncalls = 10\n')
open("run-synthetic-max.toml", "w").write('name = "t"\nmodels = ["claude-opus-4.8"]\nstrategies = ["cached"]\n'
    '[tools]\nsynthetic = { count = 2500, params = 20 }\n[session]\ncalls = 10\n')
open("run-synthetic-over.toml", "w").write('name = "t"\nmodels = ["claude-opus-4.8"]\nstrategies = ["cached"]\n'
    '[tools]\nsynthetic = { count = 2501, params = 20 }\n[session]\ncalls = 10\n')

def scenario(sessions, calls, runs, extra=""):
    return (f'name = "max"\nmodels = ["claude-opus-4.8"]\nstrategies = ["cached"]\nruns = {runs}\n'
            f'[tools]\nsynthetic = {{ count = 26, params = 4 }}\n[session]\ncalls = {calls}\n'
            f'tool_result_tokens = 20\noutput_tokens = 20\nfirst_user_tokens = 20\nsystem_tokens = 100\n'
            f'[sessions]\ncount = {sessions}\nevery_seconds = 1\n{extra}')

# Bills kept: sessions x calls x pairs = 2,000,000 (the maximum), and one session more.
open("bills-max.toml", "w").write(scenario(20000, 100, 1))
open("bills-over.toml", "w").write(scenario(20001, 100, 1))
# whatif keeps the baseline and the changed session: half the sessions.
open("bills-half.toml", "w").write(scenario(10000, 100, 1))
# Monte Carlo: runs x sessions x calls x pairs = 100,000,000 (the maximum), and one run more.
open("mc-max.toml", "w").write(scenario(1, 1000, 100000))
open("mc-over.toml", "w").write(scenario(1, 1000, 100001))
# Tool-list events: 110 events on a 9,000-tool list (990,000 listed tools), and 112 (over 1,000,000).
def events(n):
    t = ('name = "events"\nmodels = ["claude-opus-4.8"]\nstrategies = ["cached"]\n'
         '[tools]\nsynthetic = { count = 9000, params = 1 }\n[session]\ncalls = 200\n')
    return t + "".join(f'[[event]]\nat_call = {2 + i}\ndrop = ["synthetic_tool_{i + 1:02}"]\n' for i in range(n))
open("events-max.toml", "w").write(events(110))
open("events-over.toml", "w").write(events(112))
# compare simulates the scenario's pairs and the no-caching baseline (2 pairs here), whatif both
# sides (x 2), advise every candidate of the model (20 placements on claude-opus-4.8): each at the
# bills limit.
open("bills-compare-max.toml", "w").write(scenario(10000, 100, 1))
open("bills-whatif-max.toml", "w").write(scenario(5000, 100, 1))
open("bills-advise-max.toml", "w").write(scenario(1000, 100, 1))
# Monte Carlo at the simulated-calls limit for each command's pairs.
open("mc-compare-max.toml", "w").write(scenario(1, 1000, 50000))
open("mc-whatif-max.toml", "w").write(scenario(1, 1000, 25000))
open("mc-advise-max.toml", "w").write(scenario(1, 1000, 5000))
# The event-count limit: 10,000 events (alternately dropping and adding back one tool) on a
# 99-tool list (990,000 listed tools).
def many_events(n):
    t = ('name = "many"\nmodels = ["claude-opus-4.8"]\nstrategies = ["cached"]\n'
         f'[tools]\nsynthetic = {{ count = 99, params = 1 }}\n[session]\ncalls = {n + 2}\n')
    ev = []
    for i in range(n):
        # An added synthetic tool is numbered list length + 1000 x (event index + 1).
        if i % 2 == 0:
            ev.append(f'[[event]]\nat_call = {2 + i}\nadd_synthetic = {{ count = 1, params = 1 }}\n')
        else:
            ev.append(f'[[event]]\nat_call = {2 + i}\ndrop = ["synthetic_tool_{99 + 1000 * i}"]\n')
    return t + "".join(ev)
open("events-many.toml", "w").write(many_events(10000))
# The largest input of each kind in bytes (files are limited to 64 MiB): a tool file of 10,000
# tools with 6.4 KB descriptions, a LiteLLM file of 10,000 keys padded with ignored fields, a usage
# log of 64 MiB (377,772 calls).
words = "read write file path the a of to workspace server returns list directory content search query result".split()
desc = " ".join(words[j % len(words)] + str(j % 7) for j in range(900))[:6400]
open("tools-bytes-max.json", "w").write(json.dumps({"tools": [{"name": f"t{i}", "description": desc,
    "inputSchema": {"type": "object", "properties": {"path": {"type": "string", "description": "The path."}},
                    "required": ["path"]}} for i in range(10000)]}))
padded = dict(entry, notes="x" * 6000)
open("litellm-bytes-max.json", "w").write(json.dumps({f"claude-m{i}": padded for i in range(10000)}))
with open("log-max.jsonl", "w") as f:
    i = size = 0
    while True:
        conv, k = divmod(i, 1000)
        line = json.dumps({"model": "claude-opus-4-8", "timestamp": 1767225600 + conv * 100000 + k * 30,
            "usage": {"input_tokens": 50, "cache_read_input_tokens": 2000 + 300 * k if k else 0,
                      "cache_creation_input_tokens": 300 if k else 2000, "output_tokens": 200}}) + "\n"
        if size + len(line) >= 64 * 1024 * 1024:
            break
        f.write(line)
        size += len(line)
        i += 1
# A configuration at the server limit whose servers all answer: 256 scripted servers (python3,
# tests/fuzz/script_server.py) of 39 tools each (9,984 tools, under the 10,000-tool list limit).
def mcp_script(server):
    init = {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
            "serverInfo": {"name": f"s{server}", "version": "1"}}}
    tools = [{"name": f"s{server}_tool{k}", "description": "Reads a file from the workspace.",
              "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}
             for k in range(39)]
    return json.dumps(init) + "\n" + json.dumps({"jsonrpc": "2.0", "id": 2, "result": {"tools": tools}}) + "\n"
for i in range(256):
    open(f"server-{i}.jsonl", "w").write(mcp_script(i))
open("config-accepted-max.json", "w").write(json.dumps({"mcpServers": {f"s{i}": {"command": "python3",
    "args": [os.environ["SERVER"], os.path.abspath(f"server-{i}.jsonl")]} for i in range(256)}}))
# A usage log of 100,000 calls in 100 conversations (Anthropic Messages lines).
with open("log-100k.jsonl", "w") as f:
    for i in range(100000):
        conv, k = divmod(i, 1000)
        f.write(json.dumps({"model": "claude-opus-4-8", "timestamp": 1767225600 + conv * 100000 + k * 30,
            "usage": {"input_tokens": 50, "cache_read_input_tokens": 2000 + 300 * k if k else 0,
                      "cache_creation_input_tokens": 300 if k else 2000, "output_tokens": 200}}) + "\n")
EOF

run() {
    local name=$1
    shift
    local out
    out=$( { /usr/bin/time -v timeout -s KILL "${LIMIT_SECONDS:-120}" "$PCSIM" "$@" >/dev/null 2>"$DIR/err"; } 2>&1 || true)
    local code secs kb first
    code=$(grep -oP 'Exit status: \K[0-9]+' "$DIR/err" || true)
    secs=$(grep -oP 'Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): \K.*' "$DIR/err" || true)
    kb=$(grep -oP 'Maximum resident set size \(kbytes\): \K[0-9]+' "$DIR/err" || true)
    first=$(grep -m1 '^error' "$DIR/err" | cut -c1-150 || true)
    if grep -q 'Command terminated by signal 9' "$DIR/err"; then
        code=killed
        kb=0
        first="still running after ${LIMIT_SECONDS:-120} s"
    fi
    printf '%-22s exit %-6s %9s  %6s MB  %s\n' "$name" "${code:-?}" "$secs" "$((${kb:-0} / 1024))" "$first"
    : "$out"
}

echo "pcsim: $PCSIM ($(nproc) cores, $(date -u +%FT%TZ))"
run tools-max tools tools-max.json
run tools-over tools tools-over.json
run tools-bytes-max-1 tools tools-bytes-max.json --model claude-opus-4.8
run tools-bytes-max tools tools-bytes-max.json
run config-max config config-max.json --timeout-seconds 2
run config-over config config-over.json --timeout-seconds 2
run config-accepted-max config config-accepted-max.json --timeout-seconds 30
run litellm-max import-litellm litellm-max.json
run litellm-over import-litellm litellm-over.json
run litellm-bytes-max import-litellm litellm-bytes-max.json
run sweep-max sweep --max-tools 1000 --params 5
run sweep-max-250x20 sweep --max-tools 250 --params 20
run sweep-over-tools sweep --max-tools 1001 --params 1
run sweep-over-params sweep --max-tools 1000 --params 6
run run-tools-max run run-tools-max.toml
run run-synthetic-max run run-synthetic-max.toml
run run-synthetic-over run run-synthetic-over.toml
run run-bills-max run bills-max.toml --format json
run run-bills-over run bills-over.toml
run compare-bills-over compare bills-over.toml --strategy cached
run whatif-bills-over whatif bills-max.toml --at-call 50 --remove-tools synthetic_tool_01 --model claude-opus-4.8 --strategy cached
run advise-bills-over advise bills-max.toml
run run-mc-max run mc-max.toml
run run-mc-over run mc-over.toml
run events-max run events-max.toml
run events-over run events-over.toml
run replay-100k replay log-100k.jsonl --model claude-opus-4.8
run replay-bytes-max replay log-max.jsonl --model claude-opus-4.8
run compare-bills-max compare bills-compare-max.toml --strategy cached
run whatif-bills-max whatif bills-whatif-max.toml --at-call 50 --remove-tools synthetic_tool_01 --model claude-opus-4.8 --strategy cached
run advise-bills-max advise bills-advise-max.toml
run compare-mc-max compare mc-compare-max.toml --strategy cached
run whatif-mc-max whatif mc-whatif-max.toml --at-call 500 --remove-tools synthetic_tool_01 --model claude-opus-4.8 --strategy cached
run advise-mc-max advise mc-advise-max.toml
run compare-tools-max compare run-tools-max.toml
run advise-tools-max advise run-tools-max.toml
run compare-synthetic-max compare run-synthetic-max.toml
run advise-synthetic-max advise run-synthetic-max.toml
run compare-events-max compare events-max.toml
run whatif-events-max whatif events-max.toml --at-call 150 --remove-tools synthetic_tool_500 --model claude-opus-4.8 --strategy cached
run advise-events-max advise events-max.toml
run events-many run events-many.toml
