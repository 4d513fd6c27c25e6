"""Records that survive more than one of anything: `make history` (tools/history.py) end to
end, in a copy of the project whose suite is one cheap benchmark over two sizes, on builds
that differ cheaply (the local torch 2.13.0 plus one version of a tiny wheel, as in
test_history_end_to_end.py).

In order, as a user would: the full parameter space; a quick run with a size knob (the large
size must still be published); a second machine (the first one's report must not change); a
second builds file (the first file's report and site must stay); a failing benchmark (named,
exit 1); an interrupted run (one line, and the rerun completes with nothing lost); complete
results run again as a fresh clone would run them (no file of results/ may change).
"""

import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.test_history_end_to_end import make_wheel

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

SUITE = """
import os
import time


class Probe:
    params = [[3, 1048576]]
    param_names = ["n"]
    version = "records-test"

    def setup(self, n):
        sizes = os.environ.get("WRITEBACK_SIZES", "")
        if sizes and str(n) not in sizes.split(","):
            raise NotImplementedError(f"not run: WRITEBACK_SIZES={sizes} leaves size {n} out")
        if os.environ.get("WBPROBE_FAIL") == str(n):
            raise RuntimeError(f"planted failure at n={n}")
        time.sleep(float(os.environ.get("WBPROBE_SLEEP", "0")))

    def track_value(self, n):
        import wbprobe

        return wbprobe.VALUE * n

    track_value.unit = "value"
"""


def _tools_import() -> tuple[str, ...]:
    """The modules of benchmarks/ that tools/ imports in its own environment (no torch), as
    its imports mark them (`# standard library only`): a toy suite needs them beside it."""
    names = {"__init__.py"}
    for path in (ROOT / "tools").glob("*.py"):
        for line in path.read_text().splitlines():
            found = re.match(r"from benchmarks(?:\.(\w+))? import ([\w, ]+?)\s+# standard", line)
            if found and found.group(1):
                names.add(f"{found.group(1)}.py")
            elif found:
                names.update(f"{n.split(' as ')[0].strip()}.py" for n in found.group(2).split(","))
    return tuple(sorted(names))


TOOLS_IMPORT = _tools_import()


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A copy of the project's tools and configuration, with the one-benchmark suite."""
    tmp = tmp_path_factory.mktemp("records")
    work = tmp / "project"
    shutil.copytree(ROOT / "tools", work / "tools", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "asv.conf.json", work / "asv.conf.json")
    (work / "benchmarks").mkdir()
    for name in TOOLS_IMPORT:
        shutil.copy(ROOT / "benchmarks" / name, work / "benchmarks" / name)
    (work / "benchmarks" / "probe.py").write_text(SUITE)
    wheels = [make_wheel(tmp, version) for version in (1, 2, 3)]
    (work / "builds.txt").write_text(
        f'pip "torch==2.13.0 {wheels[0]}" name=a date=2026-01-01\n'
        f'pip "torch==2.13.0 {wheels[1]}" name=b date=2026-01-02\n'
    )
    (work / "other.txt").write_text(f'pip "torch==2.13.0 {wheels[2]}" name=c date=2026-01-03\n')
    return work


def environment(machine: str, env: dict | None = None) -> dict:
    """The environment of a user's run: this machine, no knob unless `env` sets one (the
    tests' conftest sets some for the tests' own process)."""
    # off unless a test sets them: a narrowing one makes a quick check
    knobs = ("SIZES", "INSTRUCTIONS", "ISA", "ATTRIBUTION", "ARTIFACTS", "CACHE", "MACHINE_NAME")
    clean = {k: v for k, v in os.environ.items() if k not in {f"WRITEBACK_{n}" for n in knobs}}
    return {**clean, "WRITEBACK_MACHINE": machine, **(env or {})}


def history(work, *args, machine="m1", env=None, check=True):
    command = [sys.executable, "-m", "tools.history", "--no-site-check", *args]
    result = subprocess.run(command, cwd=work, env=environment(machine, env),
                            capture_output=True, text=True, timeout=1800)  # fmt: skip
    if check and result.returncode != 0:
        raise AssertionError(f"{args} exited {result.returncode}:\n{result.stdout[-5000:]}\n"
                             f"{result.stderr[-3000:]}")  # fmt: skip
    return result


def values(work, machine, commit) -> list:
    files = list((work / "results" / machine).glob(f"{commit[:8]}-*.json"))
    assert len(files) == 1, files
    data = json.loads(files[0].read_text())
    return data["results"]["probe.Probe.track_value"][data["result_columns"].index("result")]


def commits(work) -> dict:
    from tools import ledger

    return {e.tag: e.commit for e in ledger.read_ledger(work / ".asv" / "ledger")}


def report(work, machine) -> str:
    result = subprocess.run([sys.executable, "-m", "tools.report", "--machine", machine], cwd=work,
                            capture_output=True, text=True, check=True)  # fmt: skip
    return result.stdout


def published(work) -> list:
    """Every point of the published graphs of track_value: (revision, [n=3, n=1048576])."""
    points = []
    for path in (work / "html" / "graphs").rglob("probe.Probe.track_value.json"):
        if "summary" not in path.parts:  # asv's summary graphs hold one mean per point
            points += json.loads(path.read_text())
    return points


@pytest.fixture(scope="module")
def full(project):
    run = history(project)
    ids = commits(project)
    assert values(project, "m1", ids["a"]) == [3, 1048576], run.stdout[-3000:]
    assert values(project, "m1", ids["b"]) == [6, 2 * 1048576]
    return project


