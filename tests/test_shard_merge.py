"""The history sharded and merged: two shards (`tools/history.py --shard k/2`), each in its own
copy of the project, merged by `tools/merge.py` into a third, publish and report exactly what
one unsharded run in a fourth copy does. Merging a folder measured with another benchmark set,
another ledger or another machine class, or one that measured the same thing again, is
refused with the reason, before anything is copied.

The copies are made as in test_records.py: tools/, asv.conf.json and a one-benchmark suite, on
builds that differ cheaply (the local torch 2.13.0 plus one version of a tiny wheel).
"""

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_history_end_to_end import make_wheel
from tests.test_records import SUITE, TOOLS_IMPORT
from tools import disk, history
from tools.results import OWN_FOLDERS

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow
MACHINE = "m1"


def _project(tmp: Path, name: str, builds: str) -> Path:
    work = tmp / name
    shutil.copytree(ROOT / "tools", work / "tools", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "asv.conf.json", work / "asv.conf.json")
    (work / "benchmarks").mkdir()
    for module in TOOLS_IMPORT:
        shutil.copy(ROOT / "benchmarks" / module, work / "benchmarks" / module)
    (work / "benchmarks" / "probe.py").write_text(SUITE)
    (work / "builds.txt").write_text(builds)
    return work


def _run(work: Path, *command: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "WRITEBACK_MACHINE": MACHINE}
    # every knob off (conftest sets some): a narrowing knob would make a quick check, not history
    for knob in (
        "WRITEBACK_SIZES",
        "WRITEBACK_INSTRUCTIONS",
        "WRITEBACK_ATTRIBUTION",
        "WRITEBACK_ISA",
    ):
        environment.pop(knob, None)
    return subprocess.run([sys.executable, *command], cwd=work, env=environment,
                          capture_output=True, text=True, timeout=1800)  # fmt: skip


