"""The committed long history (builds-long.txt, measured with `make history` in shards and
merged into results/) against the measurements taken independently of the suite on the same
releases (../shared/DESIGN.md, "More facts measured here (third round)": N=3, Inductor).

A release that the committed results do not hold yet is a skip naming it (the long history is
measured shard by shard, across sessions); one they hold must agree, control by control and
coordinate by coordinate."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools import builds, ledger, results

ROOT = Path(__file__).resolve().parents[1]
MACHINES = ("vm-amd-epyc-8d7c4d", "vm-amd-epyc-e8ce3c")
"""The machines whose long history is being measured (each the CPU at hand, with its default
history; their timelines are never mixed): the verdicts are the build's, on either CPU."""

INDEPENDENT = {
    "torch-2.1.0": {
        "foreach_clones": {"ret_b", "in_b", "view_b"},
        "explicit_copies": {"ret_b", "in_b", "view_b"},
        "select_swap": {"ret_b", "in_b", "view_b"},
        "foreach_computed": {"ret_b", "in_b", "view_b"},
        "stack_buffer": set(),
    },
    "torch-2.4.1": {
        "explicit_copies": {"ret_a", "in_a", "view_a"},
        "foreach_clones": set(),
        "select_swap": set(),
        "foreach_computed": set(),
        "stack_buffer": set(),
    },
}
"""Per release, each swap control's wrong coordinates under Inductor at N=3, as measured
independently (DESIGN.md: on 2.1.0 four controls wrong in `b`'s three coordinates and only
`stack_buffer` exact; on 2.4.1 only `explicit_copies`, in `a`)."""


@pytest.fixture(scope="module")
def long_builds(tmp_path_factory):
    path = tmp_path_factory.mktemp("ledger") / "ledger"
    files = [ROOT / "builds.txt", ROOT / "builds-long.txt"]
    ledger.build_branches(files, path)
    found = {}
    for machine in MACHINES:
        loaded = results.load(ROOT / "results", path, machine)
        found[machine] = {b.name: b for b in loaded if b.branch == ledger.branch_for(files[1])}
    return found


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("release", sorted(INDEPENDENT))
def test_the_swap_verdicts_equal_the_independent_measurements(long_builds, machine, release):
    build = long_builds[machine].get(release)
    if build is None:
        pytest.skip(f"{release} of builds-long.txt is not in the committed results of {machine} "
                    "yet (the long history is measured shard by shard)")  # fmt: skip
    found = {}
    for key, row in build.probe.items():
        scenario, control, backend, size = key[:4]
        if scenario == "snapshot_swap" and backend == "inductor" and str(size) == "3":
            wrong = row.get("wrong_elements") or {}
            found[control] = {c for c, n in wrong.items() if c != "total" and n}
    assert found == INDEPENDENT[release], (machine, release, found)


def test_the_long_ledger_is_the_builds_file_here():
    """The releases named above are lines of builds-long.txt (a renamed build would make the
    test above skip for ever)."""
    names = {b.name for b in builds.read(ROOT / "builds-long.txt")}
    assert set(INDEPENDENT) <= names
