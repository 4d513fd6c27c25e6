"""benchmarks/metrics.py: every metric once.

A toy metric added to the table alone (nothing else edited) is an asv benchmark with its unit
and version in what asv's discovery lists, a column of the report's cost table, rows of the
expected file gated by its own rule, charts of the verdict page and a key of the standalone
check's JSON rows, on the results `make history` recorded (tests/fixtures/history) with the
toy's values planted beside them. The benchmarks already published keep their names, units
and versions.
"""

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import metrics
from benchmarks.corpus import run as corpus_run
from tools import builds, expected, ledger, report, results, verdict_page

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "tests" / "fixtures" / "history" / "results"
COST = "snapshot_swap.Cost"

TOY = metrics.Metric(
    "track_toy_passes", metrics.COST, unit="toys", label="toy passes",
    doc="Toy passes of one warm call.", row_key="toy_passes",
    gate=metrics.Noisy(decimals=1, least_relative=0.5), chart="toy passes per call",
    version="writeback-toy-1",
)  # fmt: skip
TOY_VALUE = 4

PUBLISHED = {
    "Correctness.track_wrong_elements": ("elements", None),
    "Correctness.track_moved_storages": ("tensors", None),
    "Cost.time_warm_call": ("seconds", "writeback-warm-2"),
    "Cost.track_scratch_bytes": ("bytes", None),
    "Cost.track_full_length_loops": ("loops", None),
    "Cost.track_entrypoint_calls": ("calls", None),
    "Cost.track_time_over_floor": ("x floor", "writeback-floor-2"),
    "Cost.track_instructions": ("instructions", None),
    "Correctness.track_wrong_programs": ("programs", None),
    "Correctness.track_wrong_families": ("families", None),
    "Correctness.track_failed_programs": ("programs", None),
}
"""The benchmarks asv has published, with their unit and own version (None: their class's).
A changed one starts a new line in asv's graphs: change it here only on purpose."""

DISCOVER = """
import sys
out, sys.argv = sys.argv[1], ["benchmark.py", "discover"]  # as asv's runner: nothing compiles
from benchmarks import metrics
metrics.METRICS = (*metrics.METRICS, eval(sys.stdin.read(), vars(metrics)))  # the toy's repr
from asv_runner.discovery import list_benchmarks
with open(out, "w") as listing:
    list_benchmarks("benchmarks", listing)
"""
"""asv's discovery (`asv_runner.discovery`, what `asv run` runs to write benchmarks.json),
with a metric added to the table before the suite is imported."""


@pytest.fixture(scope="module")
def discovered(tmp_path_factory) -> dict[str, dict]:
    """What asv's discovery lists (as results/benchmarks.json holds it) with the toy metric
    in the table."""
    out = tmp_path_factory.mktemp("discovery") / "benchmarks.json"
    subprocess.run([sys.executable, "-c", DISCOVER, str(out)], input=repr(TOY), cwd=ROOT,
                   text=True, check=True, timeout=300)  # fmt: skip
    return {entry["name"]: entry for entry in json.loads(out.read_text())}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> list[results.BuildResult]:
    path = tmp_path_factory.mktemp("ledger") / "ledger"
    ledger.build_ledger(builds.read(ROOT / "builds.txt"), path)
    return results.load(RECORDED, path)


@pytest.fixture
def with_toy(monkeypatch, recorded) -> list[results.BuildResult]:
    """The table with the toy metric, and the recorded builds with its value measured for
    every timed snapshot swap combination."""
    monkeypatch.setattr(metrics, "METRICS", (*metrics.METRICS, TOY))
    planted = copy.deepcopy(recorded)
    for build in planted:
        timed = build.values.get(f"{COST}.time_warm_call", {})
        build.values[f"{COST}.{TOY.benchmark}"] = {combo: TOY_VALUE for combo in timed}
    return planted


def test_the_toy_metric_is_an_asv_benchmark_of_every_cost_class(discovered):
    for scenario in ("snapshot_swap", "tensordict_swap"):
        toy = discovered[f"{scenario}.Cost.track_toy_passes"]
        assert (toy["type"], toy["unit"], toy["version"]) == ("track", "toys", "writeback-toy-1")
        assert toy["params"] == discovered[f"{scenario}.Cost.track_scratch_bytes"]["params"]
    assert not [name for name in discovered if "toy" in name and ".Cost." not in name]


def test_every_benchmark_asv_lists_has_the_unit_and_version_of_its_table_entry(
    discovered, monkeypatch
):
    monkeypatch.setattr(metrics, "METRICS", (*metrics.METRICS, TOY))
    classes = {"Correctness": "writeback-1", "Cost": "writeback-1"}
    own = {"snapshot_swap_configs": "writeback-configs-2", "corpus": "writeback-4"}
    listed = set()
    for name, entry in discovered.items():
        scenario, asv_name = name.split(".", 1)
        metric = metrics.by_asv_name(asv_name)
        assert metric, f"{name} is not in benchmarks/metrics.py"
        version = metric.version or own.get(scenario) or classes[metric.asv_class]
        assert (entry["unit"], entry["version"]) == (metric.unit, version), name
        listed.add(asv_name)
    assert listed == {metric.asv_name for metric in metrics.METRICS}


