"""Shared fixtures: the repository, the `pcsim` binary the Python results are checked against."""

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _binary() -> Path:
    """`PCSIM_BIN`, else the debug build (`cargo test` builds it), built here when missing."""
    given = os.environ.get("PCSIM_BIN")
    if given:
        return Path(given)
    path = ROOT / "target" / "debug" / "pcsim"
    if not path.exists():
        subprocess.run(["cargo", "build", "--locked", "--bin", "pcsim"], cwd=ROOT, check=True)
    return path


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def cli():
    """Runs `pcsim ARGS...` in the repository and returns its standard output (text); a failure
    raises with the command's standard error."""
    binary = _binary()

    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
        p = subprocess.run([str(binary), "--quiet", *args], cwd=ROOT, capture_output=True, text=True)
        if check and p.returncode != 0:
            raise AssertionError(f"pcsim {' '.join(args)} exited {p.returncode}: {p.stderr}")
        return p

    return run


@pytest.fixture(scope="session")
def cli_json(cli):
    def run(*args: str):
        return json.loads(cli(*args, "--format", "json").stdout)

    return run


@pytest.fixture(autouse=True)
def in_repository(monkeypatch):
    """Relative paths in the tests (`examples/...`) are the repository's, as for the commands."""
    monkeypatch.chdir(ROOT)
