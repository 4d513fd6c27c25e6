"""The Makefile hands every option to its tool as it was given: the shell reads none of them
(no `;`, backquote or quote in a value runs anything or splits it)."""

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

ECHO_PYTHON = """#!{python}
import json, os, sys
print(json.dumps({{"argv": sys.argv[1:], "isa": os.environ.get("WRITEBACK_ISA"),
                  "sizes": os.environ.get("WRITEBACK_SIZES")}}))
"""
"""A venv's python that prints the arguments and the knobs it was started with."""


@pytest.fixture
def venv(tmp_path):
    """A venv folder whose python echoes how it was called, marked
    installed so that make goes straight to the command."""
    folder = tmp_path / "venv"
    (folder / "bin").mkdir(parents=True)
    python = folder / "bin" / "python"
    python.write_text(ECHO_PYTHON.format(python=sys.executable))
    python.chmod(0o755)
    (folder / ".installed-tools").touch()  # newer than requirements/tools.txt
    return folder


def _called(venv: Path, *options: str) -> dict:
    """How `make OPTIONS` called the venv's python."""
    run = subprocess.run(
        ["make", "--no-print-directory", "-s", f"VENV={venv}", *options],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_every_option_reaches_its_tool_as_given_and_runs_nothing(venv, tmp_path):
    ran = tmp_path / "ran"  # what any value below would create if a shell read it
    touch = f"touch '{ran}'"
    history = _called(
        venv, "history", f"BUILDS=my builds;{touch}", "ONLY=torch-2.13.0 it's;x",
        f"ISA=avx2;{touch}", f"SIZES=3 `{touch}`", "SHARD=1/2", "BENCH=^(a|b)' x",
    )  # fmt: skip
    assert history == {
        "argv": ["-m", "tools.history", "--builds", f"my builds;{touch}",
                 "--only", "torch-2.13.0", "it's;x", "--shard", "1/2", "--bench", "^(a|b)' x"],
        "isa": f"avx2;{touch}",
        "sizes": f"3 `{touch}`",
    }  # fmt: skip
    merge = _called(venv, "merge", "BUILDS=b.txt", f"FROM=shards/a 'x;{touch}")
    assert merge["argv"] == [
        "-m", "tools.merge", "--builds", "b.txt", "shards/a", "'x;touch", f"'{ran}'"
    ]  # fmt: skip
    compare = _called(venv, "compare", "BASE=torch 2.14", f"HEAD=;{touch}")
    assert compare["argv"] == ["-m", "tools.compare", "torch 2.14", f";{touch}"]
    asv = _called(venv, "asv", f"ARGS=run x..y;{touch}")
    assert asv["argv"] == ["-m", "tools.asv_project", "run", "x..y;touch", f"'{ran}'"]
    assert not ran.exists()


def test_the_python_that_creates_the_venv_is_one_word(tmp_path):
    """A dry run (`make -n`) of the venv's creation shows PYTHON and the venv quoted."""
    venv, python = tmp_path / "venv", "my python;rm -rf x"
    shown = subprocess.run(
        ["make", "-n", f"VENV={venv}", f"PYTHON={python}", f"{venv}/.installed-tools"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    creating = next(line for line in shown.splitlines() if line.startswith("test -x"))
    assert shlex.split(creating) == [
        "test", "-x", f"{venv}/bin/python", "||", python, "-m", "venv", str(venv)
    ]  # fmt: skip
