"""Report documents from Python (`result.report_html()`, `report_markdown()`, `write_report()`)
against the files `pcsim ... --report FILE` writes: byte for byte, apart from the provenance's
command line (the command's own, or the Python call)."""

import pickle
import re
from pathlib import Path

import pytest

import pcsim

SIZE = dict(width=400, height=250)
CHART_SIZE = ["--chart-size", "400x250"]
SCENARIO = "examples/github-filesystem.toml"

# (Python call, the command's arguments): the same request.
CASES = {
    "run": (lambda: pcsim.run(SCENARIO, models="gpt-5.6", strategies=["none", "cached"]),
            ["run", SCENARIO, "--model", "gpt-5.6", "--strategy", "none", "--strategy", "cached"]),
    "compare": (lambda: pcsim.compare(SCENARIO, models="gpt-5.6", strategies="explicit:system+last", runs=3),
                ["compare", SCENARIO, "--model", "gpt-5.6", "--strategy", "explicit:system+last", "--runs", "3"]),
    "whatif": (lambda: pcsim.whatif(SCENARIO, at_call=5, add_tools="examples/tools/search-server.json",
                                    models="gpt-5.6"),
               ["whatif", SCENARIO, "--at-call", "5", "--add-tools", "examples/tools/search-server.json",
                "--model", "gpt-5.6"]),
    "advise": (lambda: pcsim.advise(SCENARIO, models="gpt-5.6"),
               ["advise", SCENARIO, "--model", "gpt-5.6"]),
}

HTML_CMD = re.compile(r"<tr><td>command line</td><td>([^<]*)</td></tr>")
MD_CMD = re.compile(r"^\| command line \| (.*) \|$", re.M)


def _without_command_line(text: str, pattern: re.Pattern) -> tuple:
    found = pattern.findall(text)
    assert len(found) == 1, f"one command-line row expected, found {found}"
    return pattern.sub("COMMAND LINE", text), found[0]


def _cli_report(cli, args, path: Path) -> None:
    cli(*args, *CHART_SIZE, "--report", str(path))
    assert path.is_file(), f"pcsim {' '.join(args)} wrote no {path}"


@pytest.mark.parametrize("command", sorted(CASES))
def test_html_report_equals_the_commands_file(command, cli, tmp_path):
    call, args = CASES[command]
    (tmp_path / "cli").mkdir()
    _cli_report(cli, args, tmp_path / "cli" / "r.html")
    result = call()
    written = result.write_report(tmp_path / "r.html", **SIZE)
    assert written == [str(tmp_path / "r.html")]
    ours, our_line = _without_command_line((tmp_path / "r.html").read_text("utf-8"), HTML_CMD)
    theirs, their_line = _without_command_line((tmp_path / "cli" / "r.html").read_text("utf-8"), HTML_CMD)
    assert ours == theirs
    assert "<svg" in ours and f"<title>pcsim {command}: github-filesystem</title>" in ours
    # The provenance names who made it: the command line, or the Python call.
    assert their_line.startswith(f"pcsim --quiet {command} ")
    assert our_line.startswith(f"python: pcsim.{command}(&#39;{SCENARIO}&#39;"), our_line
    assert result.report_html(**SIZE) == (tmp_path / "r.html").read_text("utf-8")


@pytest.mark.parametrize("command", ["run", "whatif"])
def test_markdown_report_and_its_pngs_equal_the_commands_files(command, cli, tmp_path):
    call, args = CASES[command]
    (tmp_path / "cli").mkdir()
    _cli_report(cli, args, tmp_path / "cli" / "pr.md")
    result = call()
    written = [Path(p) for p in result.write_report(tmp_path / "pr.md", **SIZE)]
    cli_pngs = sorted(p.name for p in (tmp_path / "cli").glob("*.png"))
    assert len(cli_pngs) >= 2, cli_pngs
    # The PNGs first, then the Markdown that links them.
    assert written[-1] == tmp_path / "pr.md"
    assert sorted(p.name for p in written[:-1]) == cli_pngs
    for name in cli_pngs:
        assert (tmp_path / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    ours, _ = _without_command_line((tmp_path / "pr.md").read_text("utf-8"), MD_CMD)
    theirs, _ = _without_command_line((tmp_path / "cli" / "pr.md").read_text("utf-8"), MD_CMD)
    assert ours == theirs
    for name in cli_pngs:
        assert f"]({name})" in ours
    # In memory: the same Markdown and PNGs under the name given.
    md, pngs = result.report_markdown("pr", **SIZE)
    assert md == (tmp_path / "pr.md").read_text("utf-8")
    assert sorted(pngs) == cli_pngs
    assert all(pngs[n] == (tmp_path / n).read_bytes() for n in cli_pngs)


def test_an_unpickled_result_gives_the_same_report(tmp_path):
    r = CASES["advise"][0]()
    again = pickle.loads(pickle.dumps(r))
    assert again._report is None  # the native report is not pickled: it is re-run
    assert again.report_html(**SIZE) == r.report_html(**SIZE)


def test_a_bad_report_name_or_target_raises(tmp_path):
    r = pcsim.run(models="kimi-k3", strategies="none")
    with pytest.raises(pcsim.InvalidValueError) as e:
        r.write_report(tmp_path / "r.pdf")
    assert e.value.field == "path" and ".html" in e.value.problem
    assert not (tmp_path / "r.pdf").exists()
    # A folder is not replaced.
    (tmp_path / "d.html").mkdir()
    with pytest.raises(pcsim.InvalidValueError) as e:
        r.write_report(tmp_path / "d.html", **SIZE)
    assert "folder" in e.value.problem
    assert (tmp_path / "d.html").is_dir()


def test_results_without_a_document_say_so():
    with pytest.raises(TypeError, match="report document"):
        pcsim.tools_cost("examples/tools/get_weather.json", models="gpt-5.6").report_html()
