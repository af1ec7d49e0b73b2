"""Every API call against what the corresponding `pcsim` command prints: the same JSON document
(every figure), the same table and CSV."""

import json
from pathlib import Path

import pytest

import pcsim

MCP = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "reference" / "mcp"
CAPTURES = sorted(MCP.glob("*.tools.json"))


def test_the_captures_are_there():
    # The tool-cost tests below iterate over them: an empty folder must fail, not pass.
    assert len(CAPTURES) == 15


def test_run_default_reproduces_pcsim_run_table_figure_for_figure(cli):
    r = pcsim.run()
    assert r.table == cli("run").stdout
    assert r.scenario == "coding-agent-26-tools"
    assert len(r.results) == 12


def test_run_json_and_csv_equal_the_commands(cli, cli_json):
    r = pcsim.run()
    assert r.to_dict() == cli_json("run")
    assert r.csv == cli("run", "--format", "csv").stdout
    opus = r.result("claude-opus-4.8", "cached")
    # `cached` is the cheapest placement (one breakpoint on the newest message, here).
    assert opus.strategy == "explicit:last"
    # Typed attributes carry the JSON's figures; totals add up to the calls.
    assert opus.total_usd == cli_json("run")["results"][1]["total_usd"]
    assert opus.totals.prompt_tokens == sum(c.prompt_tokens for c in opus.calls)
    assert abs(opus.total_usd - sum(c.cost_usd for c in opus.calls)) < 1e-9


def test_run_with_selection_monte_carlo_and_per_call_table(root, cli, cli_json):
    path = root / "examples" / "explicit-vs-automatic.toml"
    args = ["run", str(path), "--model", "claude-opus-5", "--model", "kimi-k3",
            "--strategy", "none", "--strategy", "cached", "--runs", "40", "--seed", "3"]
    r = pcsim.run(path, models=["claude-opus-5", "kimi-k3"], strategies=["none", "cached"], runs=40, seed=3)
    assert r.to_dict() == cli_json(*args)
    assert r.results[0].montecarlo is not None and r.results[0].montecarlo.runs == 40
    per_call = pcsim.run(path, models="kimi-k3", strategies="cached", per_call=True)
    assert per_call.table == cli("run", str(path), "--model", "kimi-k3", "--strategy", "cached", "--calls").stdout


def test_run_rows_for_data_frames():
    r = pcsim.run(models=["gpt-5.6"])
    rows = r.to_dicts()
    assert [(x["model"], x["strategy"]) for x in rows] == [(x.model, x.strategy) for x in r.results]
    assert rows[1]["total_usd"] == r.results[1].total_usd
    calls = r.calls_to_dicts()
    assert len(calls) == 40 and calls[-1]["cumulative_usd"] == r.results[1].total_usd


def test_to_pandas_and_polars_when_installed():
    r = pcsim.run(models=["gpt-5.6"])
    for lib, convert in (("pandas", r.to_pandas), ("polars", r.to_polars)):
        try:
            __import__(lib)
        except ImportError:
            with pytest.raises(ImportError, match=lib):
                convert()
            continue
        frame = convert()
        assert list(frame["total_usd"]) == [x.total_usd for x in r.results]


def test_compare_equals_pcsim_compare(root, cli, cli_json):
    r = pcsim.compare()
    assert r.to_dict() == cli_json("compare")
    assert r.table == cli("compare").stdout
    path = root / "examples" / "explicit-vs-automatic.toml"
    args = ["compare", str(path), "--model", "claude-opus-4.8",
            "--strategy", "explicit:tools", "--strategy", "explicit:tools@1h+system+last"]
    r = pcsim.compare(str(path), models="claude-opus-4.8",
                      strategies=["explicit:tools", "explicit:tools@1h+system+last"])
    assert r.to_dict() == cli_json(*args)
    assert r.csv == cli(*args, "--format", "csv").stdout
    c = r.comparisons[0]
    assert c.strategies[0].strategy == "none"
    assert c.cheapest in [s.strategy for s in c.strategies]
    assert all(s.total_usd == pytest.approx(c.none_usd - s.saving_usd) for s in c.strategies)


def test_whatif_equals_pcsim_whatif(root, cli, cli_json):
    path = root / "examples" / "tool-change.toml"
    args = ["whatif", str(path), "--at-call", "25", "--remove-tools", "web_search,fetch_page,search_code"]
    r = pcsim.whatif(path, at_call=25, remove_tools=["web_search", "fetch_page", "search_code"])
    assert r.to_dict() == cli_json(*args)
    assert r.table == cli(*args).stdout
    assert r.change.removed == ["web_search", "fetch_page", "search_code"]
    assert r.at_call == 25 and r.outcomes


def test_whatif_add_tools_as_dicts_equals_the_file(root, cli_json):
    path = root / "examples" / "github-filesystem.toml"
    extra = MCP / "mcp-server-time.tools.json"
    args = ["whatif", str(path), "--at-call", "5", "--add-tools", str(extra), "--model", "gpt-5.6"]
    from_file = pcsim.whatif(path, at_call=5, add_tools=extra, models="gpt-5.6")
    from_dict = pcsim.whatif(path, at_call=5, add_tools=json.loads(extra.read_text()), models="gpt-5.6")
    expected = cli_json(*args)
    assert from_file.to_dict() == expected
    assert from_dict.to_dict()["outcomes"] == expected["outcomes"]


