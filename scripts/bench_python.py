#!/usr/bin/env python3
"""Benchmark of the Python API (a measurement, not a test): its overhead beside the `pcsim` command
on the same work, and beside LiteLLM's `cost_per_token` and cacheeconomics' `simulate` when those
are installed (optional; said when not), then the fleet replay: calls per CPU-second, MB/s of logs,
and a Dask-partitioned replay on 1 and 2 worker processes.

    python -m venv /tmp/bench && /tmp/bench/bin/pip install target/python-ci/wheels/pcsim-*.whl \\
        "dask[distributed]" litellm cacheeconomics
    LITELLM_LOCAL_MODEL_COST_MAP=True /tmp/bench/bin/python scripts/bench_python.py

Run from the repository root; `--pcsim BIN` names the command to compare with (default
target/release/pcsim: `cargo build --release`). Times are medians of repeated runs (wall clock and,
where it matters, CPU time of this process and its children). docs/python.md quotes its output.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pcsim

ROOT = Path(__file__).resolve().parents[1]
GITHUB = ROOT / "tests" / "fixtures" / "reference" / "mcp" / "server-github.tools.json"
MC_SCENARIO = ROOT / "examples" / "default.toml"


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def median_times(fns, repeat: int):
    """Medians of several functions timed in turn (interleaved, so load from other work on a
    shared machine falls on all of them alike)."""
    times = [[] for _ in fns]
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t = time.perf_counter()
            fn()
            times[i].append(time.perf_counter() - t)
    return [statistics.median(t) for t in times]


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def own_cpu() -> float:
    return time.process_time()


def row(what: str, seconds: float, note: str = "") -> None:
    print(f"| {what} | {seconds * 1e3:,.2f} ms | {note} |")


def bench_tools(binary: str, repeat: int) -> None:
    print("\n## tools_cost of the GitHub capture (26 tools)\n")
    print("| what | median time per call | note |\n|---|---|---|")
    doc = json.loads(GITHUB.read_text())
    catalog = pcsim.Catalog()
    pcsim.tools_cost(doc)  # warm: the tokenizer loads once per process
    for models, label in (([], "six measured models"), (["gpt-5.6"], "gpt-5.6")):
        r = pcsim.tools_cost(doc, models=models, catalog=catalog)
        block = r.models[0].tool_block_tokens
        text = json.dumps(doc)
        native = pcsim._pcsim.tools_cost
        api, raw = median_times([lambda: pcsim.tools_cost(doc, models=models, catalog=catalog),
                                 lambda: native(catalog._native, [(text, "github")], models)], repeat)
        row(f"pcsim.tools_cost(dict), {label}", api,
            f"{r.models[0].model}: {block} tokens, {pcsim.usd(r.models[0].usd_per_call)} per call")
        row(f"native call only (JSON text in, JSON text out), {label}", raw,
            f"the Rust work; the Python layer adds {(api - raw) * 1e3:.2f} ms")
        args = [binary, "--quiet", "tools", str(GITHUB), "--format", "json"] + sum((["--model", m] for m in models), [])
        row(f"`pcsim tools FILE --format json` (new process), {label}",
            median_time(lambda: subprocess.run(args, check=True, capture_output=True), max(5, repeat // 5)),
            "process start and catalog load included")
    try:
        import litellm  # noqa: F401
        from litellm import cost_per_token, token_counter
    except ImportError:
        print("\nLiteLLM: not installed (pip install litellm), not measured.")
        return
    tools = doc["result"]["tools"] if "result" in doc else doc["tools"]
    openai = [{"type": "function", "function": {"name": t["name"], "description": t.get("description", ""),
                                                "parameters": t["inputSchema"]}} for t in tools]
    msgs = [{"role": "user", "content": "x"}]
    n = token_counter(model="gpt-4o", messages=msgs, tools=openai)
    row("LiteLLM token_counter(tools=...) (gpt-4o tokenizer)", median_time(
        lambda: token_counter(model="gpt-4o", messages=msgs, tools=openai), max(5, repeat // 5)), f"{n} tokens")
    row("LiteLLM cost_per_token(prompt_tokens=N) (a price lookup only)", median_time(
        lambda: cost_per_token(model="azure/gpt-5.6", prompt_tokens=n, completion_tokens=0), repeat),
        "no tool rendering, no per-model counts")


def bench_monte_carlo(binary: str, runs: int, repeat: int) -> None:
    print(f"\n## {runs:,}-run Monte Carlo of the default scenario (20 calls), claude-opus-4.8, cached\n")
    print("| what | median time | note |\n|---|---|---|")
    args = dict(models="claude-opus-4.8", strategies="cached", runs=runs, seed=1)
    r = pcsim.run(MC_SCENARIO, **args)
    calls = runs * 20
    t = median_time(lambda: pcsim.run(MC_SCENARIO, **args), repeat)
    row("pcsim.run(runs=N)", t, f"{calls / t / 1e6:.2f} M simulated calls/s; mean {pcsim.usd(r.results[0].montecarlo.mean_usd)}")
    cmd = [binary, "--quiet", "run", str(MC_SCENARIO), "--model", "claude-opus-4.8", "--strategy", "cached",
           "--runs", str(runs), "--seed", "1", "--format", "json"]
    t = median_time(lambda: subprocess.run(cmd, check=True, capture_output=True), repeat)
    row("`pcsim run --runs N --format json` (new process)", t, f"{calls / t / 1e6:.2f} M simulated calls/s")
    try:
        from cacheeconomics import simulate as ce
        from cacheeconomics.trace import Request, Segment
    except ImportError:
        print("\ncacheeconomics: not installed (pip install cacheeconomics), not measured.")
        return
    # The same session for cacheeconomics: tools (5,663 tokens on Opus 4.8 as pcsim renders the
    # 26 synthetic tools), system prompt, the growing conversation; breakpoints on tools, system and
    # the newest message (pcsim's `cached` on this model), 12 s apart, responses starting at 1.5 s.
    first = r.results[0].calls[0]
    tools_tokens = first.tool_block_tokens

    def session(sid: int):
        t0 = dt.datetime(2026, 7, 1, tzinfo=dt.timezone.utc)
        reqs, msgs = [], [250]
        for k in range(20):
            segs = [Segment("tools", "tools", tools_tokens, 0, "tools", True),
                    Segment("system", "system", 1800, 1, "system", True)]
            segs += [Segment(f"m{i}", "user", m, 2 + i, "", i == len(msgs) - 1) for i, m in enumerate(msgs)]
            sent = t0 + dt.timedelta(seconds=12 * k)
            reqs.append(Request(f"{sid}-{k}", sent, "claude-opus-4-8", {"input_tokens": 0, "output_tokens": 220},
                                segs, session=str(sid), target_id="anthropic/direct",
                                first_token_at=sent + dt.timedelta(seconds=1.5)))
            msgs = msgs + [220 + 900]
        return reqs

    one = session(1)
    sim = ce.simulate(one, "as-shipped")
    ce_buckets = [(u.cache_write_5m, u.cache_read) for u in sim.usages]
    ours = [(c.cache_write_tokens, c.cache_read_tokens) for c in r.results[0].calls]
    same = "the same write/read tokens on every call as pcsim" if ce_buckets == ours else "buckets differ from pcsim's"
    sessions = 200
    many = [q for s in range(sessions) for q in session(s)]
    t = median_time(lambda: ce.simulate(many, "as-shipped"), max(1, repeat // 2))
    row(f"cacheeconomics simulate(), {sessions} sessions x 20 calls", t,
        f"{sessions * 20 / t / 1e3:.1f} k calls/s ({same}); {runs:,} runs would take ~{runs * 20 / (sessions * 20 / t):.0f} s")


def write_fleet(binary: str, folder: Path, sessions: int, distinct: int = 100) -> None:
    """`distinct` session logs written by `pcsim run --usage-log` (a seed each: different gaps and
    message sizes), copied under new names up to `sessions` files (throughput does not depend on
    whether two files hold the same calls; writing each with the command would take minutes)."""
    made = []
    for k in range(1, min(distinct, sessions) + 1):
        path = folder / f"session-{k:05}.jsonl"
        subprocess.run([binary, "--quiet", "run", str(ROOT / "examples" / "explicit-vs-automatic.toml"),
                        "--model", "claude-opus-4.8", "--strategy", "cached", "--seed", str(k),
                        "--usage-log", str(path)], check=True, capture_output=True)
        made.append(path.read_bytes())
    for k in range(len(made) + 1, sessions + 1):
        (folder / f"session-{k:05}.jsonl").write_bytes(made[(k - 1) % len(made)])


def replay_chunk(files):
    return pcsim.replay_files(files, strategies=["cached", "none"])


def bench_fleet(binary: str, sessions: int, repeat: int) -> None:
    print(f"\n## Fleet replay: {sessions} session logs (one file each, 30 calls), strategies cached and none\n")
    with tempfile.TemporaryDirectory(prefix="pcsim-fleet-") as tmp:
        folder = Path(tmp)
        write_fleet(binary, folder, sessions)
        files = pcsim.log_files(folder)
        mb = sum(os.path.getsize(f) for f in files) / 1e6
        single = pcsim.replay(folder, strategies=["cached", "none"])
        calls = single.calls_logged
        print(f"{len(files)} files, {calls:,} calls, {mb:.2f} MB\n")
        print("| what | median wall | CPU | calls per CPU-second | MB/s of logs per CPU-second | total predicted (cached) |\n|---|---|---|---|---|---|")
        walls, cpus = [], []
        for _ in range(repeat):
            c, t = own_cpu(), time.perf_counter()
            single = pcsim.replay(folder, strategies=["cached", "none"])
            walls.append(time.perf_counter() - t)
            cpus.append(own_cpu() - c)
        cpu = statistics.median(cpus)
        total = pcsim.usd(single.results[0].predicted.cost_usd)
        print(f"| pcsim.replay, one process | {statistics.median(walls):.3f} s | {cpu:.3f} s | {calls / cpu:,.0f} | {mb / cpu:.1f} | {total} |")
        walls, cpus = [], []
        cmd = [binary, "--quiet", "replay", str(folder), "--strategy", "cached", "--strategy", "none", "--format", "json"]
        for _ in range(repeat):
            c, t = children_cpu(), time.perf_counter()
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            walls.append(time.perf_counter() - t)
            cpus.append(children_cpu() - c)
        cli_total = pcsim.usd(json.loads(out)["results"][0]["predicted"]["cost_usd"])
        cpu = statistics.median(cpus)
        print(f"| `pcsim replay FOLDER` | {statistics.median(walls):.3f} s | {cpu:.3f} s | {calls / cpu:,.0f} | {mb / cpu:.1f} | {cli_total} |")
        try:
            import distributed
        except ImportError:
            print("\nDask: not installed (pip install 'dask[distributed]'), the partitioned run not measured.")
            return
        print("\n| Dask LocalCluster | partitions | median wall | CPU of the workers | calls per wall-second | MB/s per wall-second | total predicted (cached) |\n|---|---|---|---|---|---|---|")
        for workers in (1, 2):
            with distributed.LocalCluster(n_workers=workers, processes=True, threads_per_worker=1,
                                          dashboard_address=None) as cluster, distributed.Client(cluster) as client:
                chunks = [files[i::4 * workers] for i in range(4 * workers)]
                client.gather(client.map(replay_chunk, chunks, pure=False))  # warm the workers
                walls, cpus = [], []
                for _ in range(repeat):
                    before = sum(client.run(time.process_time).values())
                    t = time.perf_counter()
                    parts = client.gather(client.map(replay_chunk, chunks, pure=False))
                    walls.append(time.perf_counter() - t)
                    cpus.append(sum(client.run(time.process_time).values()) - before)
                merged = pcsim.ReplayResult.merge(parts)
            wall = statistics.median(walls)
            print(f"| {workers} worker process{'es' if workers > 1 else ''} | {len(chunks)} | {wall:.3f} s | "
                  f"{statistics.median(cpus):.3f} s | {calls / wall:,.0f} | {mb / wall:.1f} | "
                  f"{pcsim.usd(merged.results[0].predicted.cost_usd)} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pcsim", default=str(ROOT / "target" / "release" / "pcsim"), help="the pcsim command")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--runs", type=int, default=10_000, help="Monte Carlo runs")
    ap.add_argument("--sessions", type=int, default=4000, help="session logs of the fleet replay")
    ap.add_argument("--only", choices=["tools", "montecarlo", "fleet"], help="one part only")
    a = ap.parse_args()
    os.chdir(ROOT)
    print(f"pcsim {pcsim.__version__} (Python {sys.version.split()[0]}), compared with {a.pcsim}; "
          f"{os.cpu_count()} CPUs (shared with other work: medians of {a.repeat} runs)")
    if a.only in (None, "tools"):
        bench_tools(a.pcsim, a.repeat)
    if a.only in (None, "montecarlo"):
        bench_monte_carlo(a.pcsim, a.runs, max(3, a.repeat // 4))
    if a.only in (None, "fleet"):
        bench_fleet(a.pcsim, a.sessions, max(3, a.repeat // 4))


if __name__ == "__main__":
    main()
