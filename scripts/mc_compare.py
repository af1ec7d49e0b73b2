#!/usr/bin/env python3
"""Monte Carlo of two pcsim builds on every example, side by side.

    scripts/mc_compare.py OLD_PCSIM NEW_PCSIM [RUNS] [SEED]

Runs `pcsim -q run EXAMPLE --runs RUNS --seed SEED --format json` with each binary on every
examples/*.toml (from the repository root) and prints a Markdown table of each (example, model,
strategy) whose total varies between runs: the mean total with its 95% interval from each build,
the difference, and z = difference / sqrt(se_old^2 + se_new^2) (se = interval half-width / 1.96).
A row agrees when the two intervals overlap and |z| < 1.96 (the difference is within what two independent samples of RUNS runs give). Results
that do not vary between runs are compared exactly and counted. Used for the rand/statrs upgrade
(docs/upgrade-note.md).
"""
import glob
import json
import math
import subprocess
import sys


def run(binary, example, runs, seed):
    out = subprocess.run(
        [binary, "-q", "run", example, "--runs", str(runs), "--seed", str(seed), "--format", "json"],
        check=True, capture_output=True, text=True,
    ).stdout
    return {(r["model"], r["strategy"]): r["montecarlo"] for r in json.loads(out)["results"]}


def main():
    old_bin, new_bin = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    print(f"| example | model | strategy | old mean [95% CI] | new mean [95% CI] | new - old | z | agree |")
    print("|---|---|---|---|---|---|---|---|")
    fixed_same = fixed_differ = varying = agree = 0
    worst = 0.0
    for example in sorted(glob.glob("examples/*.toml")):
        old, new = run(old_bin, example, runs, seed), run(new_bin, example, runs, seed)
        assert old.keys() == new.keys(), (example, old.keys() ^ new.keys())
        for key in old:
            o, n = old[key], new[key]
            if o["ci95_high_usd"] == o["ci95_low_usd"] and n["ci95_high_usd"] == n["ci95_low_usd"]:
                if o["mean_usd"] == n["mean_usd"]:
                    fixed_same += 1
                else:
                    fixed_differ += 1
                    print(f"| {example} | {key[0]} | {key[1]} | {o['mean_usd']:.6f} (fixed) | {n['mean_usd']:.6f} (fixed) | | | NO |")
                continue
            varying += 1
            se = lambda m: (m["ci95_high_usd"] - m["ci95_low_usd"]) / (2 * 1.96)
            d = n["mean_usd"] - o["mean_usd"]
            s = math.hypot(se(o), se(n))
            z = d / s if s > 0 else (0.0 if d == 0 else math.inf)
            overlap = o["ci95_low_usd"] <= n["ci95_high_usd"] and n["ci95_low_usd"] <= o["ci95_high_usd"]
            ok = overlap and abs(z) < 1.96
            agree += ok
            worst = max(worst, abs(z))
            name = example.removeprefix("examples/")
            print(
                f"| {name} | {key[0]} | {key[1]} "
                f"| {o['mean_usd']:.4f} [{o['ci95_low_usd']:.4f}, {o['ci95_high_usd']:.4f}] "
                f"| {n['mean_usd']:.4f} [{n['ci95_low_usd']:.4f}, {n['ci95_high_usd']:.4f}] "
                f"| {d:+.4f} | {z:+.2f} | {'yes' if ok else 'NO'} |"
            )
    print()
    print(
        f"{varying} varying results: {agree} agree (intervals overlap, |z| < 1.96), largest |z| {worst:.2f}; "
        f"{fixed_same} results that do not vary between runs: identical in both builds"
        + (f"; {fixed_differ} fixed results DIFFER" if fixed_differ else "")
    )


if __name__ == "__main__":
    main()
