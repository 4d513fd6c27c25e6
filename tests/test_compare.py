"""`make compare` (tools/compare.py) on the recorded history with a patch build added: what a
patch changes against its base, both ways, in verdicts, corpus programs and costs."""

import json
import shutil
from pathlib import Path

import pytest

from benchmarks.machine import build_folder
from tests.shipped import releases_text
from tools import builds, compare, ledger

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "tests" / "fixtures" / "history" / "results"
PATCH = "fix-copy"
DIFF = b"""diff --git a/torch/_inductor/reinplace.py b/torch/_inductor/reinplace.py
index 1111111..2222222 100644
--- a/torch/_inductor/reinplace.py
+++ b/torch/_inductor/reinplace.py
@@ -1,3 +1,3 @@
 import torch
-KEEP = False
+KEEP = True
 x = 1
"""


def _corpus(folder: Path, wrong: dict[int, int]) -> None:
    """A generated corpus record `toy` of two programs, wrong by `wrong` (program: elements)."""
    rows = [{"backend": "inductor", "program": p, "error": None, "wrong_elements": wrong.get(p, 0),
             "coordinates": {}, "family": None} for p in (3, 4)]  # fmt: skip
    record = {
        "corpus": "toy",
        "programs": 2,
        "backends": ["inductor"],
        "families": [],
        "rows": rows,
    }
    (folder / "avx512" / "corpus").mkdir(parents=True, exist_ok=True)
    (folder / "avx512" / "corpus" / "toy.json").write_text(json.dumps(record))


def patched_history(tmp: Path) -> tuple[Path, Path]:
    """The recorded history (torch 2.13.0, 2.14.1 and 2.15.0 on machine `vm`) with PATCH, a
    patch build of 2.14.1 measured as 2.15.0 was: its asv results and probe records are
    2.15.0's, filed as the patch's; a toy corpus whose program 3 the patch fixes and program
    4 it breaks. Returns (the results folder, the ledger)."""
    results = tmp / "results"
    shutil.copytree(RECORDED, results)
    (tmp / "fix.diff").write_bytes(DIFF)
    text = releases_text() + f"patch 2.14.1 diff=fix.diff name={PATCH} pr=198132\n"
    _, base, measured, fix = ledger.build_ledger(builds.parse(text, folder=tmp), tmp / "ledger")
    data = json.loads(
        (results / "vm" / f"{measured.commit[:8]}-virtualenv-py3.11.json").read_text()
    )
    data["commit_hash"] = fix.commit
    (results / "vm" / f"{fix.commit[:8]}-virtualenv-py3.11.json").write_text(json.dumps(data))
    record = json.loads((results / "builds" / "vm" / f"{base.commit}.json").read_text())
    patch = {**fix.build["patch"], "patched": ["torch/_inductor/reinplace.py"],
             "skipped": ["test/inductor/test_reinplace.py"]}  # fmt: skip
    record |= {**fix.build, "ledger_commit": fix.commit, "patch": patch,
               "torch_patch": patch["diff_sha256"]}  # fmt: skip
    (results / "builds" / "vm" / f"{fix.commit}.json").write_text(json.dumps(record))
    generated = results / "generated" / "vm"
    shutil.copytree(generated / "torch-2.15.0+cu132-d0f2af8b", generated / build_folder(record))
    _corpus(generated / "torch-2.14.1+cu130-5c488690", {3: 6})
    _corpus(generated / build_folder(record), {4: 5})
    return results, tmp / "ledger"


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    results, ledger_path = patched_history(tmp_path_factory.mktemp("compare"))
    return ["--machine", "vm", "--results", str(results), "--ledger", str(ledger_path)]


def test_a_patch_against_its_base_shows_every_flip_both_ways_and_every_cost_that_moved(
    history, capsys
):
    assert compare.main(["torch-2.14.1", PATCH, *history]) == 1  # it breaks a program
    out = capsys.readouterr().out
    assert out.startswith(f"torch-2.14.1 -> {PATCH} on vm\n  {PATCH}: torch-2.14.1 with fix.diff")
    assert "; pull request https://github.com/pytorch/pytorch/pull/198132\n" in out
    assert "  patched: torch/_inductor/reinplace.py\n" in out
    assert "  skipped (not in the wheel): test/inductor/test_reinplace.py\n" in out
    assert ("  fixed: snapshot_swap/explicit_copies/inductor/3: wrong: 9 (ret_a 3, in_a 3, "
            "view_a 3) -> exact\n") in out  # fmt: skip
    assert "  fixed: corpus toy program 3 (inductor): wrong: 6 -> exact\n" in out
    assert "  BROKEN: corpus toy program 4 (inductor): exact -> wrong: 5\n" in out
    assert ("  snapshot_swap/explicit_copies/1,048,576 runtime scratch: costed only in HEAD: "
            "4,194,304 B (4 MiB)\n") in out  # fmt: skip
    loops = "explicit_copies/1,048,576 full-length loops: costed only in HEAD: 3 loops\n"
    assert f"  snapshot_swap/{loops}" in out
    assert "Warm-call time (asv compare; - faster, + slower, ! failing now):\n" in out
    assert f"{PATCH} breaks 1 verdict(s) torch-2.14.1 had exact." in out


def test_costs_that_moved_are_given_in_their_units_with_ratios(history, capsys):
    compare.main(["torch-2.13.0", "torch-2.15.0", *history])
    costs = capsys.readouterr().out.split("Cost figures that moved")[1].split("\n\n")[0]
    lines = [line for line in costs.splitlines()[1:] if " -> " in line]
    assert lines, costs
    for line in lines:
        assert line.rstrip(")").split(" (x")[-1].split(",")[0].replace(".", "").isdigit(), line


def test_a_release_that_fixes_only_exits_0_and_one_that_breaks_exits_1(history, capsys):
    assert compare.main(["torch-2.14.1", "torch-2.15.0", *history]) == 0
    assert "fixed: snapshot_swap/explicit_copies/inductor/3" in capsys.readouterr().out
    assert compare.main(["torch-2.15.0", "torch-2.14.1", *history]) == 1
    assert "BROKEN: snapshot_swap/explicit_copies/inductor/3" in capsys.readouterr().out


def test_a_build_without_results_is_named(history, capsys):
    assert compare.main(["torch-2.15.0", "pr-1", *history]) == 2
    error = capsys.readouterr().err
    assert error.startswith("writeback: no results of pr-1 on vm in ")
    assert f"(it has: torch-2.13.0, torch-2.14.1, {PATCH}, torch-2.15.0)" in error
