"""The summary a run ends with (tools/summary.py) on the results recorded by `make history`
(tests/fixtures/history: torch 2.13.0, 2.14.1 and 2.15.0): one screen naming the wrong rows,
the flips and the failures of each build and where the full report is."""

import shutil
from pathlib import Path

import pytest

from tests.test_harness_failures import BROKE, plant_harness_failure
from tools import history, report, results, summary

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "tests" / "fixtures" / "history" / "results"
HTML = ROOT / "html"


@pytest.fixture(scope="module")
def loaded(ledger_path):
    return results.load(RECORDED, ledger_path)


def _build_lines(text: str, label: str) -> list[str]:
    """The lines of one build's entry: its heading and the indented lines under it."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(label))
    rest = lines[start + 1 :]
    return [lines[start]] + rest[: next(i for i, line in enumerate(rest) if line[:1] != " ")]


EXPLICIT = "snapshot_swap.explicit_copies inductor 3, 1,048,576: ret_a, in_a, view_a"
FOREACH = "snapshot_swap.foreach_clones inductor 3, 1,048,576: ret_b, in_b, view_b"
UNEXPLAINED = results.NO_VALUE


def test_one_screen_names_each_builds_wrong_rows_flips_and_failures(loaded):
    text = summary.summary(loaded, ROOT / "results" / "report.md", HTML)
    assert len(text.splitlines()) <= 40, text
    assert "| " not in text  # no table of the report
    first = _build_lines(text, "torch-2.13.0 (torch 2.13.0+cpu): 23 wrong verdicts")
    assert f"  wrong: {EXPLICIT}" in first
    assert "  wrong: aliasing.shift_clone inductor large: ret_x, in_x, view_x" in first
    second = _build_lines(text, "torch-2.14.1 (torch 2.14.1+cu130): 23 wrong verdicts")
    assert second[1] == "  wrong: the same as torch-2.13.0"
    last = _build_lines(text, "torch-2.15.0 (torch 2.15.0+cu132): 10 wrong verdicts")
    assert last[1] == "  wrong: the same as torch-2.14.1, but for:"  # what changed is a flip
    fixed = [line for line in last if line.startswith("  fixed since torch-2.14.1: ")]
    assert len(fixed) == 7 and fixed[0] == f"  fixed since torch-2.14.1: {EXPLICIT}"
    failed = [line for line in last if line.startswith("  failed: ")]
    first_failed = "snapshot_swap.Cost.time_warm_call(foreach_clones, 3)"
    assert failed == [f"  failed: {first_failed} and 23 more: {UNEXPLAINED}"]
    assert text.endswith(
        "The full report: results/report.md\n"
        "The verdict page: html/writeback/index.html (opens from the file system)\n"
        "The site: html/; serve it with `.venv/bin/asv preview` (http://127.0.0.1:8080)\n"
    )


def test_a_verdict_newly_wrong_is_named_broken(loaded):
    newest_first = list(reversed(loaded))
    text = summary.summary(newest_first, ROOT / "results" / "report.md", None)
    assert f"  BROKEN since torch-2.15.0: {EXPLICIT}" in text.splitlines()
    assert f"  wrong: {FOREACH}" in text.splitlines()  # the first build names every wrong row
    assert "The site" not in text  # a run that published nothing names no site


def test_a_harness_failure_is_the_first_failure_named(ledger_path, tmp_path):
    results_dir = tmp_path / "results"
    shutil.copytree(RECORDED, results_dir)
    plant_harness_failure(results_dir, ledger_path)
    text = summary.summary(results.load(results_dir, ledger_path), results_dir / "report.md", None)
    last = _build_lines(text, "torch-2.15.0 (torch 2.15.0+cu132)")
    failed = [line for line in last if line.startswith("  failed: ")]
    harness = "HARNESS FAILURE snapshot_swap.foreach_clones (eager, n=3)"
    assert failed[0] == f"  failed: {harness}: {BROKE}" and UNEXPLAINED in failed[1]


def test_make_history_writes_the_report_and_prints_the_summary(ledger_path, tmp_path, capsys):
    results_dir = tmp_path / "results"
    shutil.copytree(RECORDED, results_dir)
    loaded = history.write_report(results_dir, ledger_path, None, html=HTML)
    out = capsys.readouterr().out
    assert (results_dir / "report.md").read_text() == report.render(loaded)
    assert out.split("\n", 2)[2] == summary.summary(loaded, results_dir / "report.md", HTML)
    assert "| control |" not in out and f"The full report: {results_dir / 'report.md'}" in out


def test_a_controls_configuration_variants_wrong_alike_share_one_line():
    build = results.BuildResult("b", "0" * 40, "m", {"installed": True})
    wrong_b = {"wrong_elements": {"ret_b": 3, "in_b": 3, "total": 6}}
    build.probe = {
        ("snapshot_swap_configs", "x", "inductor-fp32", None): wrong_b,
        ("snapshot_swap_configs", "x", "aoti-fp32", None): wrong_b,
        ("snapshot_swap_configs", "x", "inductor-bf16", None): {
            "wrong_elements": {"ret_a": 3, "total": 3}
        },
        ("snapshot_swap", "x", "inductor", 3): wrong_b,
    }
    assert summary.grouped(build, list(build.probe)) == [
        "snapshot_swap_configs.x 2 variants (inductor-fp32, aoti-fp32): ret_b, in_b",
        "snapshot_swap_configs.x 1 variant (inductor-bf16): ret_a",
        "snapshot_swap.x inductor 3: ret_b, in_b",
    ]


def test_a_wrong_verdict_that_became_a_skip_is_not_passed_over_as_the_same():
    key = ("snapshot_swap", "x", "inductor", 3)
    assert summary._explained_by_flips({key: "wrong"}, {key: "exact"})
    assert not summary._explained_by_flips({key: "wrong"}, {key: "skipped"})
