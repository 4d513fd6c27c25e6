"""`asv run` of the whole suite at N=3 against this interpreter's torch, end to end.

Uses asv's `existing` environment (this interpreter, which has torch and asv_runner), a
throwaway results folder and machine file, and checks what asv wrote: every metric of
benchmarks/metrics.py with its unit, and that the Cost benchmarks were measured exactly for the
controls whose Correctness verdict was exact.
"""

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks import aliasing, metrics, snapshot_swap, snapshot_swap_configs
from benchmarks.corpus import run as corpus_run

ROOT = Path(__file__).resolve().parents[1]
SCENARIO_METRICS = {
    "snapshot_swap": (metrics.CONTRACT, metrics.COST),
    "aliasing": (metrics.CONTRACT,),
    "corpus": (metrics.CORPUS,),
    "snapshot_swap_configs": (metrics.CONTRACT,),
    "tensordict_swap": (metrics.CONTRACT, metrics.COST),
}
"""Each scenario module and the kinds of metric its asv classes carry."""
UNITS = {
    f"{scenario}.{metric.asv_name}": metric.unit
    for scenario, kinds in SCENARIO_METRICS.items()
    for kind in kinds
    for metric in metrics.of(kind)
}

QUICK_VARIANTS = ("inductor-fp32", "inductor-int64", "export-fp32")

pytestmark = pytest.mark.slow


