"""The ledger, the install command and asv, end to end, on builds that differ cheaply.

Every build installs the torch on local disk (2.13.0) plus one version of a tiny wheel made
here, `wbprobe`, whose VALUE a one-benchmark suite tracks. asv runs the real install command
(tools/install_build.py) for every ledger commit, `asv find` names the build where VALUE
changes, and tools/upstream_range.py reads the identities the installs recorded. A build
that cannot install is reported with pip's reason and leaves the other results intact.
"""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def tools_env() -> dict:
    """The environment to run the project's tools (`python -m tools.NAME`) in a folder of the
    test's: the project's root on the import path."""
    return {**os.environ, "PYTHONPATH": str(ROOT)}


pytestmark = pytest.mark.slow

SUITE = """
class Probe:
    def track_value(self):
        import wbprobe

        return wbprobe.VALUE

    track_value.unit = "value"
"""


def make_wheel(folder: Path, version: int) -> Path:
    """A minimal valid pure-Python wheel: module wbprobe with VALUE = version."""
    return write_wheel(folder, "wbprobe", str(version), {"wbprobe.py": f"VALUE = {version}\n"})


def write_wheel(folder: Path, name: str, version: str, files: dict[str, str]) -> Path:
    """A minimal valid pure-Python wheel of distribution `name` holding `files` (path: text)."""
    path = folder / f"{name}-{version}-py3-none-any.whl"
    info = f"{name}-{version}.dist-info"
    files = {
        **files,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: writeback-test\n"
        "Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{member},,\n" for member in files) + f"{info}/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as wheel:
        for member, text in files.items():
            wheel.writestr(member, text)
        wheel.writestr(f"{info}/RECORD", record)
    return path


def _run(args, cwd, env=None, check=True):
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)
    if check and result.returncode != 0:
        raise AssertionError(f"{args} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return result


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("history")
    one, two = make_wheel(tmp, 1), make_wheel(tmp, 2)
    (tmp / "builds.txt").write_text(
        f'pip "torch==2.13.0 {one}" name=a date=2026-01-01\n'
        f'pip "torch==2.13.0 {one}" name=b date=2026-01-02\n'
        f'pip "torch==2.13.0 {two}" name=c date=2026-01-03\n'
        f'pip "torch==2.13.0 {two}" name=d date=2026-01-04\n'
        f'pip "wbprobe==99" name=broken date=2026-01-05\n'
    )
    env, asv = toy_project(tmp, SUITE)
    run = _run(asv + ["run", "ALL", "--machine", "t"], cwd=tmp, env=env, check=False)
    return tmp, env, run


def toy_project(tmp: Path, suite: str) -> tuple[dict, list[str]]:
    """`tmp` as a project measuring the one-module `suite` over the ledger of its builds.txt
    with the real install command: the ledger built, asv.conf.json written, asv's machine `t`
    registered. Returns (the environment to run asv in, the asv command)."""
    (tmp / "bench").mkdir()
    (tmp / "bench" / "__init__.py").write_text("")
    (tmp / "bench" / "probe.py").write_text(suite)
    _run([sys.executable, "-m", "tools.ledger", "--builds", "builds.txt",
          "--ledger", "ledger"], cwd=tmp, env=tools_env())  # fmt: skip
    conf = json.loads((ROOT / "asv.conf.json").read_text())
    conf["install_command"] = [
        c.replace("in-dir={conf_dir}", f"in-dir={ROOT}") for c in conf["install_command"]
    ]
    conf.update(repo="ledger", benchmark_dir="bench", env_dir="env", results_dir="results",
                html_dir="html")  # fmt: skip
    (tmp / "asv.conf.json").write_text(json.dumps(conf))
    env = {**os.environ, "HOME": str(tmp), "WRITEBACK_MACHINE": "t"}
    asv = [sys.executable, "-m", "asv"]
    _run(asv + ["machine", "--yes", "--machine", "t"], cwd=tmp, env=env)
    return env, asv


def _ledger(tmp):
    from tools import ledger

    return {e.name: e.commit for e in ledger.read_ledger(tmp / "ledger")}


def _value(tmp, commit):
    files = list((tmp / "results" / "t").glob(f"{commit[:8]}-*.json"))
    assert len(files) == 1, files
    data = json.loads(files[0].read_text())
    column = data["result_columns"].index("result")
    value = data["results"]["probe.Probe.track_value"][column]
    return value[0] if isinstance(value, list) else value  # asv keeps a list of one


def test_every_installed_build_is_measured(history):
    tmp, _, run = history
    commits = _ledger(tmp)
    assert [_value(tmp, commits[name]) for name in "abcd"] == [1, 1, 2, 2], run.stdout[-3000:]
    for name in "abcd":
        record = json.loads(
            (tmp / "results" / "builds" / "t" / f"{commits[name]}.json").read_text()
        )
        assert record["installed"] and record["torch_version"].startswith("2.13.0")
        assert len(record["torch_git_version"]) == 40


def test_a_build_that_does_not_install_says_why_and_loses_nothing(history):
    tmp, _, _ = history
    commits = _ledger(tmp)
    record = json.loads(
        (tmp / "results" / "builds" / "t" / f"{commits['broken']}.json").read_text()
    )
    assert record["installed"] is False
    assert "wbprobe==99" in record["error"] and record["error"].startswith("pip exited")
    assert _value(tmp, commits["broken"]) is None  # asv recorded it as failed
    assert _value(tmp, commits["d"]) == 2


def test_asv_find_names_the_first_build_where_the_value_changes(history):
    tmp, env, _ = history
    commits = _ledger(tmp)
    found = _run(
        [sys.executable, "-m", "asv", "find", "--machine", "t", "--skip-save",
         f"{commits['a']}..{commits['d']}", "probe.Probe.track_value"],
        cwd=tmp, env=env,
    )  # fmt: skip
    assert f"Greatest regression found: {commits['c'][:8]}" in found.stdout, found.stdout


def test_upstream_range_reads_the_recorded_identities(history):
    tmp, _, _ = history
    result = _run(
        [sys.executable, "-m", "tools.upstream_range", "b", "c",
         "--ledger", "ledger", "--results", "results"],
        cwd=tmp, env=tools_env(),
    )  # fmt: skip
    assert "b: torch 2.13.0" in result.stdout and "c: torch 2.13.0" in result.stdout
    assert "same upstream commit" in result.stdout
    broken = _run(
        [sys.executable, "-m", "tools.upstream_range", "d", "broken",
         "--ledger", "ledger", "--results", "results"],
        cwd=tmp, env=tools_env(), check=False,
    )  # fmt: skip
    assert broken.returncode == 2 and "broken did not install" in broken.stderr
