"""The scenario registry (benchmarks/registry.py): every scenario comes from its own module,
found as asv finds benchmarks, and a new scenario module is seen by the standalone check,
attribution, the report, the verdict page and the expected files without another edit."""

import itertools
import subprocess
import sys
from pathlib import Path

import pytest

import benchmarks
from benchmarks import asv_classes, registry, snapshot_swap
from tools import attribute, check, expected, report, results, verdict_page

ROOT = Path(__file__).resolve().parents[1]

TOY = '''
"""A toy scenario: copy b into a."""

import torch

from benchmarks import asv_classes
from benchmarks.contract import Case
from benchmarks.scenario import Control, Scenario


def copy_b(a, b):
    a.copy_(b)
    return a


def make_case(n):
    a, b = torch.zeros(n), torch.arange(n, dtype=torch.float32)
    return Case(inputs={"a": a, "b": b}, after={"a": b.clone(), "b": b.clone()},
                returns={"a": b.clone()})


TOY = Scenario(name=NAME, controls=(Control("copy_b", copy_b),), sizes=(3,), make_case=make_case)


class _Probed:
    scenario = TOY

    def setup_cache(self):
        return asv_classes.probe_for_asv(self.scenario)


class Correctness(_Probed, asv_classes.Correctness):
    pass


class Cost(_Probed, asv_classes.Cost):
    pass
'''


@pytest.fixture
def add_module(tmp_path, monkeypatch):
    """Put a module into the `benchmarks` package (a folder on its path, as a file dropped
    into benchmarks/ would be); the package, asv_classes' scenarios and sys.modules are
    restored afterwards."""
    monkeypatch.setattr(benchmarks, "__path__", [*benchmarks.__path__, str(tmp_path)])
    monkeypatch.setattr(asv_classes, "_SCENARIOS", dict(asv_classes._SCENARIOS))
    added = []

    def add(module: str, scenario_name: str):
        (tmp_path / f"{module}.py").write_text(TOY.replace("NAME", repr(scenario_name)))
        added.append(f"benchmarks.{module}")

    yield add
    for name in added:
        sys.modules.pop(name, None)


def _help(main, capsys) -> str:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    return " ".join(capsys.readouterr().out.split())  # argparse wraps the choices


def test_the_registry_holds_every_scenario_module_and_the_check_every_benchmark_module():
    found = registry.scenarios()
    assert found["snapshot_swap"] is snapshot_swap.SWAP
    assert {"aliasing", "tensordict_swap"} <= set(found)
    modules = registry.benchmark_modules()
    assert set(modules) - set(found) == {"snapshot_swap_configs", "corpus"}
    # a module with asv benchmarks the check cannot run would be a scenario it never checks
    assert set(modules) <= set(check.scenario_choices(found))
    assert check.checked_by_all(found)[0] == "snapshot_swap"


def test_a_new_scenario_module_is_seen_everywhere(add_module, capsys):
    add_module("toy_swap", "toy_swap")
    toy = registry.scenarios()["toy_swap"]
    assert [c.name for c in toy.controls] == ["copy_b"]
    module = registry.benchmark_modules()["toy_swap"]

    assert "toy_swap" in check.checked_by_all(registry.scenarios())
    assert "{snapshot_swap,aliasing,tensordict_swap,toy_swap," in _help(check.main, capsys)
    assert "toy_swap" in _help(attribute.main, capsys).split("--scenario {", 1)[1]

    # the report, the verdict page and the expected files read it from its results, named
    # after its module by asv
    build = results.BuildResult("torch-x", "0" * 40, "m", {"installed": True}, tag="torch-x")
    for benchmark, value in (("track_wrong_elements", 3), ("track_moved_storages", 0)):
        combos = itertools.product(*module.Correctness.params)
        build.values[f"toy_swap.Correctness.{benchmark}"] = {c: value for c in combos}
    build.probe = {("toy_swap", "copy_b", "inductor", 3): {"wrong_elements": {"in_a": 3}}}
    assert "| toy_swap | copy_b | inductor | 3 | wrong: 3 (in_a 3) |" in report.render([build])
    assert 'id="matrix-toy_swap" data-scenario="toy_swap"' in verdict_page.page([build], {})
    rows = expected.measured_rows([build])
    assert {(r.scenario, r.control, r.backend, r.metric) for r in rows} >= {
        ("toy_swap", "copy_b", "inductor", "wrong_elements")
    }


def test_a_scenario_named_otherwise_than_its_module_is_refused(add_module):
    add_module("toy_swap", "toy")
    with pytest.raises(ValueError, match="names the scenario 'toy': name it 'toy_swap'"):
        registry.scenarios()


def test_the_old_name_of_the_check_runs_the_same_command():
    """`python -m tools.check_snapshot_swap` (scripts call it) runs tools/check.py's main."""
    helps = {}
    for name in ("tools.check", "tools.check_snapshot_swap"):
        ran = subprocess.run([sys.executable, "-m", name, "--help"], cwd=ROOT,
                             capture_output=True, text=True, timeout=300)  # fmt: skip
        assert ran.returncode == 0, ran.stderr[-3000:]
        helps[name] = " ".join(ran.stdout.replace(f"python -m {name}", "PROG").split())
    assert helps["tools.check"] == helps["tools.check_snapshot_swap"]
    assert helps["tools.check"].startswith("usage: PROG [-h]")
