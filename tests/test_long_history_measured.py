"""The committed long history (builds-long.txt, measured with `make history` in shards and
merged into results/) against the measurements taken independently of the suite on the same
releases (../shared/DESIGN.md, "More facts measured here (third round)": N=3, Inductor).

A release that the committed results do not hold yet is a skip naming it (the long history is
measured shard by shard, across sessions); one they hold must agree, control by control and
coordinate by coordinate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools import builds, ledger, results

ROOT = Path(__file__).resolve().parents[1]


def _long_history_machines() -> tuple[str, ...]:
    """Every machine with a run of builds-long.txt in the committed run records (each the CPU
    at hand, with its default history; their timelines are never mixed): the verdicts are the
    build's, on any CPU."""
    return tuple(sorted({
        path.parent.name for path in (ROOT / "results" / "runs").glob("*/*.json")
        if json.loads(path.read_text()).get("builds_file") == "builds-long.txt"
    }))  # fmt: skip


MACHINES = _long_history_machines()

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


LONG_LINE_SCENARIOS = ("snapshot_swap", "aliasing", "tensordict_swap")
"""The scenarios issue 29 asks to see measured (or skipped with a reason) on every release:
the swap controls, the catalogue, TensorDict."""


@pytest.mark.slow
def test_the_page_of_the_committed_results_shows_every_release_of_a_complete_machine(tmp_path):
    """Issue 29's acceptance, on the committed results themselves: for each machine that
    holds every release of builds-long.txt, the verdict page written from results/ (every
    machine's, as `make merge` publishes it), opened from file:// in headless Chromium, has
    a strip for each row of the swap controls, the catalogue and TensorDict on that machine's
    long line, a cell a release (26), none of them "not run" (a value missing without a
    reason), and the swap strips agree with the independent measurements above. How long the
    page took to open is written to test-artifacts/verdict-page/open-time.log."""
    from playwright import sync_api as playwright

    from tests.test_verdict_page import FLAGS, Offline, opened_in, scrolled_to
    from tools import verdict_page
    from tools.site_browser import chromium

    files = [ROOT / "builds.txt", ROOT / "builds-long.txt"]
    ledger.build_branches(files, tmp_path / "ledger")
    loaded = results.load(ROOT / "results", tmp_path / "ledger")
    wanted = [b.name for b in builds.read(files[1])]
    branch = ledger.branch_for(files[1])
    held = {m: {b.name for b in loaded if b.machine == m and b.branch == branch} for m in MACHINES}
    complete = [m for m in MACHINES if held[m] >= set(wanted)]
    if not complete:
        pytest.skip("no machine holds every release of builds-long.txt yet: "
                    + "; ".join(f"{m} {len(held[m] & set(wanted))} of {len(wanted)}"
                                for m in MACHINES))  # fmt: skip
    benchmarks = json.loads((ROOT / "results" / "benchmarks.json").read_text())
    path = verdict_page.write(tmp_path / "html" / verdict_page.PAGE, loaded, benchmarks)
    columns = [b.split("-", 1)[1] for b in wanted]
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium(), args=FLAGS)
        seconds = opened_in(browser, path, f"the committed results, {len(loaded)} build results")
        print(f"the committed results' verdict page opened in {seconds:.3f} s")
        offline = Offline(browser)
        try:
            offline.page.goto(path.as_uri(), wait_until="load")
            for machine in complete:
                article = offline.page.locator(
                    f'#timeline article[data-line="builds-long on {machine}"]'
                )
                for scenario in LONG_LINE_SCENARIOS:
                    table = article.locator(f'table.strips[data-scenario="{scenario}"]')
                    assert table.count() == 1, (machine, scenario)
                    heads = scrolled_to(table.locator("thead th.release")).all_inner_texts()
                    assert heads == columns, (machine, scenario)
                    strips = table.locator("tbody.strip").evaluate_all(
                        "ss => ss.map(s => [s.dataset.row, "
                        "[...s.querySelectorAll('tr.verdicts td.s')].map(c => c.className)])"
                    )
                    assert strips, (machine, scenario)
                    for row, classes in strips:
                        assert len(classes) == len(wanted), (machine, row)
                        missing = [columns[i] for i, c in enumerate(classes) if "v-not-run" in c]
                        assert not missing, (machine, row, missing)
                for release, controls in INDEPENDENT.items():
                    i = wanted.index(release)
                    for control, wrong in controls.items():
                        strip = article.locator(
                            f'tbody.strip[data-row="snapshot_swap.{control} inductor 3"]'
                        )
                        cell = strip.locator("tr.verdicts td.s").nth(i)
                        state = "v-wrong" if wrong else "v-exact"
                        assert state in cell.get_attribute("class").split(), (
                            machine, release, control)  # fmt: skip
            assert offline.blocked == [] and offline.errors == []
        finally:
            offline.close()
            browser.close()
