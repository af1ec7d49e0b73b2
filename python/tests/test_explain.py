"""`pcsim.explain` against `pcsim explain`: the same JSON document (every figure) for every trace
format and option, rows equal to the command's CSV, and its errors as exceptions."""

import csv
import io
import pickle

import pytest

import pcsim

TRACES = [
    "tests/fixtures/explain/trace.jsonl",
    "tests/fixtures/explain/har/session.har",
    "tests/fixtures/explain/claude-tap/session.jsonl",
    "tests/fixtures/explain/claude-tap/openai_responses_trace.jsonl",
    "tests/fixtures/explain/claude-tap/codex_ws_multi_response_trace.jsonl",
]


def test_the_traces_are_there(root):
    # The comparisons below iterate over them: a missing file must fail, not pass.
    assert all((root / t).is_file() for t in TRACES), TRACES


@pytest.mark.parametrize("trace", TRACES)
def test_explain_equals_the_commands_json(trace, cli_json):
    r = pcsim.explain(trace)
    assert r.to_dict() == cli_json("explain", trace)
    assert len(r.calls) > 0
    assert r.files == [trace]


def test_a_folder_and_several_paths_as_the_command(cli_json):
    folder = "tests/fixtures/explain/claude-tap"
    assert pcsim.explain(folder).to_dict() == cli_json("explain", folder)
    both = [TRACES[0], TRACES[1]]
    r = pcsim.explain(both)
    assert r.to_dict() == cli_json("explain", *both)
    assert r.files == both


def test_options_as_the_commands_flags(cli_json):
    t = TRACES[0]
    r = pcsim.explain(t, model="claude-sonnet-4.6", session_gap_minutes=0.2, redact=True)
    assert r.to_dict() == cli_json("explain", t, "--model", "claude-sonnet-4.6",
                                   "--session-gap-minutes", "0.2", "--redact")
    assert {c.model for c in r.calls} == {"claude-sonnet-4.6"}
    # A 12 s gap splits the 20 s-apart calls into conversations of one call each.
    assert r.conversations == len(r.calls) > 1


def test_typed_attributes_and_rows_carry_the_commands_csv(cli):
    t = TRACES[0]
    r = pcsim.explain(t)
    rows = r.to_dicts()
    theirs = list(csv.DictReader(io.StringIO(cli("explain", t, "--format", "csv").stdout)))
    assert len(rows) == len(theirs) == len(r.calls)
    for ours, row in zip(rows, theirs):
        assert str(ours["call"]) == row["call"] and ours["model"] == row["model"]
        assert str(ours["billed_cache_read_tokens"]) == row["billed_read"]
        assert str(ours["predicted_cache_write_tokens"]) == row["predicted_write"]
        assert ours["causes"] == row["causes"]
        # The CSV has six decimals (and prints an empty sum as -0.000000).
        assert float(row["lost_usd"]) == pytest.approx(ours["lost_usd"], abs=5e-7)
        assert float(row["cost_usd"]) == pytest.approx(ours["billed_cost_usd"], abs=5e-7)
    # The causes ranked over the trace add up to the calls' causes.
    for total in r.causes:
        per_call = [k for c in r.calls for k in c.causes if k.cause == total.cause]
        assert total.calls == len({c.call for c in r.calls for k in c.causes if k.cause == total.cause})
        assert total.tokens == sum(k.tokens for k in per_call)
    assert len(r.causes_to_dicts()) == sum(len(c.causes) for c in r.calls)
    assert [f["fix"] for f in r.fixes_to_dicts()] == [f.fix for f in r.fixes]
    again = pickle.loads(pickle.dumps(r))
    assert again.to_dict() == r.to_dict() and again.calls == r.calls


def test_to_pandas_rows_when_installed():
    r = pcsim.explain(TRACES[0])
    try:
        import pandas  # noqa: F401  (python_ci.sh installs it)
    except ImportError:
        with pytest.raises(ImportError, match="pandas"):
            r.to_pandas()
        return
    df = r.to_pandas()
    assert list(df["call"]) == [c.call for c in r.calls]
    assert list(df["lost_usd"]) == [sum(k.usd for k in c.causes) for c in r.calls]


def test_errors_as_the_command(tmp_path, cli):
    with pytest.raises(pcsim.InvalidValueError) as e:
        pcsim.explain("tests/fixtures/explain/README.md")
    p = cli("explain", "tests/fixtures/explain/README.md", check=False)
    assert p.returncode != 0 and str(e.value) in p.stderr
    assert e.value.file == "tests/fixtures/explain/README.md" and e.value.field == "trace"
    with pytest.raises(pcsim.FileError):
        pcsim.explain(tmp_path / "missing.jsonl")
    with pytest.raises(pcsim.UnknownModelError):
        pcsim.explain(TRACES[0], model="nope")
    with pytest.raises(pcsim.InvalidValueError):
        pcsim.explain(TRACES[0], session_gap_minutes=-1)
    with pytest.raises(pcsim.InvalidValueError) as e:
        pcsim.explain([])
    assert e.value.field == "paths"


@pytest.mark.parametrize("trace", TRACES[:2])
def test_table_and_csv_are_the_commands(trace, cli):
    r = pcsim.explain(trace)
    assert r.table == cli("explain", trace).stdout
    assert r.csv == cli("explain", trace, "--format", "csv").stdout
    assert r.table and r.csv
