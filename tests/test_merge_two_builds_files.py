"""One build measured by two builds files (a release in builds.txt and in builds-long.txt): a
commit of each ledger branch, but one records folder (`generated/<machine>/<build>/`, named by
the torch build). `tools/merge.py` keeps results/'s records, merges the other measurement's
asv result and install record, and compares the two measurements row by row; rows whose wrong
elements differ are a disagreement the merge reports (and exits 1 on, in `main`).

The folders are built here as `make history` lays them out (install records, probe and corpus
records), without running asv: the plan is what is checked.
"""

import json
import shutil
from pathlib import Path

import pytest

from benchmarks.machine import build_folder
from tools import merge

MACHINE = "vm-test-cpu-abc123"
IDENTITY = {"torch_version": "2.13.0+cpu", "torch_git_version": "cf30153c" + "0" * 32}
BUILD = build_folder(IDENTITY)


def _results(
    root: Path,
    commit: str,
    snapshot_rows: list[dict],
    corpus_rows: list[dict],
    config_wrong: int = 9,
) -> Path:
    """A results folder holding one build installed from ledger commit `commit`."""
    (root / "builds" / MACHINE).mkdir(parents=True)
    record = {"installed": True, "ledger_commit": commit, "machine": MACHINE, **IDENTITY}
    (root / "builds" / MACHINE / f"{commit}.json").write_text(json.dumps(record))
    isa = root / "generated" / MACHINE / BUILD / "avx2"
    (isa / "snapshot_swap").mkdir(parents=True)
    (isa / "snapshot_swap" / "probe.json").write_text(json.dumps({"rows": snapshot_rows}))
    (isa / "snapshot_swap" / "code.py").write_text(f"# generated in the run of {commit}\n")
    (isa / "snapshot_swap_configs").mkdir()
    (isa / "snapshot_swap_configs" / "probe.json").write_text(json.dumps({"rows": [
        {"control": "foreach_clones", "variant": variant, "n": 3, "wrong_elements": wrong}
        for variant, wrong in (("inductor-fp32", 9), ("cpp_wrapper-fp32", config_wrong))
    ]}))  # fmt: skip
    (isa / "corpus").mkdir()
    (isa / "corpus" / "seed0-500.json").write_text(json.dumps({"rows": corpus_rows}))
    (root / "benchmarks.json").write_text("{}")
    return root


def _swap(wrong_b: int) -> list[dict]:
    return [
        {"control": "select_swap", "backend": "inductor", "n": 3, "wrong_elements": 0},
        {"control": "foreach_clones", "backend": "inductor", "n": 3, "wrong_elements": wrong_b},
    ]


def _corpus(error: str) -> list[dict]:
    return [
        {"program": 1, "backend": "inductor", "wrong_elements": 4, "error": None},
        {"program": 2, "backend": "inductor", "wrong_elements": None, "error": error},
    ]


def _plan(tmp_path: Path, other_wrong_b: int, other_config: int = 9) -> tuple:
    here, there = "a" * 40, "b" * 40
    into = _results(tmp_path / "results", here, _swap(3), _corpus("IndexError: x"))
    placed = _corpus("IndexError: x (at functional_utils.py:333)")
    folder = _results(tmp_path / "long", there, _swap(other_wrong_b), placed, other_config)
    return (
        merge.plan_merge([folder], into, {here, there}, "builds.txt, builds-long.txt"),
        into,
        folder,
    )


def test_the_records_here_are_kept_and_the_other_install_record_is_merged(tmp_path):
    plan, into, folder = _plan(tmp_path, other_wrong_b=3)
    copied = {target.relative_to(into) for target in plan.copies}
    assert Path("builds", MACHINE, f"{'b' * 40}.json") in copied
    assert not [path for path in copied if path.parts[0] == "generated"], copied
    assert plan.disagreements == []
    (note,) = plan.notes
    assert (
        note.startswith(
            f"{BUILD} on {MACHINE} was measured by two builds files (ledger "
            "commit aaaaaaaa here, bbbbbbbb in"
        )
        and f"kept results/generated/{MACHINE}/{BUILD}/" in note
    )
    assert (
        "avx2/snapshot_swap/probe.json: rows 2 (kept) and 2 (the other); wrong elements "
        "differ in 0, error texts in 0" in note
    )
    assert (
        "avx2/corpus/seed0-500.json: rows 2 (kept) and 2 (the other); wrong elements "
        "differ in 0, error texts in 1" in note
    )


def test_rows_whose_wrong_elements_differ_are_a_disagreement(tmp_path):
    plan, _, _ = _plan(tmp_path, other_wrong_b=0)
    (note,) = plan.notes
    assert "wrong elements differ in 1, error texts in 0" in note
    assert "foreach_clones/inductor/3: wrong elements 3 (kept), 0 (the other)" in note
    (disagreement,) = plan.disagreements
    assert disagreement.startswith(f"{BUILD} on {MACHINE}: the two measurements disagree in 1 ")


def test_configuration_rows_are_told_apart_by_their_variant(tmp_path):
    """snapshot_swap_configs' rows share control and size and differ in variant: one variant
    that differs is one row, named by its variant."""
    plan, _, _ = _plan(tmp_path, other_wrong_b=3, other_config=0)
    (note,) = plan.notes
    assert (
        "avx2/snapshot_swap_configs/probe.json: rows 2 (kept) and 2 (the other); wrong "
        "elements differ in 1" in note
    )
    assert "foreach_clones/cpp_wrapper-fp32/3: wrong elements 9 (kept), 0 (the other)" in note
    assert len(plan.disagreements) == 1