def _ok(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, (
        f"{result.args}:\n{result.stdout[-5000:]}\n{result.stderr[-3000:]}"
    )
    return result


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One unsharded run, two shards and their merge; returns the four project copies."""
    tmp = tmp_path_factory.mktemp("shards")
    wheels = [make_wheel(tmp, version) for version in (1, 2, 3)]
    builds = "".join(
        f'pip "torch==2.13.0 {wheel}" name={name} date=2026-01-0{day}\n'
        for day, (name, wheel) in enumerate(zip("abc", wheels), start=1)
    )
    whole, one, two, merged = (_project(tmp, n, builds) for n in ("whole", "one", "two", "merged"))
    _ok(_run(whole, "-m", "tools.history", "--no-site-check"))
    first = _ok(_run(one, "-m", "tools.history", "--no-site-check", "--shard", "1/2"))
    assert "2 build(s) (shard 1/2 of builds.txt)" in first.stdout
    assert "not published (a shard)" in first.stdout and not (one / "html").exists()
    _ok(_run(two, "-m", "tools.history", "--no-site-check", "--shard", "2/2"))
    merge = _ok(_run(merged, "-m", "tools.merge", "--no-site-check", str(one / "results"),
                     str(two / "results")))  # fmt: skip
    return {"whole": whole, "one": one, "two": two, "merged": merged, "merge": merge,
            "first": first}  # fmt: skip


def _commits(work: Path) -> dict[str, str]:
    files = (work / "results" / MACHINE).glob("*.json")
    return {json.loads(p.read_text())["commit_hash"]: p.name for p in files if p.stem != "machine"}


def _values(work: Path) -> dict:
    """Every asv result file's measured values and parameters, by file name."""
    found = {}
    for name in _commits(work).values():
        data = json.loads((work / "results" / MACHINE / name).read_text())
        columns = data["result_columns"]
        found[name] = {
            key: (row[columns.index("result")], row[columns.index("params")])
            for key, row in data["results"].items()
        }
    return found


def _graphs(work: Path) -> dict:
    return {
        str(path.relative_to(work / "html")): json.loads(path.read_text())
        for path in (work / "html" / "graphs").rglob("*.json")
    }


def test_shards_split_the_builds_and_merge_into_one_runs_results(runs):
    whole, one, two, merged = runs["whole"], runs["one"], runs["two"], runs["merged"]
    ledger = _commits(whole)
    assert len(ledger) == 3
    assert len(_commits(one)) == 2 and len(_commits(two)) == 1
    assert set(_commits(one)) | set(_commits(two)) == set(ledger)
    assert _values(merged) == _values(whole)
    measured = sorted(v["probe.Probe.track_value"][0] for v in _values(merged).values())
    assert measured == [[3, 1048576], [6, 2 * 1048576], [9, 3 * 1048576]]
    installs = sorted(p.name for p in (merged / "results" / "builds" / MACHINE).glob("*.json"))
    assert installs == sorted(f"{commit}.json" for commit in ledger)


def test_the_merged_results_publish_and_report_as_one_runs(runs):
    whole, merged = runs["whole"], runs["merged"]
    graphs = _graphs(merged)
    assert any(path.endswith("probe.Probe.track_value.json") for path in graphs)
    assert graphs == _graphs(whole)
    text = (merged / "results" / "report.md").read_text()
    # every section but the time table, which is each run's own seconds (both have one)
    assert _measured(text) == _measured((whole / "results" / "report.md").read_text())
    assert "## Where the time went" in text
    for tag in ("a", "b", "c"):
        assert f"## {tag} (torch 2.13.0" in text
    assert "merged" in runs["merge"].stdout and "asv result files" in runs["merge"].stdout
    # asv warns of each of writeback's own folders in results/ it walks (several hundred lines
    # a publish of the committed results): left out, counted in one line
    assert "Skipping results: could not load" not in runs["merge"].stdout
    assert "asv walked writeback's own folders in results/ too" in runs["merge"].stdout


def test_only_asvs_warnings_about_writebacks_own_folders_are_left_out(tmp_path):
    results_dir = tmp_path / "results"
    warning = "[22.22%] ·· Skipping results: could not load {}\n"
    for own in OWN_FOLDERS:
        for path in (results_dir / own / "m" / "machine.json", results_dir / own / "machine.json"):
            assert history.own_folder_skip(warning.format(path), results_dir), path
    kept = [
        warning.format(results_dir / "vm-a" / "machine.json"),  # a machine folder without it
        warning.format(tmp_path / "elsewhere" / "builds" / "machine.json"),
        warning.format(results_dir / "machine.json"),
        "[22.22%] ·· Skipping results: malformed results/builds/machine.json\n",
        "[44.44%] · Detecting steps\n",
    ]
    assert [line for line in kept if history.own_folder_skip(line, results_dir)] == []


def test_every_folder_in_the_committed_results_is_a_machines_or_writebacks_own():
    """results.OWN_FOLDERS is the whole list: a new folder of records is named there, so
    asv's warnings about it are left out and any other folder's still show."""
    folders = [p for p in (ROOT / "results").iterdir() if p.is_dir()]
    strays = [p.name for p in folders if p.name not in OWN_FOLDERS
              and not (p / "machine.json").is_file()]  # fmt: skip
    assert strays == [] and len(folders) > len(OWN_FOLDERS)


def test_the_merged_time_table_shows_each_shards_run_and_its_peak_disk(runs):
    """Each shard records its run (tools/disk.py: its builds, minutes and peak disk, printed at
    the end of its `make history`); the merge keeps both records, and the merged report's
    time table shows each build with its own shard's peak, and a line per shard."""
    one, two, merged = runs["one"], runs["two"], runs["merged"]
    records = [sorted((work / "results" / "runs" / MACHINE).glob("*.json")) for work in (one, two)]
    assert [len(found) for found in records] == [1, 1]
    first, second = (json.loads(found[0].read_text()) for found in records)
    assert (first["shard"], second["shard"]) == ("1/2", "2/2")
    assert len(first["builds"]) == 2 and len(second["builds"]) == 1
    # the shard's environment holds torch 2.13.0: the sampler saw it
    assert first["peak_disk"]["parts"]["asv environments"] > 10**8
    assert first["peak_disk"]["samples"] >= 2 and first["sampling_error"] is None
    printed = runs["first"].stdout.splitlines()
    assert (
        f"writeback: disk used beyond the checkout: {disk.describe(first['peak_disk'])}"
        in (printed[-1])
    )
    kept = sorted(p.name for p in (merged / "results" / "runs" / MACHINE).glob("*.json"))
    assert kept == sorted(found[0].name for found in records)

    text = (merged / "results" / "report.md").read_text()
    section = text.split("## Where the time went", 1)[1].split("\n## ", 1)[0]
    rows = {row.split(" |")[0]: row for row in section.splitlines() if row.startswith("| ")}
    for run in (first, second):
        cell = f"| {disk.gb(run['peak_disk']['bytes'])}, run of {run['started']} |"
        for build in run["builds"]:
            assert rows[f"| {build['tag']} on {MACHINE}"].endswith(cell)
        assert f"- the run of {run['started']} (builds.txt, shard {run['shard']}: " in section
    assert section.count("- the run of ") == 2


def _measured(report: str) -> str:
    """The report without its "Where the time went" section."""
    head, _, rest = report.partition("## Where the time went")
    return head + ("## " + rest.split("\n## ", 1)[1] if "\n## " in rest else "")


def _snapshot(work: Path) -> dict:
    return {p: p.read_bytes() for p in (work / "results").rglob("*") if p.is_file()}


def _refused(work: Path, folder: Path, *reasons: str) -> None:
    before = _snapshot(work)
    result = _run(work, "-m", "tools.merge", "--no-site-check", str(folder))
    assert result.returncode == 2, result.stdout[-3000:] + result.stderr[-3000:]
    message = result.stderr.strip()
    assert message.startswith("writeback: not merged:") and len(message.splitlines()) == 1
    for reason in reasons:
        assert reason in message, message
    assert _snapshot(work) == before


def _altered_copy(source: Path, destination: Path, path: str, change) -> Path:
    """A copy of a results folder with one JSON file changed as another run would write it."""
    shutil.copytree(source, destination)
    data = json.loads((destination / path).read_text())
    change(data)
    (destination / path).write_text(json.dumps(data))
    return destination


def test_merging_identical_files_again_changes_nothing(runs):
    merged = runs["merged"]
    before = _snapshot(merged)
    _ok(_run(merged, "-m", "tools.merge", "--no-site-check", str(runs["one"] / "results")))
    assert _snapshot(merged) == before


def test_merge_refuses_another_benchmark_set(runs, tmp_path):
    def other_parameters(data):
        data["probe.Probe.track_value"]["params"] = [["3"]]

    folder = _altered_copy(runs["two"] / "results", tmp_path / "other-set", "benchmarks.json",
                           other_parameters)  # fmt: skip
    _refused(runs["merged"], folder, "another benchmark set", "probe.Probe.track_value has "
             "parameters [['3']]")  # fmt: skip


def test_merge_refuses_another_machine_class(runs, tmp_path):
    def other_cpu(data):
        data.update(cpu="Another CPU", cpu_id="000000")

    folder = _altered_copy(runs["two"] / "results", tmp_path / "other-cpu",
                           f"{MACHINE}/machine.json", other_cpu)  # fmt: skip
    _refused(runs["merged"], folder, "two machine classes under one name", "cpu id 000000")


def test_merge_refuses_results_of_another_ledger(runs, tmp_path):
    folder = tmp_path / "other-ledger"
    shutil.copytree(runs["two"] / "results", folder)
    record = next((folder / "builds" / MACHINE).glob("*.json"))
    record.rename(record.with_name("0" * 40 + ".json"))
    _refused(runs["merged"], folder, "ledger commit(s) that the ledger of builds.txt does not "
             "hold (00000000)")  # fmt: skip


def test_merge_refuses_the_same_build_measured_twice(runs):
    _refused(runs["merged"], runs["whole"] / "results", "the same thing measured twice")


def _with_version(data: dict, version: str) -> None:
    """An asv result file as a run of another version of the probe benchmark wrote it."""
    column = data["result_columns"].index("version")
    data["results"]["probe.Probe.track_value"][column] = version


def test_merge_refuses_a_result_left_from_another_benchmark_set(runs, tmp_path):
    """A folder's result file whose benchmark versions are not its own benchmarks.json's (left
    from an earlier run) would be merged and never published: refused, naming it."""
    name = sorted(_commits(runs["two"]).values())[0]
    folder = _altered_copy(runs["two"] / "results", tmp_path / "leftover", f"{MACHINE}/{name}",
                           lambda data: _with_version(data, "an-older-one"))  # fmt: skip
    _refused(runs["merged"], folder, f"holds {MACHINE}/{name}", "probe.Probe.track_value has "
             "version 'an-older-one'", "a result left from an earlier run")  # fmt: skip


def test_merge_names_the_files_to_remove_when_results_here_are_older(runs, tmp_path):
    """results/ holds a build measured before a benchmark changed; a folder measured it again:
    the merge says which of results/'s files are older and what to remove, and copies nothing."""
    from tools import merge

    into = tmp_path / "results"
    shutil.copytree(runs["merged"] / "results", into)
    name = sorted(_commits(runs["two"]).values())[0]
    path = into / MACHINE / name
    data = json.loads(path.read_text())
    _with_version(data, "an-older-one")
    path.write_text(json.dumps(data))
    commits = merge.ledger_commits_of(runs["whole"] / "results")
    with pytest.raises(merge.Refused) as refused:
        merge.plan_merge([runs["two"] / "results"], into, commits, "builds.txt")
    message = str(refused.value)
    assert "measured again 1 build(s) whose results here were measured with an older" in message
    assert f"{MACHINE}/{name}: probe.Probe.track_value has version 'an-older-one'" in message
    assert "its install record results/builds/<machine>/<commit>.json" in message
    assert merge.stale_results(into, into) == {
        path: "probe.Probe.track_value has version 'an-older-one', not "
        f"{merge.benchmark_set(into)['probe.Probe.track_value'][2]!r}"
    }


def test_make_merge_passes_every_folder_to_the_merge():
    """`make merge FROM="a b"` (the workflow's merge job runs it): the command make runs must
    parse into those folders and that builds file (a list-taking --builds once swallowed them)."""
    from tools import merge

    make = ["make", "-n", "merge", "FROM=shards/a shards/b", "BUILDS=builds-long.txt"]
    shown = subprocess.run(make, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    command = next(line for line in shown.splitlines() if "-m tools.merge" in line)
    args = merge._parse(shlex.split(command.split("-m tools.merge", 1)[1]))
    assert args.folders == [Path("shards/a"), Path("shards/b")]
    assert args.builds == [Path("builds-long.txt")]