def test_whatif_remove_server_and_trim(root, cli_json):
    path = root / "examples" / "github-filesystem.toml"
    args = ["whatif", str(path), "--at-call", "10", "--remove-servers", "github", "--trim", "first-sentence",
            "--model", "claude-opus-4.8"]
    r = pcsim.whatif(str(path), at_call=10, remove_servers="github", trim="first-sentence", models="claude-opus-4.8")
    assert r.to_dict() == cli_json(*args)


def test_advise_equals_pcsim_advise(root, cli, cli_json):
    r = pcsim.advise(models=["claude-opus-4.8", "kimi-k3"])
    args = ["advise", "--model", "claude-opus-4.8", "--model", "kimi-k3"]
    assert r.to_dict() == cli_json(*args)
    assert r.table == cli(*args).stdout
    assert [a.model for a in r.advice] == ["claude-opus-4.8", "kimi-k3"]
    assert r.advice[1].recommended.total_usd <= r.advice[1].none_usd


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_tools_cost_of_every_capture_equals_pcsim_tools(capture, cli_json):
    expected = cli_json("tools", str(capture))
    expected.pop("warnings", None)
    from_path = pcsim.tools_cost(capture)
    from_dict = pcsim.tools_cost(json.loads(capture.read_text()))
    assert from_path.to_dict() == expected
    assert from_dict.to_dict() == expected


def _tools_of(capture: Path):
    doc = json.loads(capture.read_text())
    return doc["result"]["tools"] if "result" in doc else doc["tools"]


def test_tools_cost_of_openai_and_anthropic_tool_dicts(tmp_path, cli_json):
    tools = _tools_of(MCP / "server-github.tools.json")
    openai = [{"type": "function", "function": {"name": t["name"], "description": t.get("description", ""),
                                                "parameters": t["inputSchema"]}} for t in tools]
    anthropic = [{"name": t["name"], "description": t.get("description", ""), "input_schema": t["inputSchema"]}
                 for t in tools]
    for form, listed in (("openai", openai), ("anthropic", anthropic)):
        f = tmp_path / f"{form}.json"
        f.write_text(json.dumps(listed))
        expected = cli_json("tools", str(f), "--model", "gpt-5.6", "--model", "claude-opus-4.8")
        expected.pop("warnings", None)
        got = pcsim.tools_cost(listed, models=["gpt-5.6", "claude-opus-4.8"])
        assert got.to_dict() == expected, form
        assert got.tool_count == 26
        gpt = got.model("gpt-5.6")
        assert gpt.tool_block_tokens == sum(t.tokens for t in gpt.tools) + gpt.preamble_tokens


def test_tools_cost_of_several_servers_equals_several_files(cli_json):
    a, b = MCP / "server-github.tools.json", MCP / "server-slack.tools.json"
    expected = cli_json("tools", str(a), str(b), "--model", "glm-5.2")
    expected.pop("warnings", None)
    assert pcsim.tools_cost([a, b], models="glm-5.2").to_dict() == expected
    assert pcsim.tools_cost([json.loads(a.read_text()), str(b)], models="glm-5.2").to_dict() == expected


def test_catalog_price_sheet_day_and_overrides_equal_the_flags(cli_json):
    sheet = pcsim.Catalog(price_sheet="study-2026-07-31")
    assert pcsim.run(catalog=sheet).to_dict() == cli_json("--price-sheet", "study-2026-07-31", "run")
    dated = pcsim.Catalog(on="2026-07-31", prices=["kimi-k3=3,15"])
    assert pcsim.run(models="kimi-k3", catalog=dated).to_dict() == cli_json(
        "--on", "2026-07-31", "--price", "kimi-k3=3,15", "run", "--model", "kimi-k3")


def test_catalog_overlay_file_and_text(root, tmp_path, cli_json):
    overlay = tmp_path / "overlay.toml"
    builtin = (root / "models.toml").read_text()
    # A whole catalog laid over the built-in one: its models replace the built-in ones.
    overlay.write_text(builtin.replace("input_usd_per_mtok = { value = 5.0", "input_usd_per_mtok = { value = 6.5", 1))
    expected = cli_json("--catalog", str(overlay), "run")
    assert pcsim.run(catalog=pcsim.Catalog(overlay)).to_dict() == expected
    assert pcsim.run(catalog=pcsim.Catalog(text=overlay.read_text())).to_dict() == expected
    assert "claude-opus-4.8" in pcsim.Catalog().model_ids


def test_scenario_from_toml_text_dict_and_path_agree(root):
    text = """
name = "py"
models = ["claude-opus-4.8", "gpt-5.6"]
strategies = ["none", "cached"]
[tools]
synthetic = { count = 20, params = 4 }
[session]
calls = 12
system_tokens = 1500
first_user_tokens = 200
tool_result_tokens = { dist = "uniform", min = 300, max = 900 }
output_tokens = 150
gap_seconds = 10
"""
    as_dict = {
        "name": "py", "models": ["claude-opus-4.8", "gpt-5.6"], "strategies": ["none", "cached"],
        "tools": {"synthetic": {"count": 20, "params": 4}},
        "session": {"calls": 12, "system_tokens": 1500, "first_user_tokens": 200,
                    "tool_result_tokens": {"dist": "uniform", "min": 300, "max": 900},
                    "output_tokens": 150, "gap_seconds": 10},
    }
    a = pcsim.run(text)
    b = pcsim.run(as_dict)
    c = pcsim.run(pcsim.Scenario.from_toml(text))
    assert a.to_dict() == b.to_dict() == c.to_dict()
    s = pcsim.Scenario.load(root / "examples" / "tool-change.toml")
    assert s.name == "tool-change" and s.calls == 40 and len(s.tool_names) == 16  # before the event adds 3