def test_the_published_benchmarks_keep_their_names_units_and_versions():
    for asv_name, (unit, version) in PUBLISHED.items():
        metric = metrics.by_asv_name(asv_name)
        assert metric and (metric.unit, metric.version) == (unit, version), asv_name


def test_each_metric_is_named_once_and_a_corpus_metric_has_its_counter():
    for key in ("asv_name", "name"):
        names = [getattr(metric, key) for metric in metrics.METRICS]
        assert len(names) == len(set(names)), key
    for metric in metrics.of(metrics.CORPUS):
        assert callable(getattr(corpus_run, f"count_{metric.name}", None)), metric.name


def test_the_report_has_a_cost_column_for_the_toy_metric(with_toy):
    text = report.render(with_toy)
    header = next(line for line in text.splitlines() if line.startswith("| correct control |"))
    assert header.endswith("| instructions | toy passes |")
    rows = [line for line in text.splitlines() if line.startswith("| explicit_copies | 3 |")]
    assert rows and all(line.endswith(f" | {TOY_VALUE} |") for line in rows)


def test_the_expected_file_gates_the_toy_metric_by_its_own_rule(with_toy):
    measured = expected.measured_rows(with_toy)
    toy = [row for row in measured if row.metric == "toy_passes"]
    timed = sum(len(b.values.get(f"{COST}.time_warm_call", {})) for b in with_toy)
    assert len(toy) == timed > 0
    assert {(row.expected, row.margin) for row in toy} == {(TOY_VALUE, TOY_VALUE * 0.5)}
    assert f",toy_passes,{TOY_VALUE},2\n" in expected.render(measured)
    written = [expected.Row(*row.key, row.expected, 0) for row in toy]  # the least margin holds
    within = [expected.Row(*row.key, row.expected + 2, 0) for row in toy]
    assert expected.moved(written, within) == []
    beyond = [expected.Row(*row.key, row.expected + 2.5, 0) for row in toy]
    assert len(expected.moved(written, beyond)) == len(toy)
    assert any(line.startswith("toy_passes: ") for line in expected.drift(written, within))


def test_the_verdict_page_charts_the_toy_metric_with_its_unit(with_toy, discovered):
    html = verdict_page.cost_section(with_toy, discovered)
    for size in (3, 1048576):
        chart = html.split(f'data-benchmark="{COST}.track_toy_passes" data-size="{size}"')[1]
        chart = chart.split("</figure>")[0]
        assert f"toy passes per call, N={size:,}" in chart
        assert re.search(r'<text class="axis-label y-label"[^>]*>toys</text>', chart)


def test_the_checks_json_rows_carry_the_toy_metric(monkeypatch):
    from tools import check  # imports torch

    monkeypatch.setattr(metrics, "METRICS", (*metrics.METRICS, TOY))
    record = {"scenario": "snapshot_swap", "torch_version": "2.15.0", "torch_git_version": "x",
              "rows": [{"control": "select_swap", "backend": "inductor", "n": 3,
                        "toy_passes": TOY_VALUE}]}  # fmt: skip
    (row,) = check.json_rows(record)
    assert row["toy_passes"] == TOY_VALUE and row["instructions"] is None


def test_the_asv_classes_read_each_metric_from_the_row():
    from benchmarks import snapshot_swap  # imports torch

    row = {"wrong_elements": {"total": 9, "ret_b": 9}, "storages_moved": 1,
           "full_length_loops": 4, "entrypoint_calls": 1, "time_over_floor": 1.5,
           "instructions": 7201}  # fmt: skip
    correctness, cost = snapshot_swap.Correctness(), snapshot_swap.Cost()
    correctness.row = cost.row = row
    assert correctness.track_wrong_elements({}, "c", "inductor", 3) == 9
    assert correctness.track_moved_storages({}, "c", "inductor", 3) == 1
    for name in ("full_length_loops", "entrypoint_calls", "time_over_floor", "instructions"):
        assert getattr(cost, f"track_{name}")({}, "c", 3) == row[name]
    assert snapshot_swap.Cost.track_instructions.__doc__ == metrics.named("instructions").doc


def test_a_benchmark_method_or_setup_missing_from_the_table_is_refused():
    class Stray:
        def track_unlisted(self, record, n):
            return 0

    with pytest.raises(TypeError, match="track_unlisted"):
        metrics.asv_benchmarks(metrics.COST)(Stray)
    with pytest.raises(TypeError, match="track_unset"):
        metrics.asv_benchmarks(metrics.COST, setups={"track_unset": print})(type("C", (), {}))
