"""Failures of the harness are loud in every tool that reads results (issue 25), planted into a
copy of the recorded history (tests/fixtures/history):

- an eager reference that broke its own contract, as `make history` records one (the probe
  row's `harness_failure`; asv recorded both correctness benchmarks of the row as failed, as
  the asv classes' `HarnessFailure` makes it) or as one was once committed (asv's number, eager
  "wrong", and no field in the probe row): `make history` exits 1 naming it, the report shows
  it as its own state and names it, `make expected` neither proposes nor passes a file with it;
- an attribution that crashed (`attribution_error`): a failure, not a missing field.
"""

import itertools
import json
import shutil
from pathlib import Path

import pytest

from tools import expected, history, ledger, report, results

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "tests" / "fixtures" / "history" / "results"
BUILD = "torch-2.15.0"
EAGER = ("snapshot_swap", "foreach_clones", "eager", 3)
BROKE = "the eager reference broke its own contract: ret_b 3 wrong; in_b 3 wrong; view_b 3 wrong"
NAMED = f"HARNESS FAILURE snapshot_swap.foreach_clones (eager, n=3) on {BUILD} (vm): {BROKE}"


def _probe_row(results_dir: Path, scenario: str, control: str, backend: str, n) -> tuple:
    """(the probe record's path, the record, its row) of torch-2.15.0 in `results_dir`."""
    path = next(results_dir.glob(f"generated/vm/{BUILD}*/*/{scenario}/probe.json"))
    record = json.loads(path.read_text())
    key = (control, backend, n)
    row = next(r for r in record["rows"] if (r["control"], r["backend"], r["n"]) == key)
    return path, record, row


def _asv_result(results_dir: Path, ledger_path: Path) -> Path:
    commit = next(e.commit for e in ledger.read_ledger(ledger_path) if e.tag == BUILD)
    return next((results_dir / "vm").glob(f"{commit[:8]}-*.json"))


def plant_harness_failure(results_dir: Path, ledger_path: Path, asv_value=None, field=True) -> None:
    """torch-2.15.0's eager snapshot_swap.foreach_clones at n=3 broke its own contract (b kept
    its old value): asv recorded `asv_value` as its wrong elements (None: failed), the probe row
    carries `harness_failure` when `field`."""
    path, record, row = _probe_row(results_dir, *EAGER)
    row["wrong_elements"].update(ret_b=3, in_b=3, view_b=3, total=9)
    if field:
        row["harness_failure"] = BROKE
    path.write_text(json.dumps(record))
    asv = _asv_result(results_dir, ledger_path)
    data = json.loads(asv.read_text())
    columns = data["result_columns"]
    moved = None if asv_value is None else 0
    for benchmark, value in (("track_wrong_elements", asv_value), ("track_moved_storages", moved)):
        entry = data["results"][f"snapshot_swap.Correctness.{benchmark}"]
        combos = list(itertools.product(*entry[columns.index("params")]))
        index = combos.index(("'foreach_clones'", "'eager'", "3"))
        entry[columns.index("result")][index] = value
    asv.write_text(json.dumps(data))


@pytest.fixture
def results_dir(tmp_path):
    copy = tmp_path / "results"
    shutil.copytree(RECORDED, copy)
    return copy


def _ends_with(builds_loaded, capsys) -> tuple[int, str]:
    """`make history`'s exit status and last line on these results, every build measured."""
    code = history.failed_at_end([], builds_loaded, {b.commit for b in builds_loaded})
    return code, capsys.readouterr().out.strip().splitlines()[-1]


def test_make_history_exits_1_naming_the_harness_failure_first(results_dir, ledger_path, capsys):
    _, before = _ends_with(results.load(results_dir, ledger_path), capsys)
    plant_harness_failure(results_dir, ledger_path)
    code, last = _ends_with(results.load(results_dir, ledger_path), capsys)
    assert code == 1
    count = int(before.split(" failure(s)")[0].rsplit(" ", 1)[1])
    assert last.startswith(f"writeback: {count + 1} failure(s): {NAMED}; "), last[:400]
    assert "track_wrong_elements(foreach_clones, eager, 3)" not in last  # named once, as above


