"""`.venv/bin/asv` is asv with this project's machine identity: `make` installs tools/asv over
the asv package's own entry point, so every asv command works as its users type it (the machine
file lives in .asv/, which plain asv would not find)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHIM = ROOT / ".venv" / "bin" / "asv"


@pytest.fixture
def shim():
    if not (ROOT / ".venv" / ".installed-test").is_file():
        pytest.skip("no .venv made by `make test` here: the shim is installed by make")
    return SHIM


def test_make_installs_the_wrapper_as_the_environments_asv(shim):
    assert shim.read_bytes() == (ROOT / "tools" / "asv").read_bytes()
    assert shim.stat().st_mode & 0o111


@pytest.mark.parametrize("where", ["root", "elsewhere"])
def test_asv_as_typed_runs_through_the_projects_machine_wrapper(shim, tmp_path, where):
    cwd = ROOT if where == "root" else tmp_path
    done = subprocess.run([str(shim), "machine", "--yes"], cwd=cwd, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "the machine is registered by this wrapper itself (.asv/asv-machine.json)" in done.stdout
