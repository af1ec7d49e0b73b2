"""The Python examples of docs/python.md run as written (with the repository's fixtures for the
reader's own files, and without a notebook's display)."""

import re
import sys
import types
from pathlib import Path

import pytest

import pcsim

DOC = Path(__file__).resolve().parents[2] / "docs" / "python.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
# The reader's own files, here the repository's.
STAND_INS = {
    'os.path.expanduser("~/.claude/projects")': '"tests/fixtures/usage"',
    '"logs/"': '"tests/fixtures/usage"',
}


def test_the_examples_are_there():
    assert len(BLOCKS) == 6  # the five notebook examples and the fleet recipe


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i + 1}" for i in range(len(BLOCKS))])
def test_example_runs(code, monkeypatch):
    for needed in re.findall(r"^(?:from|import) (\w+)", code, re.M):
        if needed in ("IPython", "pcsim", "os", "functools"):
            continue
        __import__(needed)
    if "to_pandas" in code:
        pytest.importorskip("pandas") if not _required() else __import__("pandas")
    if "dask" in code and not _required():
        pytest.importorskip("distributed")
    display = types.ModuleType("IPython.display")
    display.Image = lambda data: data  # a notebook shows it; here it must be PNG bytes
    monkeypatch.setitem(sys.modules, "IPython", types.ModuleType("IPython"))
    monkeypatch.setitem(sys.modules, "IPython.display", display)
    for mine, ours in STAND_INS.items():
        code = code.replace(mine, ours)
    exec(compile(code, f"{DOC.name} example", "exec"), {"__name__": "__doc_example__", "pcsim": pcsim})


def _required() -> bool:
    import os

    return bool(os.environ.get("PCSIM_REQUIRE_OPTIONAL"))
