"""Wheels you can prove: a build line's `sha256=` is checked before anything is installed,
and the torch that imports afterwards is the one asked for.

tools/install_build.py fetches the torch wheel alone (a local wheel is hashed where it lies),
compares its sha256 with the line's and installs that very file only when they match; after
installing, it checks the version that imports and the wheel the installed distribution
records it came from. Here on tiny wheels (`wbprobe`, and stand-ins for torch that only say
their version), some served from a file:// PEP 503 index, and on the local torch 2.13.0
wheel, in a throwaway environment (install_build.py installs into the interpreter that runs
it). Its install records must name no path of the machine that wrote them, and a reinstall
that installs nothing must leave its record byte for byte.
"""

import hashlib
import json
import os
import subprocess
import sys
import sysconfig
import urllib.parse
from pathlib import Path

import pytest

from tests.test_history_end_to_end import make_wheel, write_wheel
from tools import builds, install_build

ROOT = Path(__file__).resolve().parents[1]

TORCH_WHEEL = Path("/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl")
NIGHTLY = "2.16.0.dev20261105+cpu"
pytestmark = pytest.mark.slow


def _sha256(path: Path) -> str:
    with path.open("rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


INDUCTOR_IMPORTS = {"torch/utils/__init__.py": "", "torch/utils/cpp_extension.py": ""}
"""What a stand-in torch needs for tools/install_build.py's check that Inductor's C++ compile
imports (`CPP_EXTENSION_PROBE`)."""


def make_torch_wheel(folder: Path, version: str, git_version: str) -> Path:
    """A stand-in for a torch wheel: `import torch` gives `__version__`, `version.git_version`
    and `version.cuda`, all tools/install_build.py reads, and `torch.utils.cpp_extension`
    imports."""
    folder.mkdir(parents=True, exist_ok=True)
    version_py = f"__version__ = {version!r}\ngit_version = {git_version!r}\ncuda = None\n"
    files = {"torch/__init__.py": "from . import version\nfrom .version import __version__\n",
             "torch/version.py": version_py, **INDUCTOR_IMPORTS}  # fmt: skip
    return write_wheel(folder, "torch", version, files)


def _served(root: Path, wheel: Path) -> str:
    """A file:// PEP 503 index under `root` serving `wheel`: its URL."""
    project = root / "simple" / wheel.name.split("-")[0]
    project.mkdir(parents=True, exist_ok=True)
    (project / wheel.name).write_bytes(wheel.read_bytes())
    href = urllib.parse.quote(wheel.name)
    (project / "index.html").write_text(f'<html><body><a href="{href}">{wheel.name}</a>\n')
    return (root / "simple").as_uri()


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    """A file:// PEP 503 index holding wbprobe 1: (its URL, the wheel's path)."""
    root = tmp_path_factory.mktemp("sha-index")
    wheel = make_wheel(tmp_path_factory.mktemp("wbprobe"), 1)
    return _served(root, wheel), wheel


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


def _install(
    venv: Path, folder: Path, build: dict, commit: str = "c0ffee"
) -> tuple[subprocess.CompletedProcess, dict]:
    """Run install_build.py in `venv` on a ledger checkout holding `build` as ledger commit
    `commit`: (the run, its install record)."""
    checkout = folder / f"checkout-{commit}"
    checkout.mkdir(exist_ok=True)
    (checkout / "build.json").write_text(json.dumps(build))
    env = {**os.environ, "ASV_COMMIT": commit, "WRITEBACK_MACHINE": "t"}
    run = subprocess.run(
        [venv, "-m", "tools.install_build", "--build-dir", str(checkout),
         "--results", str(folder / "results")],
        capture_output=True, text=True, env=env, cwd=ROOT,
    )  # fmt: skip
    return run, json.loads(_record_path(folder, commit).read_text())


def _record_path(folder: Path, commit: str = "c0ffee") -> Path:
    return folder / "results" / "builds" / "t" / f"{commit}.json"


def _imports_wbprobe(venv: Path) -> bool:
    return subprocess.run([venv, "-c", "import wbprobe"], capture_output=True).returncode == 0


def _imported_git_version(venv: Path) -> str:
    code = "import torch; print(torch.version.git_version)"
    return subprocess.run([venv, "-c", code], capture_output=True, text=True).stdout.strip()


def _wheel_build(wheel: Path, sha256: str | None = None, name: str = "pr-1") -> dict:
    line = f"wheel {wheel} name={name} date=2026-11-20" + (f" sha256={sha256}" if sha256 else "")
    return builds.parse(line)[0].as_json()


def _paths_of_this_machine(record: dict, build: dict) -> list[str]:
    """Every string of `record` naming a path or file URL, except those of the builds line
    (`build`: its wheel, its index)."""

    def path(text: str) -> str:
        return urllib.parse.unquote(text).removeprefix("file://")

    own = {path(text) for text in _strings(build)}
    return [t for t in _strings(record) if t.startswith(("/", "file:")) and path(t) not in own]


def _strings(value) -> list[str]:
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return [value] if isinstance(value, str) else []


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


def test_a_wheel_with_its_sha256_is_installed(venv, tmp_path):
    wheel = make_torch_wheel(tmp_path / "wheel", NIGHTLY, "1" * 40)
    run, record = _install(venv, tmp_path, _wheel_build(wheel, _sha256(wheel)))
    assert run.returncode == 0, run.stdout + run.stderr
    assert record["installed"] is True and record["error"] is None
    assert record["torch_version"] == NIGHTLY and record["torch_git_version"] == "1" * 40
    assert record["torch_wheel"]["sha256"] == _sha256(wheel)
    assert "has the sha256 the builds file names" in run.stdout
    assert _imported_git_version(venv) == "1" * 40


def test_a_wheel_of_a_version_already_installed_is_installed_all_the_same(venv, tmp_path):
    """pip keeps an installed torch of the wheel's version ("already installed with the same
    version as the provided wheel"); the install reinstalls the wheel asked for."""
    first = make_torch_wheel(tmp_path / "first", NIGHTLY, "a" * 40)
    second = make_torch_wheel(tmp_path / "second", NIGHTLY, "b" * 40)
    assert first.name == second.name and _sha256(first) != _sha256(second)
    run, record = _install(venv, tmp_path, _wheel_build(first, name="pr-a"), commit="a1")
    assert run.returncode == 0 and record["torch_git_version"] == "a" * 40, run.stderr
    run, record = _install(venv, tmp_path, _wheel_build(second, name="pr-b"), commit="b1")
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"pip kept the torch already installed ({first.name} (sha256 {_sha256(first)}))" in (
        run.stdout
    )
    assert record["installed"] is True and record["torch_git_version"] == "b" * 40
    assert record["torch_wheel"]["sha256"] == _sha256(second)
    assert _imported_git_version(venv) == "b" * 40


def test_a_wheel_that_pip_does_not_put_in_place_fails_naming_both(monkeypatch, tmp_path):
    """Where even the forced reinstall leaves another wheel's torch in place, the install
    fails naming the wheel asked for and the one installed (pip and the import check planted
    here: pip installs nothing, the torch found came from another file)."""
    asked = make_torch_wheel(tmp_path / "asked", NIGHTLY, "b" * 40)
    other = {"url": "file:///elsewhere/torch-other.whl",
             "archive_info": {"hashes": {"sha256": "c" * 64}}}  # fmt: skip
    found = {"identity": {"torch_version": NIGHTLY, "torch_git_version": "a" * 40, "cuda": None},
             "imported": "/env/torch/__init__.py", "installed": "/env/torch/__init__.py",
             "direct_url": other}  # fmt: skip
    pip_runs = []
    monkeypatch.setattr(install_build, "_pip_install_reported",
                        lambda args: (pip_runs.append(args), (None, {}))[1])  # fmt: skip
    monkeypatch.setattr(install_build, "_identity", lambda: found)
    error, _, reported = install_build._install(_wheel_build(asked), tmp_path)
    assert pip_runs == [[str(asked)], [str(asked), "--force-reinstall", "--no-deps"]]
    assert error == (
        f"asked for the torch wheel {asked.name} (sha256 {_sha256(asked)}), but the torch "
        f"installed came from torch-other.whl (sha256 {'c' * 64})"
    )
    assert reported["identity"]["torch_git_version"] == "a" * 40


@pytest.mark.parametrize("line", ["wheel", "release from an index, with sha256"])
def test_a_reinstall_that_installs_nothing_leaves_the_record_byte_for_byte(venv, tmp_path, line):
    """The record names no path of this machine (the environment's python is relative to its
    folder; a wheel fetched to check its sha256 is named, not the temporary folder it lay in).
    Installed again, as asv does to discover benchmarks, nothing is written: the record's time
    of install (set back here, so that a rewrite would show) stays as it was."""
    wheel = make_torch_wheel(tmp_path / "wheel", "2.16.0", line[0] * 40)
    if line == "wheel":
        build = _wheel_build(wheel, name="pr-again")
    else:
        url = _served(tmp_path / "index", wheel)
        text = f"release 2.16.0 date=2026-11-20 index={url} sha256={_sha256(wheel)}"
        build = builds.parse(text)[0].as_json()
    run, record = _install(venv, tmp_path, build)
    assert run.returncode == 0, run.stdout + run.stderr
    assert record["python"] == "venv/bin/python"
    assert _paths_of_this_machine(record, build) == []
    if line != "wheel":
        assert record["torch_wheel"]["url"] == wheel.name
    path = _record_path(tmp_path)
    path.write_text(json.dumps({**record, "attempted_at": "2000-01-01T00:00:00+00:00"},
                               indent=1, sort_keys=True) + "\n")  # fmt: skip
    written = path.read_bytes()
    again, _ = _install(venv, tmp_path, build)
    assert again.returncode == 0, again.stdout + again.stderr
    assert path.read_bytes() == written
    assert "reinstalling" not in again.stdout
    assert f"{path.name} kept as it was" in again.stdout


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