def test_a_quick_run_with_a_size_knob_leaves_the_history_and_the_site_whole(full):
    tracked = (full / "results" / "benchmarks.json").read_text()
    before = {p: p.read_bytes() for p in (full / "results").rglob("*.json")}
    quick = history(full, env={"WRITEBACK_SIZES": "3"})
    assert "the history in results/ is not touched" in quick.stdout
    assert (full / "results" / "benchmarks.json").read_text() == tracked
    assert {p: p.read_bytes() for p in (full / "results").rglob("*.json")} == before
    params = json.loads(tracked)["probe.Probe.track_value"]["params"]
    assert params == [["3", "1048576"]]
    quick_values = values(full / ".asv" / "quick", "m1", commits(full)["a"])
    assert quick_values[0] == 3 and math.isnan(quick_values[1])  # n=1048576 skipped
    publish = subprocess.run([sys.executable, "-m", "tools.asv_project", "publish"], cwd=full,
                             capture_output=True, text=True)  # fmt: skip
    assert publish.returncode == 0, publish.stderr[-3000:]
    large = [point[1][1] for point in published(full)]
    assert sorted(large) == [1048576, 2 * 1048576]


def test_a_second_machine_leaves_the_first_ones_report_as_it_was(full):
    first = report(full, "m1")
    history(full, machine="m2")
    assert report(full, "m1") == first
    ids = commits(full)
    assert values(full, "m2", ids["b"]) == [6, 2 * 1048576]
    records = sorted(p.parent.name for p in (full / "results" / "builds").glob("*/*.json"))
    assert records == ["m1", "m1", "m2", "m2"]
    machine = json.loads((full / "results" / "m2" / "machine.json").read_text())
    assert machine["cpu_id"] and machine["cpu"] and machine["vector_flags"]
    assert not (Path.home() / ".asv-machine.json").exists() or "m2" not in json.loads(
        (Path.home() / ".asv-machine.json").read_text()
    )


def test_a_second_builds_file_keeps_the_first_files_builds(full):
    history(full, "--builds", "other.txt")
    ids = commits(full)
    assert set(ids) == {"a", "b", "other/c"}
    text = report(full, "m1")
    for tag in ("a (torch", "b (torch", "other/c (torch"):
        assert f"## {tag}" in text
    assert values(full, "m1", ids["other/c"]) == [9, 3 * 1048576]
    assert len(published(full)) >= 3  # a, b and c on the site
    upstream = subprocess.run([sys.executable, "-m", "tools.upstream_range", "a", "other/c"],
                              cwd=full, capture_output=True, text=True)  # fmt: skip
    assert upstream.returncode == 0, upstream.stderr
    assert "same upstream commit" in upstream.stdout


def test_a_real_failure_is_named_and_fails_the_run(full):
    run = history(full, machine="m3", env={"WBPROBE_FAIL": "1048576"}, check=False)
    assert run.returncode == 1, run.stdout[-3000:]
    last = run.stdout.strip().splitlines()[-1]
    assert (
        last.startswith("writeback: 2 failure(s):") and "probe.Probe.track_value(1048576)" in last
    )
    assert "on a (m3)" in last and "on b (m3)" in last


def test_an_interrupted_run_says_so_in_one_line_and_resumes(full):
    # Ctrl-C as a terminal delivers it: a suite started in the background (`cmd &` in a
    # script) inherits SIGINT ignored, and Python keeps an ignored SIGINT ignored
    process = subprocess.Popen(
        [sys.executable, "-m", "tools.history", "--no-site-check"], cwd=full,
        env=environment("m4", {"WBPROBE_SLEEP": "4"}),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    first = commits(full)["a"]
    deadline = time.monotonic() + 900
    while not list((full / "results" / "m4").glob(f"{first[:8]}-*.json")):
        assert process.poll() is None and time.monotonic() < deadline, process.stdout.read()
        time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=120)
    assert process.returncode == 130, out[-3000:]
    assert "Traceback" not in out and "Interrupted." not in out
    last = out.strip().splitlines()[-1]
    assert "interrupted" in last and "run the same command again to resume" in last
    time.sleep(1)
    assert not _running_in(full), "asv or a benchmark process outlived the interrupt"
    saved = next((full / "results" / "m4").glob(f"{first[:8]}-*.json")).read_bytes()
    history(full, machine="m4")
    assert next((full / "results" / "m4").glob(f"{first[:8]}-*.json")).read_bytes() == saved
    assert values(full, "m4", commits(full)["b"]) == [6, 2 * 1048576]


def test_a_history_that_measures_nothing_new_leaves_every_file_as_it_was(full):
    """Complete results run again as a fresh clone of them would be (no asv environment, no
    discovery memo): asv creates the environment and installs the first build to discover the
    benchmarks, and writes machine.json again; the install record changes in nothing but the
    time the install took, and no file under results/ changes by a byte. The run before writes
    the report of this machine and builds file (the last run was another machine's). Last: it
    leaves the first build installed, which the tests before it do not expect."""
    history(full)
    before = {p: p.read_bytes() for p in (full / "results").rglob("*") if p.is_file()}
    shutil.rmtree(full / ".asv" / "env")
    (full / ".asv" / "discovery.json").unlink()
    history(full)
    assert list((full / ".asv" / "env").glob("*/bin/python"))  # made again, the build installed
    assert {p: p.read_bytes() for p in (full / "results").rglob("*") if p.is_file()} == before


def _running_in(work: Path) -> list[str]:
    """Command lines of live (not zombie) processes that run from `work`'s asv environment."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
            command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if state != "Z" and str(work / ".asv") in command:
            found.append(command)
    return found
