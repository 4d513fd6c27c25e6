"""tools/ as a package, and the one wording of the tables it prints: every tool runs as
`python -m tools.NAME` from a fresh copy of the project with nothing added to `sys.path`; the
report and the standalone check word a verdict with the same function (tools/render.py); the
report shows the cost table of every scenario with Cost benchmarks, from the committed
results."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools import builds, ledger, render, report, results

ROOT = Path(__file__).resolve().parents[1]
# every command of tools/ (render: the library the report and the check share; results: the
# results model the report and the other tools read; time_spent: the report's time table;
# summary: what `make history` and `make merge` print at the end; disk: the disk a run uses,
# which `make history` samples and the install command bounds)
TOOLS = sorted(
    p.stem
    for p in (ROOT / "tools").glob("*.py")
    if p.stem not in ("__init__", "render", "results", "time_spent", "summary", "disk")
)
COMMITTED = ROOT / "results"


@pytest.fixture(scope="module")
def fresh_copy(tmp_path_factory):
    """tools/, benchmarks/ and the configuration copied alone, as a user's checkout has them."""
    work = tmp_path_factory.mktemp("fresh") / "project"
    for folder in ("tools", "benchmarks"):
        shutil.copytree(ROOT / folder, work / folder, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("asv.conf.json", "builds.txt"):
        shutil.copy(ROOT / name, work / name)
    return work


@pytest.mark.parametrize("name", TOOLS)
def test_every_tool_runs_as_a_module_from_a_fresh_copy(fresh_copy, name):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run([sys.executable, "-m", f"tools.{name}", "--help"], cwd=fresh_copy,
                            env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    usage = "usage: asv" if name == "asv_project" else f"usage: python -m tools.{name}"
    assert result.stdout.startswith(usage), result.stdout[:200]


def test_nothing_edits_sys_path():
    sources = [*(ROOT / "tools").glob("*.py"), *(ROOT / "tests").glob("*.py")]
    edits = [p.name for p in sources if p != Path(__file__) and "sys.path.insert" in p.read_text()]
    assert edits == []


def test_render_imports_nothing_outside_the_standard_library():
    """The check imports tools/render.py inside a benchmark environment (torch, no tools)."""
    code = (
        "import sys, tools.render; "
        "print(sorted(m for m in sys.modules if m.startswith(('asv', 'torch', 'tools.'))))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, check=True)  # fmt: skip
    assert result.stdout.strip() == "['tools.render']"


@pytest.fixture(scope="module")
def committed(tmp_path_factory):
    path = tmp_path_factory.mktemp("ledger") / "ledger"
    ledger.build_ledger(builds.read(ROOT / "builds.txt"), path)
    loaded = [b for b in results.load(COMMITTED, path) if b.installed]
    assert loaded, "no committed results to report"
    return loaded


def test_the_report_and_the_check_word_every_committed_verdict_alike(committed):
    """The report words a verdict from asv's numbers and the probe record beside them; the
    check words the probe row it just measured. Both go through tools/render.py, so on every
    committed row whose asv result and probe row agree the words are the same."""
    from tools import check  # imports torch

    compared = 0
    for build in committed:
        for (scenario, control, backend, n), row in build.probe.items():
            state, words = results.verdict_state(build, control, backend, n, scenario)
            if state == "not run":
                continue
            assert render.row_verdict(row) == (state, words), (build.tag, scenario, control)
            assert check._cell(row) == words
            compared += 1
    assert compared > 100


def test_one_function_words_a_wrong_verdict_for_both(monkeypatch):
    row = {"wrong_elements": {"total": 4, "in_b": 1, "ret_b": 3, "view_b": 0},
           "storages_moved": 1, "skipped": None, "error": None,
           "attribution": {"pass": "reinplace_inplaceable_ops"}}  # fmt: skip
    expected = "wrong: 4 (ret_b 3, in_b 1); 1 storage moved; pass: reinplace_inplaceable_ops"
    assert render.row_verdict(row) == ("wrong", expected)
    build = results.BuildResult("b", "0" * 40, "m", {"installed": True})
    build.values = {
        f"{results.CORRECTNESS}.track_wrong_elements": {("c", "inductor", 3): 4},
        f"{results.CORRECTNESS}.track_moved_storages": {("c", "inductor", 3): 1},
    }
    build.probe = {("snapshot_swap", "c", "inductor", 3): row}
    assert results.verdict(build, "c", "inductor", 3) == expected
    calls = []
    monkeypatch.setattr(render, "verdict", lambda *a, **k: calls.append(a) or "stub")
    assert results.verdict(build, "c", "inductor", 3) == "stub"
    assert render.row_verdict(row)[1] == "stub" and len(calls) == 2


def test_the_report_shows_the_cost_table_of_every_scenario_with_cost_benchmarks(committed):
    measured = json.loads((COMMITTED / "benchmarks.json").read_text())
    with_cost = sorted({key.split(".")[0] for key in measured if ".Cost." in key})
    assert "tensordict_swap" in with_cost
    text = report.render(committed)
    for build in committed:
        section = text.split(f"## {build.label} on {build.machine}\n", 1)[1].split("\n## ")[0]
        for scenario in with_cost:
            assert f"Cost of the correct `{scenario}` controls (Inductor):" in section
    tensordict = text.split("Cost of the correct `tensordict_swap` controls (Inductor):", 1)[1]
    assert "| two_updates_clones_first | 1,048,576 | 4,194,304 B (4 MiB) | 3 | 1 |" in tensordict
