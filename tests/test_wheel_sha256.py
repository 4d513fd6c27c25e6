"""Wheels you can prove: a build line's `sha256=` is checked before anything is installed.

tools/install_build.py fetches the torch wheel alone (a local wheel is hashed where it lies),
compares its sha256 with the line's and installs that very file only when they match. Here on
a tiny wheel served from a file:// PEP 503 index and on the local torch 2.13.0 wheel, in a
throwaway environment (install_build.py installs into the interpreter that runs it).
"""

import hashlib
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.test_history_end_to_end import make_wheel
from tools import builds, install_build

ROOT = Path(__file__).resolve().parents[1]

TORCH_WHEEL = Path("/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl")
pytestmark = pytest.mark.slow


def _sha256(path: Path) -> str:
    with path.open("rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    """A file:// PEP 503 index holding wbprobe 1: (its URL, the wheel's path)."""
    root = tmp_path_factory.mktemp("sha-index")
    project = root / "simple" / "wbprobe"
    project.mkdir(parents=True)
    wheel = make_wheel(project, 1)
    (project / "index.html").write_text(f'<html><body><a href="{wheel.name}">{wheel.name}</a>\n')
    return (root / "simple").as_uri(), wheel


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A throwaway environment that imports the test environment's torch (a .pth file), so
    install_build.py can identify the build after installing a tiny wheel into it."""
    path = tmp_path_factory.mktemp("sha-venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    python = path / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    Path(purelib, "test-torch.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def _install(venv: Path, folder: Path, build: dict) -> tuple[subprocess.CompletedProcess, dict]:
    """Run install_build.py in `venv` on a ledger checkout holding `build`: (the run, its
    install record)."""
    checkout = folder / "checkout"
    checkout.mkdir()
    (checkout / "build.json").write_text(json.dumps(build))
    env = {**os.environ, "ASV_COMMIT": "c0ffee", "WRITEBACK_MACHINE": "t"}
    run = subprocess.run(
        [venv, "-m", "tools.install_build", "--build-dir", str(checkout),
         "--results", str(folder / "results")],
        capture_output=True, text=True, env=env, cwd=ROOT,
    )  # fmt: skip
    record = json.loads((folder / "results" / "builds" / "t" / "c0ffee.json").read_text())
    return run, record


def _imports_wbprobe(venv: Path) -> bool:
    return subprocess.run([venv, "-c", "import wbprobe"], capture_output=True).returncode == 0


def _wheel_build(wheel: Path, sha256: str) -> dict:
    line = f"wheel {wheel} name=pr-1 date=2026-11-20 sha256={sha256}"
    return builds.parse(line)[0].as_json()


def test_a_wheel_whose_sha256_differs_is_not_installed(venv, index, tmp_path):
    _, wheel = index
    wrong = "0" * 64
    run, record = _install(venv, tmp_path, _wheel_build(wheel, wrong))
    assert run.returncode == 1, run.stdout + run.stderr
    assert record["installed"] is False and record["sha256"] == wrong
    assert record["error"] == (
        f"sha256 mismatch for {wheel.name}: the builds file says {wrong}, "
        f"the wheel is {_sha256(wheel)}; nothing was installed"
    )
    assert "sha256 mismatch" in run.stderr
    assert not _imports_wbprobe(venv)


def test_a_wheel_with_its_sha256_is_installed(venv, index, tmp_path):
    _, wheel = index
    run, record = _install(venv, tmp_path, _wheel_build(wheel, _sha256(wheel)))
    assert run.returncode == 0, run.stdout + run.stderr
    assert record["installed"] is True and record["error"] is None
    assert "has the sha256 the builds file names" in run.stdout
    assert _imports_wbprobe(venv)


def test_a_requirement_is_downloaded_alone_checked_and_installed_from_that_file(index, tmp_path):
    url, wheel = index
    build = {"pip_args": ["wbprobe==1", "--index-url", url], "sha256": _sha256(wheel)}
    args, error = install_build._checked_pip_args(build, tmp_path)
    assert error is None
    assert args == [str(tmp_path / wheel.name), "--index-url", url]
    assert _sha256(tmp_path / wheel.name) == _sha256(wheel)


def test_a_requirement_that_cannot_be_downloaded_says_why(index, tmp_path):
    url, _ = index
    build = {"pip_args": ["wbprobe==99", "--index-url", url], "sha256": "0" * 64}
    _, error = install_build._checked_pip_args(build, tmp_path)
    assert error.startswith("pip exited 1: ERROR:") and "wbprobe==99" in error


def test_a_release_whose_wheel_differs_is_not_installed(venv, tmp_path):
    if not TORCH_WHEEL.is_file():
        pytest.skip(f"the local torch wheel {TORCH_WHEEL} is not on this machine")
    wrong = "f" * 64
    build = builds.parse(f"release 2.13.0 date=2026-07-08 sha256={wrong}")[0].as_json()
    run, record = _install(venv, tmp_path, build)
    assert run.returncode == 1, run.stdout + run.stderr
    assert record["error"] == (
        f"sha256 mismatch for {TORCH_WHEEL.name}: the builds file says {wrong}, "
        f"the wheel is {_sha256(TORCH_WHEEL)}; nothing was installed"
    )
    assert record["installed"] is False and record["torch_wheel"] is None