def test_the_report_shows_it_as_a_harness_failure_and_names_it(results_dir, ledger_path):
    plant_harness_failure(results_dir, ledger_path)
    loaded = results.load(results_dir, ledger_path)
    build = next(b for b in loaded if b.tag == BUILD)
    state, words = results.verdict_state(build, *EAGER[1:], EAGER[0])
    assert (state, words) == ("harness failure", f"harness failure: {BROKE}")
    text = report.render(loaded)
    matrix = text.split("## Correctness over all builds", 1)[1]
    row = next(line for line in matrix.splitlines()
               if line.startswith("| snapshot_swap | foreach_clones | eager | 3 |"))  # fmt: skip
    assert row.rstrip(" |").endswith(f"**harness failure: {BROKE}** (changed)")
    failures = text.split("## Failures (nobody expected these)", 1)[1]
    assert f"- {NAMED}" in failures


def test_make_expected_refuses_to_propose_a_file_recording_it(results_dir, ledger_path, tmp_path,
                                                              capsys):  # fmt: skip
    plant_harness_failure(results_dir, ledger_path)
    args = ["--machine", "vm", "--results", str(results_dir), "--ledger", str(ledger_path)]
    code = expected.main(["check", *args, "--file", str(tmp_path / "absent.csv")])
    out = capsys.readouterr().out
    assert code == 1
    assert NAMED in out and "no replacement file is written" in out
    assert "# writeback expected results" not in out and "no expected results in" not in out


def _proposed(args, tmp_path, capsys) -> str:
    """The expected file `check` proposes for the recorded history (no harness failure)."""
    assert expected.main(["check", *args, "--file", str(tmp_path / "absent.csv")]) == 1
    return capsys.readouterr().out.split("\n\n", 1)[1]


def _with_eager_row(text: str, value: int) -> str:
    prefix = f"{BUILD},snapshot_swap,foreach_clones,eager,3,wrong_elements,"
    return text.replace(f"{prefix}0,0\n", f"{prefix}{value},0\n")


def test_make_expected_fails_on_a_harness_failure_the_file_records_too(
    results_dir, ledger_path, tmp_path, capsys
):
    """The incident: eager's count recorded as a number (no probe field, as then) and the
    same count committed into the expected file, which then passed the gate."""
    args = ["--machine", "vm", "--results", str(results_dir), "--ledger", str(ledger_path)]
    file = tmp_path / "expected.csv"
    file.write_text(_with_eager_row(_proposed(args, tmp_path, capsys), 9))
    plant_harness_failure(results_dir, ledger_path, asv_value=9, field=False)
    code = expected.main(["check", *args, "--file", str(file)])
    out = capsys.readouterr().out
    assert code == 1
    row = f"{BUILD}/snapshot_swap/foreach_clones/eager/3/wrong_elements"
    assert f"{row}: 9 (the eager reference broke its own contract)" in out
    assert "within their margins" not in out and "If every move is understood" not in out


def test_make_expected_refuses_to_pass_a_file_that_records_one(ledger_path, tmp_path, capsys):
    args = ["--machine", "vm", "--results", str(RECORDED), "--ledger", str(ledger_path)]
    file = tmp_path / "expected.csv"
    file.write_text(_with_eager_row(_proposed(args, tmp_path, capsys), 262144))
    code = expected.main(["check", *args, "--file", str(file)])
    out = capsys.readouterr().out
    assert code == 1
    assert "records 1 harness failure(s)" in out
    assert f"{BUILD}/snapshot_swap/foreach_clones/eager/3/wrong_elements: 262144" in out


def test_an_attribution_that_crashed_is_a_failure_everywhere(results_dir, ledger_path, tmp_path,
                                                             capsys):  # fmt: skip
    path, record, row = _probe_row(results_dir, "snapshot_swap", "foreach_clones", "inductor", 3)
    crash = "RuntimeError: planted crash (at attribution.py:1)"
    note = f"attribution failed: {crash}"
    row.update(attribution_error=crash, attribution={"method": None, "pass": None, "note": note})
    path.write_text(json.dumps(record))
    loaded = results.load(results_dir, ledger_path)
    named = f"attribution of snapshot_swap.foreach_clones (inductor, n=3) on {BUILD} (vm): {crash}"
    code, last = _ends_with(loaded, capsys)
    assert code == 1 and named in last
    text = report.render(loaded)
    assert f"- snapshot_swap.foreach_clones (3): ATTRIBUTION FAILED: {crash}" in text
    assert f"- {named}" in text.split("## Failures (nobody expected these)", 1)[1]
    args = ["--machine", "vm", "--results", str(results_dir), "--ledger", str(ledger_path)]
    assert expected.main(["check", *args, "--file", str(tmp_path / "absent.csv")]) == 1
    assert named in capsys.readouterr().out
