"""`pcsim.replay` against `pcsim replay`: per log and over a folder of logs."""

from pathlib import Path

import pytest

import pcsim

USAGE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "usage"
LOGS = sorted(p for p in USAGE.iterdir() if p.suffix in (".json", ".jsonl"))


def test_the_usage_fixtures_are_there():
    assert len(LOGS) >= 20


def _same_totals(got: pcsim.ReplayTotals, expected: dict) -> None:
    assert (got.model, got.strategy) == (expected["model"], expected["strategy"])
    assert got.conversations == expected["conversations"]
    assert got.calls_total == expected["calls_total"]
    assert got.predicted_write_tokens_by_tier == expected["predicted_write_tokens_by_tier"]
    for side in ("logged", "predicted"):
        b, e = getattr(got, side), expected[side]
        assert (b.uncached_tokens, b.cache_write_tokens, b.cache_read_tokens) == (
            e["uncached_tokens"], e["cache_write_tokens"], e["cache_read_tokens"]), side
        # Summed per file here and per call by the command: equal but for the order of additions.
        assert b.cost_usd == pytest.approx(e["cost_usd"], rel=1e-12, abs=1e-12), side


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_each_log_equals_pcsim_replay(log, cli, cli_json):
    p = cli("replay", str(log), "--format", "json", check=False)
    if p.returncode != 0:
        # A log pcsim refuses (e.g. its model is not in the catalog) is refused alike.
        with pytest.raises(pcsim.PcsimError) as e:
            pcsim.replay(log)
        # The same message, but for the fix it suggests (`models=[...]` instead of `--model`).
        said = p.stderr.strip()
        assert said.startswith("error: ")
        assert said[len("error: "):].split("; choose")[0] == str(e.value).split("; choose")[0]
        assert e.value.field == "model"
        return
    expected = cli_json("replay", str(log))
    r = pcsim.replay(log, keep_calls=True)
    assert r.calls_logged == expected["calls_logged"]
    assert r.bytes == expected["bytes"]
    assert len(r.results) == len(expected["results"])
    for got, exp in zip(r.results, expected["results"]):
        _same_totals(got, exp)
    assert r.files[0]["results"][0]["calls"] == expected["results"][0]["calls"]


def test_models_and_strategies_equal_the_flags(cli_json):
    log = USAGE / "two_sessions.jsonl"
    args = ["replay", str(log), "--model", "claude-opus-4.8", "--model", "kimi-k3",
            "--strategy", "none", "--strategy", "cached", "--prefix-tokens", "2000", "--seed", "4"]
    expected = cli_json(*args)
    r = pcsim.replay(log, models=["claude-opus-4.8", "kimi-k3"], strategies=["none", "cached"],
                     prefix_tokens=2000, seed=4)
    assert [(x.model, x.strategy) for x in r.results] == [(x["model"], x["strategy"]) for x in expected["results"]]
    for got, exp in zip(r.results, expected["results"]):
        _same_totals(got, exp)
    rows = r.to_dicts()
    assert rows[0]["predicted_cost_usd"] == r.results[0].predicted.cost_usd


def test_a_folder_equals_pcsim_replay_of_the_folder(cli_json):
    expected = cli_json("replay", str(USAGE), "--model", "claude-opus-4.8")
    r = pcsim.replay(USAGE, models="claude-opus-4.8")
    assert len(r.files) == expected["files"]
    assert len(r.files_skipped) == len(expected["files_skipped"])
    assert r.calls_logged == expected["calls_logged"]
    assert r.bytes == expected["bytes"]
    [got] = r.results
    _same_totals(got, expected["results"][0])


def test_merge_of_parts_equals_the_whole():
    files = pcsim.log_files(USAGE)
    whole = pcsim.replay_files(files, models="claude-opus-4.8")
    parts = [pcsim.replay_files(files[i::3], models="claude-opus-4.8") for i in range(3)]
    merged = pcsim.ReplayResult.merge(parts)
    assert merged.to_dicts() == whole.to_dicts()
    assert merged.files == whole.files


def test_a_folder_on_its_own_models_equals_pcsim_replay_of_the_folder(cli_json):
    # Without models= every call is billed at its own model: the command prints one row per
    # strategy with the models joined by '+', and so does .results.
    expected = cli_json("replay", str(USAGE))
    r = pcsim.replay(USAGE)
    assert len({m for f in r.files for x in f["results"] for m in x["model"].split("+")}) > 1
    assert len(r.results) == len(expected["results"])
    for got, exp in zip(r.results, expected["results"]):
        _same_totals(got, exp)
    files = pcsim.log_files(USAGE)
    merged = pcsim.ReplayResult.merge([pcsim.replay_files(files[i::2]) for i in range(2)])
    assert merged.to_dicts() == r.to_dicts()
