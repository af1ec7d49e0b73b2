"""Bad input raises the right exception, carrying the file, field and message pcsim prints."""

import pickle

import pytest

import pcsim


def cli_error(cli, *args: str) -> str:
    """The message `pcsim ARGS` prints for bad input (exit code 2), without `error: `."""
    p = cli(*args, check=False)
    assert p.returncode == 2, p.stderr
    first = p.stderr.strip()
    assert first.startswith("error: "), first
    return first[len("error: "):]


def test_missing_scenario_file(cli):
    with pytest.raises(pcsim.FileError) as e:
        pcsim.run("examples/nope.toml")
    assert e.value.file == "examples/nope.toml"
    assert isinstance(e.value, OSError) and isinstance(e.value, pcsim.PcsimError)
    assert str(e.value) == cli_error(cli, "run", "examples/nope.toml")


def test_invalid_value_names_file_line_and_field(tmp_path, cli):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[session]\ncalls = 0\n')
    with pytest.raises(pcsim.InvalidValueError) as e:
        pcsim.Scenario.load(bad)
    assert e.value.file == f"{bad}:3:9"
    assert e.value.field == "session.calls"
    assert "at least one call" in e.value.problem
    assert isinstance(e.value, ValueError)
    assert str(e.value) == cli_error(cli, "run", str(bad))


def test_toml_syntax_error_is_a_parse_error(tmp_path, cli):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[session\ncalls = 3\n')
    with pytest.raises(pcsim.ParseError) as e:
        pcsim.run(bad)
    assert e.value.file == str(bad)
    assert "line 2, column 9" in e.value.problem
    assert str(e.value) == cli_error(cli, "run", str(bad))
    with pytest.raises(pcsim.ParseError):
        pcsim.Scenario.from_toml("name = \n", origin="inline.toml")


def test_dict_scenario_errors_name_the_field():
    with pytest.raises(pcsim.InvalidValueError) as e:
        pcsim.run({"name": "x", "session": {"calls": 0}})
    assert e.value.field == "session.calls"
    with pytest.raises(pcsim.ParseError):
        pcsim.Scenario.from_dict({"name": None})


def test_unknown_model_suggests_the_closest(cli):
    with pytest.raises(pcsim.UnknownModelError) as e:
        pcsim.run(models=["claude-opus-4.9"])
    assert "did you mean `claude-opus-4.8`" in str(e.value)
    assert isinstance(e.value, LookupError)
    assert str(e.value) == cli_error(cli, "run", "--model", "claude-opus-4.9")
    with pytest.raises(pcsim.UnknownModelError):
        pcsim.tools_cost([], models="nope")


def test_bad_strategy(cli):
    with pytest.raises(pcsim.InvalidValueError) as e:
        pcsim.run(strategies=["explicit:tool"])
    assert e.value.field == "--strategy"
    assert "did you mean `tools`" in str(e.value)
    assert str(e.value) == cli_error(cli, "run", "--strategy", "explicit:tool")


def test_whatif_at_call_out_of_range(cli):
    with pytest.raises(pcsim.InvalidValueError) as e:
        pcsim.whatif("examples/tool-change.toml", at_call=99, remove_tools="web_search")
    assert str(e.value) == cli_error(cli, "whatif", "examples/tool-change.toml", "--at-call", "99",
                                     "--remove-tools", "web_search")
    with pytest.raises(pcsim.InvalidValueError) as e:
        pcsim.whatif(at_call=5, trim="shorter")
    assert e.value.field == "trim"


def test_bad_tool_lists(cli):
    path = "tests/fixtures/usage/openai_chat.json"  # a usage log, not a tool list
    with pytest.raises(pcsim.InvalidValueError) as e:
        pcsim.tools_cost(path)
    assert str(e.value) == cli_error(cli, "tools", path)
    with pytest.raises(pcsim.ParseError) as e:
        pcsim.tools_cost("[{")
    assert e.value.file == "<tools>"
    with pytest.raises(pcsim.FileError):
        pcsim.tools_cost("no/such/tools.json")
    with pytest.raises(pcsim.InvalidValueError) as e:
        tool = {"name": "a", "inputSchema": {"type": "object"}}
        pcsim.tools_cost([[tool], [tool]])  # two servers defining one name
    assert "defined twice" in str(e.value)
    with pytest.raises(TypeError):
        pcsim.tools_cost(42)


def test_catalog_errors(cli):
    with pytest.raises(pcsim.InvalidValueError) as e:
        pcsim.Catalog(price_sheet="nope")
    assert str(e.value) == cli_error(cli, "--price-sheet", "nope", "run")
    with pytest.raises(pcsim.InvalidValueError) as e:
        pcsim.Catalog(on="2026-13-01")
    assert e.value.field == "on" and "not a day of the calendar" in str(e.value)
    with pytest.raises(pcsim.InvalidValueError):
        pcsim.Catalog(prices=["kimi-k3=abc,1"])
    with pytest.raises(pcsim.FileError):
        pcsim.Catalog("no/such/catalog.toml")
    with pytest.raises(TypeError):
        pcsim.run(catalog="models.toml")


def test_monte_carlo_work_limit_is_refused_before_work():
    with pytest.raises(pcsim.InvalidValueError) as e:
        pcsim.run(runs=10**9)
    assert e.value.field in ("runs", "--runs")


def test_replay_errors(tmp_path):
    with pytest.raises(pcsim.FileError):
        pcsim.replay(tmp_path / "nope.jsonl")
    (tmp_path / "empty").mkdir()
    with pytest.raises(pcsim.InvalidValueError) as e:
        pcsim.replay(tmp_path / "empty")
    assert "no .jsonl or .json file" in str(e.value)
    with pytest.raises(pcsim.InvalidValueError) as e:
        pcsim.replay("tests/fixtures/usage/two_sessions.jsonl", session_gap_minutes=-1)
    assert e.value.field == "session_gap_minutes"


def test_exceptions_pickle_with_their_parts():
    try:
        pcsim.run({"name": "x", "session": {"calls": 0}})
    except pcsim.PcsimError as e:
        back = pickle.loads(pickle.dumps(e))
        assert type(back) is type(e)
        assert (back.file, back.field, back.problem, str(back)) == (e.file, e.field, e.problem, str(e))
    else:
        pytest.fail("no error")