def test_rows_that_cannot_be_told_apart_refuse_the_merge(tmp_path):
    here, there = "a" * 40, "b" * 40
    into = _results(tmp_path / "results", here, _swap(3) + _swap(3), _corpus("e"))
    folder = _results(tmp_path / "long", there, _swap(3), _corpus("e"))
    with pytest.raises(merge.Refused, match="2 of its 4 rows share their coordinates"):
        merge.plan_merge([folder], into, {here, there}, "builds.txt, builds-long.txt")


def test_the_same_build_from_the_same_ledger_commit_is_still_measured_twice(tmp_path):
    """A folder that measured the same ledger commit again is not another builds file's: its
    records conflict with results/'s and the merge is refused as before."""
    commit = "a" * 40
    into = _results(tmp_path / "results", commit, _swap(3), _corpus("e"))
    folder = _results(tmp_path / "again", commit, _swap(0), _corpus("e"))
    with pytest.raises(merge.Refused, match="the same thing measured twice"):
        merge.plan_merge([folder], into, {commit}, "builds.txt")


def test_merging_the_same_folder_again_keeps_the_records_here_again(tmp_path):
    """Once the other builds file's install record is merged, merging its folder again finds the
    same build measured twice (results/ holds it from a commit the folder has not measured)."""
    plan, into, folder = _plan(tmp_path, other_wrong_b=3)
    merge.apply(plan, into)
    again = merge.plan_merge([folder], into, {"a" * 40, "b" * 40}, "builds.txt, builds-long.txt")
    assert again.copies == {} and len(again.notes) == 1


def _clone_of(into: Path, root: Path, commit: str, snapshot_rows: list[dict]) -> Path:
    """A clone of `into` (its install records carried along) that measured the build again
    from ledger commit `commit`: `make history` in a fresh clone of main."""
    shutil.copytree(into, root)
    record = {"installed": True, "ledger_commit": commit, "machine": MACHINE, **IDENTITY,
              "attempted_at": "2026-12-07T16:13:16Z"}  # fmt: skip
    (root / "builds" / MACHINE / f"{commit}.json").write_text(json.dumps(record))
    probe = root / "generated" / MACHINE / BUILD / "avx2" / "snapshot_swap" / "probe.json"
    probe.write_text(json.dumps({"rows": snapshot_rows}))
    return root


def test_a_clone_carrying_the_other_install_record_measured_it_by_its_own_commit(tmp_path):
    """A shard measured in a clone of main carries results/'s install record of the build (the
    builds.txt commit) beside its own (the builds-long.txt one): still one build measured by
    two builds files, its records compared, not a conflict; and merged once, merging the
    clone again finds the same."""
    here, there = "c" * 40, "b" * 40  # the clone's own commit sorts first
    into = _results(tmp_path / "results", here, _swap(3), _corpus("e"))
    clone = _clone_of(into, tmp_path / "clone", there, _swap(0))
    plan = merge.plan_merge([clone], into, {here, there}, "builds.txt, builds-long.txt")
    (note,) = plan.notes
    assert "ledger commit cccccccc here, bbbbbbbb in" in note, note
    assert "foreach_clones/inductor/3: wrong elements 3 (kept), 0 (the other)" in note
    copied = {target.relative_to(into) for target in plan.copies}
    assert copied == {Path("builds", MACHINE, f"{there}.json")}, copied
    merge.apply(plan, into)
    again = merge.plan_merge([clone], into, {here, there}, "builds.txt, builds-long.txt")
    assert again.copies == {} and len(again.notes) == 1, again.notes
    assert "ledger commit cccccccc here, bbbbbbbb in" in again.notes[0], again.notes


@pytest.mark.parametrize("cloned_after_the_other_merged", [True, False])
def test_a_clone_that_measured_nothing_of_the_build_is_no_second_measurement(
    tmp_path, cloned_after_the_other_merged
):
    """A clone that carries the build's records unchanged (a shard that did not measure this
    build) notes nothing about it and copies nothing, whether it was cloned after the other
    builds file's install record was merged or before (it then lacks that record)."""
    here, there = "a" * 40, "b" * 40
    into = _results(tmp_path / "results", here, _swap(3), _corpus("e"))
    record = {"installed": True, "ledger_commit": there, "machine": MACHINE, **IDENTITY}
    other = into / "builds" / MACHINE / f"{there}.json"
    other.write_text(json.dumps(record))
    shutil.copytree(into, tmp_path / "clone")
    if not cloned_after_the_other_merged:
        (tmp_path / "clone" / "builds" / MACHINE / f"{there}.json").unlink()
    left = into / "generated" / MACHINE / BUILD / "avx2" / "snapshot_swap_configs" / "packages"
    left.mkdir()
    (left / "x.pt2").write_bytes(b"an ignored package an earlier run left in the checkout")
    plan = merge.plan_merge(
        [tmp_path / "clone"], into, {here, there}, "builds.txt, builds-long.txt"
    )
    assert plan.notes == [] and plan.copies == {}