def _asv(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "HOME": str(tmp_path),  # asv keeps its machine file in ~/.asv-machine.json
        "WRITEBACK_SIZES": "3",
        "WRITEBACK_VARIANTS": ",".join(QUICK_VARIANTS),  # no AOTInductor packages (minutes)
        "WRITEBACK_MACHINE": "writeback-test",
        # valgrind cannot run avx512 code: the instruction count needs code it runs as generated
        "WRITEBACK_ISA": "avx2",
        "WRITEBACK_CACHE": str(tmp_path / "inductor-cache"),
        "WRITEBACK_ARTIFACTS": str(tmp_path / "results" / "generated"),
        "WRITEBACK_INSTRUCTIONS": "1",  # the one test that runs callgrind (1-3 minutes)
        "WRITEBACK_CORPORA": "none",  # minutes; tests/test_corpus.py runs a tiny corpus
    }
    return subprocess.run(
        [sys.executable, "-m", "asv", *args, "--config", str(tmp_path / "asv.conf.json")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip


@pytest.fixture(scope="module")
def asv_results(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("asv")
    conf = json.loads((ROOT / "asv.conf.json").read_text())
    conf.update(
        repo=str(ROOT),
        benchmark_dir=str(ROOT / "benchmarks"),
        results_dir=str(tmp / "results"),
        html_dir=str(tmp / "html"),
        env_dir=str(tmp / "env"),
    )
    (tmp / "asv.conf.json").write_text(json.dumps(conf))
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    machine = _asv(tmp, "machine", "--yes", "--machine", "writeback-test")
    assert machine.returncode == 0, machine.stderr
    run = _asv(
        tmp, "run", "--environment", f"existing:{sys.executable}", "--set-commit-hash", commit,
        "--machine", "writeback-test", "--record-samples", "--show-stderr", "--quick",
    )  # fmt: skip
    files = [
        p for p in (tmp / "results" / "writeback-test").glob("*.json") if p.name != "machine.json"
    ]
    assert len(files) == 1, run.stdout[-3000:] + run.stderr[-3000:]
    return tmp, json.loads(files[0].read_text()), run


def _values(result: dict, name: str) -> dict[tuple, object]:
    """{param tuple: value} for one benchmark, from asv's result columns."""
    column = result["result_columns"].index("result")
    params_column = result["result_columns"].index("params")
    entry = result["results"][name]
    combos = _product(entry[params_column])
    return dict(zip(combos, entry[column]))


def _product(params):
    combos = [()]
    for values in params:
        combos = [c + (eval(v),) for c in combos for v in values]  # asv stores reprs
    return combos


def test_asv_finds_exactly_the_public_benchmarks_and_every_unit(asv_results):
    """Helpers named time_*/track_* anywhere under benchmarks/ would become benchmarks too."""
    tmp, result, _ = asv_results
    benchmarks = json.loads((tmp / "results" / "benchmarks.json").read_text())
    assert sorted(name for name in benchmarks if name != "version") == sorted(UNITS)
    for name, unit in UNITS.items():
        assert benchmarks[name]["unit"] == unit
        assert name in result["results"]


def test_correctness_is_a_number_for_every_combination(asv_results):
    """Every size stays a parameter: the one WRITEBACK_SIZES=3 leaves out is a skip (NaN)."""
    _, result, _ = asv_results
    wrong = _values(result, "snapshot_swap.Correctness.track_wrong_elements")
    assert len(wrong) == len(snapshot_swap.SWAP.controls) * 3 * 2
    patterns = _values(result, "aliasing.Correctness.track_wrong_elements")
    assert len(patterns) == len(aliasing.CATALOGUE.controls) * 3 * 2
    for values, measured in ((wrong, 3), (patterns, "small")):
        for combo, value in values.items():
            if combo[-1] == measured:
                assert isinstance(value, int), (combo, value)
            else:
                assert math.isnan(value), (combo, value)
    assert all(
        v == 0 for (control, backend, n), v in wrong.items() if backend == "eager" and n == 3
    )
    variants = _values(result, "snapshot_swap_configs.Correctness.track_wrong_elements")
    assert len(variants) == len(snapshot_swap.SWAP.controls) * len(snapshot_swap_configs.VARIANTS)
    for (control, variant), value in variants.items():
        if variant in QUICK_VARIANTS:
            assert isinstance(value, int), (control, variant, value)
        else:
            assert math.isnan(value), (control, variant, value)


def test_every_corpus_is_a_skip_that_names_the_knob_when_none_is_chosen(asv_results):
    """asv stores a skip as NaN (a failure as None) and prints the reason."""
    _, result, run = asv_results
    for name in (
        "corpus.Correctness.track_wrong_programs",
        "corpus.Correctness.track_wrong_families",
        "corpus.Correctness.track_failed_programs",
    ):
        values = _values(result, name)
        assert set(values) == {(b, c) for b in corpus_run.BACKENDS for c in corpus_run.CORPORA}
        assert all(isinstance(v, float) and math.isnan(v) for v in values.values()), values
    assert f"runs only when ${corpus_run.KNOB} names it" in run.stdout


def test_cost_is_measured_exactly_for_correct_controls(asv_results):
    _, result, _ = asv_results
    wrong = _values(result, "snapshot_swap.Correctness.track_wrong_elements")
    moved = _values(result, "snapshot_swap.Correctness.track_moved_storages")
    for name in UNITS:
        if not name.startswith("snapshot_swap.Cost."):
            continue
        for (control, n), value in _values(result, name).items():
            if n != 3:
                assert math.isnan(value), (name, control, n, value)  # left out: a skip
                continue
            correct = wrong[(control, "inductor", n)] == 0 and moved[(control, "inductor", n)] == 0
            assert value is not None, (name, control)  # never a failure
            assert math.isnan(value) != correct, (name, control, value)  # wrong: a skip


def test_generated_code_is_kept_beside_the_results(asv_results):
    tmp, _, _ = asv_results
    kept = list(
        (tmp / "results" / "generated").glob(
            "writeback-test-avx2/torch-*/avx2/snapshot_swap/*/n3/wrapper.py"
        )
    )
    assert len(kept) == len(snapshot_swap.SWAP.controls)


def test_asv_check_finds_no_problems(asv_results):
    tmp, _, _ = asv_results
    checked = _asv(tmp, "check", "--environment", f"existing:{sys.executable}")
    assert checked.returncode == 0 and "No problems found" in checked.stdout, checked.stdout


def test_every_costed_scenario_counts_in_the_forkserver_zygote_which_leaves_with_it(asv_results):
    """valgrind, torch and Inductor start once a build (in asv's forkserver), not once a costed
    scenario; nothing of it stays behind once asv is done."""
    tmp, result, _ = asv_results
    records = sorted((tmp / "results" / "generated").glob("*/torch-*/avx2/*/probe.json"))
    started_by = {
        path.parent.name: json.loads(path.read_text()).get("callgrind_zygote_started_by")
        for path in records
    }
    assert started_by["snapshot_swap"] == "this build's forkserver", started_by
    assert started_by["tensordict_swap"] == "this build's forkserver", started_by
    counts = _values(result, "snapshot_swap.Cost.track_instructions")
    assert any(isinstance(value, int) and value > 0 for value in counts.values()), counts
    deadline = time.monotonic() + 30  # it looks for its parent once a second
    while (leftover := _zygotes_under(tmp)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not leftover, f"zygote processes outlived asv: {leftover}"


def _zygotes_under(tmp: Path) -> list[str]:
    return [
        proc.name
        for proc in Path("/proc").iterdir()
        if proc.name.isdigit() and str(tmp) in _cmdline(proc) and "instructions" in _cmdline(proc)
    ]


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""
