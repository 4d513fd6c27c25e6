"""The verdict page (tools/verdict_page.py) as a person sees it.

The page is written from the results recorded by `make history` (tests/fixtures/history, with
a ledger built from builds.txt), opened from file:// in Debian's headless Chromium driven by
Playwright, with every request that is not for a file:// address aborted and recorded. A page
that needs a server or the network fails here; a page with a CDN script shows that the check
can fail. Screenshots of a page that fails a check are kept in test-artifacts/verdict-page/;
how long the page of a 26-release history took to open is written to
test-artifacts/verdict-page/open-time.log (read, never asserted: it depends on the machine).
"""

import json
import re
import shutil
import subprocess
import sys
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import pytest
from playwright import sync_api as playwright

from tests import corpus_history
from tests.test_harness_failures import BROKE, plant_harness_failure
from tools import offline_site, render, results, site_browser, verdict_page
from tools.site_browser import Server, chromium

ROOT = Path(__file__).resolve().parents[1]

RECORDED = ROOT / "tests" / "fixtures" / "history" / "results"
ARTIFACTS = ROOT / "test-artifacts" / "verdict-page"
FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync",
]  # fmt: skip
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def recorded(ledger_path):
    return results.load(RECORDED, ledger_path)


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as driver:
        opened = driver.chromium.launch(executable_path=chromium(), args=FLAGS)
        yield opened
        opened.close()


class Offline:
    """A page whose requests other than file:// (or `allowed`) are aborted and recorded."""

    def __init__(self, browser, allowed: str = "file://"):
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.blocked, self.errors = [], []
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.allowed = allowed

    def _route(self, route):
        if route.request.url.startswith(self.allowed):
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort()

    def close(self):
        self.context.close()


@contextmanager
def opened(browser, url: str, screenshot: str, allowed: str = "file://"):
    """The page at `url`, offline; a screenshot kept when a check inside fails."""
    offline = Offline(browser, allowed)
    try:
        offline.page.goto(url)
        yield offline
    except Exception:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        offline.page.screenshot(path=ARTIFACTS / f"{screenshot}.png", full_page=True)
        raise
    finally:
        offline.close()


def _write(tmp: Path, results_dir: Path, ledger_path: Path) -> Path:
    loaded = results.load(results_dir, ledger_path)
    benchmarks = json.loads((results_dir / "benchmarks.json").read_text())
    return verdict_page.write(tmp / "html" / verdict_page.PAGE, loaded, benchmarks)


def scrolled_to(locator):
    """`locator`, scrolled to as a person scrolls to it, once the page has drawn it: the page
    renders its tables only as they near the screen (`content-visibility: auto`: with lighter
    cells, it took the committed results' page from 1.43-2.15 s to 0.44-0.58 s to open,
    results/logs/verdict-page-open-time-before-and-after-lighter-cells.log), and a table not
    yet drawn has no rendered text (`inner_text` reads '')."""
    locator.first.scroll_into_view_if_needed()
    locator.first.evaluate(
        "e => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
    )
    return locator


def _shown(locator) -> str:
    """The text a person reads in `locator` (`scrolled_to`)."""
    return scrolled_to(locator).inner_text()


def _cell(page, scenario: str, control: str, backend: str, size: str, build: int):
    row = page.locator(f'#matrix-{scenario} tbody tr[data-backend="{backend}"]').filter(
        has=page.locator("th", has_text=control)
    )
    row = row.filter(has=page.locator("td.size", has_text=size))
    return row.locator("td.v").nth(build)


def test_the_page_shows_every_matrix_and_the_cost_charts_offline(
    browser, recorded, ledger_path, tmp_path
):
    path = _write(tmp_path, RECORDED, ledger_path)
    expected = {
        scenario: {combo for b in recorded for combo in b.values.get(f"{scenario}.{results.WRONG}")}
        for scenario in results.scenarios(recorded[0])
    }
    assert set(expected) == {"snapshot_swap", "aliasing"}
    with opened(browser, path.as_uri(), "matrix") as offline:
        page = offline.page
        for scenario, combos in expected.items():
            section = page.locator(f"#matrix-{scenario}")
            assert section.is_visible(), scenario
            rows = section.locator("tbody tr")
            assert rows.count() == len(combos), scenario
            cells = section.locator("td.v")
            assert cells.count() == len(combos) * len(recorded)
            states = cells.evaluate_all(
                "cells => cells.map(c => [...c.classList].find(k => k.startsWith('v-')))"
            )
            assert set(states) <= {f"v-{s.replace(' ', '-')}" for s in render.VERDICT_STATES}
            assert cells.last.is_visible()

        fixed = _cell(page, "snapshot_swap", "explicit_copies", "inductor", "3", 2)
        assert fixed.locator(".flip-mark").is_visible()
        assert _shown(fixed.locator(".flip-mark")) == "\u25b2 fixed"
        assert "v-exact" in fixed.get_attribute("class")
        assert fixed.get_attribute("title") == "exact"
        before = _cell(page, "snapshot_swap", "explicit_copies", "inductor", "3", 1)
        assert before.get_attribute("title") == "wrong: 9 (ret_a 3, in_a 3, view_a 3)"
        assert before.locator(".flip-mark").count() == 0
        steady = _cell(page, "snapshot_swap", "stack_buffer", "inductor", "3", 2)
        assert steady.locator(".flip-mark").count() == 0

        benchmarks = json.loads((RECORDED / "benchmarks.json").read_text())
        charts = page.locator("#cost figure.chart")
        shown = {
            (c.get_attribute("data-benchmark"), c.get_attribute("data-size")) for c in charts.all()
        }
        assert shown == {
            (f"snapshot_swap.{metric.asv_name}", size)
            for metric in verdict_page.charted()
            for size in ("3", "1048576")
        }
        for chart in charts.all():
            chart.scroll_into_view_if_needed()
            assert chart.locator("svg").is_visible()
            unit = benchmarks[chart.get_attribute("data-benchmark")]["unit"]
            assert chart.locator("svg text.y-label").text_content() == unit
            assert chart.locator("svg circle.point").count() > 0
            assert chart.locator("svg circle.point").first.is_visible()
        assert offline.blocked == [] and offline.errors == []


def test_the_filters_keep_what_is_wrong_or_changing(browser, ledger_path, tmp_path):
    path = _write(tmp_path, RECORDED, ledger_path)
    with opened(browser, path.as_uri(), "filters") as offline:
        page = offline.page
        rows = page.locator("section.matrix tbody tr")
        everything = rows.count()
        page.check("#only-interesting")
        page.check("#only-inductor")
        shown = [r for r in rows.all() if r.is_visible()]
        assert 0 < len(shown) < everything
        assert _cell(page, "snapshot_swap", "explicit_copies", "inductor", "3", 2).is_visible()
        assert not _cell(page, "snapshot_swap", "stack_buffer", "inductor", "3", 2).is_visible()
        page.check("#full-words")
        words = _cell(page, "snapshot_swap", "foreach_clones", "inductor", "3", 0)
        assert words.inner_text() == "wrong: 9 (ret_b 3, in_b 3, view_b 3)"


def test_a_cell_names_the_pass_attribution_found(browser, ledger_path, tmp_path):
    results_dir = tmp_path / "results"
    shutil.copytree(RECORDED, results_dir)
    probe = next(results_dir.glob("generated/vm/torch-2.15.0*/*/snapshot_swap/probe.json"))
    record = json.loads(probe.read_text())
    row = next(
        r
        for r in record["rows"]
        if (r["control"], r["backend"], r["n"]) == ("foreach_clones", "inductor", 3)
    )
    row["attribution"] = {"method": "compiler_bisector", "pass": "reinplace_inplaceable_ops"}
    probe.write_text(json.dumps(record))
    path = _write(tmp_path, results_dir, ledger_path)
    with opened(browser, path.as_uri(), "attribution") as offline:
        cell = _cell(offline.page, "snapshot_swap", "foreach_clones", "inductor", "3", 2)
        assert cell.locator(".pass").is_visible()
        assert _shown(cell.locator(".pass")) == "reinplace_inplaceable_ops"
        assert cell.get_attribute("title").endswith("; pass: reinplace_inplaceable_ops")
        earlier = _cell(offline.page, "snapshot_swap", "foreach_clones", "inductor", "3", 1)
        assert earlier.locator(".pass").count() == 0


def test_a_harness_failure_is_its_own_state_on_the_page(browser, ledger_path, tmp_path):
    results_dir = tmp_path / "results"
    shutil.copytree(RECORDED, results_dir)
    plant_harness_failure(results_dir, ledger_path)
    path = _write(tmp_path, results_dir, ledger_path)
    with opened(browser, path.as_uri(), "harness-failure") as offline:
        page = offline.page
        warning = page.locator("#matrix-snapshot_swap .harness-failures")
        assert warning.is_visible()
        assert warning.inner_text().startswith("HARNESS FAILURE in 1 cell(s)")
        cell = _cell(page, "snapshot_swap", "foreach_clones", "eager", "3", 2)
        assert "v-harness-failure" in cell.get_attribute("class")
        assert cell.get_attribute("title") == f"harness failure: {BROKE}"
        assert _shown(cell.locator(".short")) == "harness failure"
        colours = cell.evaluate(  # the cell's, then the legend's other states'
            "c => [c, ...['v-wrong', 'v-failed', 'v-skipped', 'v-not-run'].map(k => "
            "document.querySelector('ul.states .' + k))].map(e => getComputedStyle(e).background)"
        )
        assert colours[0] not in colours[1:], colours
        page.check("#only-interesting")
        assert cell.is_visible()
        assert page.locator("#matrix-aliasing .harness-failures").count() == 0


def test_the_check_fails_for_a_page_that_needs_the_network(browser, ledger_path, tmp_path):
    path = _write(tmp_path, RECORDED, ledger_path)
    cdn = "https://cdn.jsdelivr.net/npm/jquery@3.3.1/dist/jquery.min.js"
    path.write_text(path.read_text().replace("</head>", f'<script src="{cdn}"></script></head>'))
    with opened(browser, path.as_uri(), "network") as offline:
        assert offline.blocked == [cdn]


def test_the_page_is_linked_from_asvs_navbar_once(tmp_path):
    import asv

    index = tmp_path / "index.html"
    shutil.copy(Path(asv.__file__).parent / "www" / "index.html", index)
    verdict_page.link_from_asv_navbar(index)
    verdict_page.link_from_asv_navbar(index)
    assert index.read_text().count('href="writeback/index.html"') == 1
    index.write_text("<html><nav></nav></html>")
    with pytest.raises(RuntimeError, match="NAVBAR_ANCHOR"):
        verdict_page.link_from_asv_navbar(index)


def test_every_cell_links_to_asvs_graph_of_its_own_combination_and_build(
    browser, recorded, tmp_path
):
    """Each matrix and corpus cell links to asv's graph of exactly its combination on exactly
    its build and machine (`graph_link`), though the page writes each row's link once and
    each build's machine and commit once (the page's script joins them): the long history's
    page would otherwise carry a link of ~230 bytes in each of its ~25,000 cells."""
    benchmarks = json.loads((RECORDED / "benchmarks.json").read_text())
    builds = recorded + corpus_history.two_builds(tmp_path / "results")
    path = verdict_page.write(tmp_path / "html" / verdict_page.PAGE, builds, benchmarks)
    expected = [
        [verdict_page.graph_link(f"{row.scenario}.{results.WRONG}",
                                 benchmarks[f"{row.scenario}.{results.WRONG}"]["param_names"],
                                 results.combo(row.control, row.backend, row.size), build)
         for build in builds]
        for row in verdict_page.matrix_rows(builds, benchmarks)
    ]  # fmt: skip
    names = benchmarks.get(verdict_page.CORPUS_BENCHMARK, {}).get("param_names", [])
    for history in (h for f in results.family_histories(builds).values() for h in f.values()):
        expected.append([verdict_page.graph_link(verdict_page.CORPUS_BENCHMARK, names,
                                                 (history.backend, history.corpus), build)
                         for build in builds])  # fmt: skip
    with opened(browser, path.as_uri(), "links") as offline:
        shown = offline.page.evaluate(
            """() => [...document.querySelectorAll(
                 'section.matrix tbody tr, #corpus tbody.family > tr:first-child')]
               .map(row => [...row.querySelectorAll('td.v > a')]
                 .map(a => a.getAttribute('href')))"""
        )
        assert offline.errors == []
    assert len(expected) > 40 and shown == expected


def test_a_matrix_cell_carries_no_more_than_its_verdict(recorded, tmp_path):
    """The page's weight is its cells (the long history's page: 9.8 MB, 3.8 MB of it the
    catalogue's matrix at ~340 bytes a cell, the link and the whole verdict written out twice).
    A cell now carries its state, its whole verdict once (the title) and its short label."""
    benchmarks = json.loads((RECORDED / "benchmarks.json").read_text())
    path = verdict_page.write(tmp_path / "html" / verdict_page.PAGE, recorded, benchmarks)
    page = path.read_text()
    section = page[page.index('<section class="matrix" id="matrix-aliasing"') :]
    section = section[: section.index("</section>")]
    cells = re.findall(r'<td class="v [^"]*" title="([^"]*)".*?</td>', section)
    assert len(cells) > 100
    markup = len("".join(re.findall(r'<td class="v .*?</td>', section)))
    beyond = (markup - sum(map(len, cells))) / len(cells)
    assert beyond < 100, f"{beyond:.0f} bytes a cell beyond its verdict's words"


def test_a_cell_opens_asvs_graph_of_its_combination(browser, ledger_path, tmp_path):
    """Published with asv, served on 127.0.0.1: the page's cell link opens asv's graph with
    exactly that combination selected, on that machine."""
    conf = json.loads((ROOT / "asv.conf.json").read_text())
    conf.update(
        repo=str(ledger_path),
        benchmark_dir=str(ROOT / "benchmarks"),
        results_dir=str(RECORDED),
        html_dir=str(tmp_path / "html"),
        env_dir=str(tmp_path / "env"),
    )
    (tmp_path / "asv.conf.json").write_text(json.dumps(conf))
    published = subprocess.run(
        [sys.executable, "-m", "asv", "publish", "--config", str(tmp_path / "asv.conf.json")],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    assert published.returncode == 0, published.stdout + published.stderr
    modules = offline_site.install_assets()
    assert modules is not None, "npm is needed to make the site self-contained"
    offline_site.vendor(tmp_path / "html", modules)
    verdict_page.publish(tmp_path / "html", RECORDED, ledger_path)

    server = Server(tmp_path / "html")
    try:
        with opened(browser, server.url, "asv-navbar", allowed=server.url) as offline:
            page = offline.page
            page.click("#nav-li-writeback a")
            page.wait_for_url("**/writeback/index.html")
            _cell(page, "snapshot_swap", "explicit_copies", "inductor", "3", 2).locator("a").click()
            page.wait_for_url(
                lambda url: "/#snapshot_swap.Correctness.track_wrong_elements?" in url
            )
            page.wait_for_function(
                "() => typeof $ !== 'undefined' && $('#main-graph').data('plot') !== undefined"
            )
            graph = page.evaluate(
                """() => {
                  const plot = $('#main-graph').data('plot');
                  return {series: plot.getData().filter(s => s.data.length).length,
                          label: plot.getAxes().yaxis.options.axisLabel};
                }"""
            )
            assert graph == {"series": 1, "label": "elements"}
            selected = page.locator("#graphdisplay-navigation .active").all_inner_texts()
            assert {"vm", "explicit_copies", "inductor", "3"} <= set(selected), selected
            assert not {"foreach_clones", "eager", "1048576"} & set(selected), selected
            assert offline.blocked == [] and offline.errors == []
    finally:
        server.close()


def test_charts_break_lines_where_a_control_was_not_measured():
    assert verdict_page._runs([1, 2, None, 3, None, 4, 5]) == [[0, 1], [5, 6]]
    assert verdict_page.nice_ticks(8 * render.MIB, "bytes") == [
        i * 2 * render.MIB for i in range(5)
    ]
    assert verdict_page.nice_ticks(0) == [0, 1]
    assert verdict_page.nice_ticks(26_700)[-1] >= 26_700


def test_each_patch_stands_beside_its_base_with_its_flips_and_cost_deltas(browser, tmp_path):
    """A patch build of 2.14.1 measured as 2.15.0 was (tests/test_compare.py): its column
    follows its base's and is marked against it, its section names its pull request, every
    flip both ways and the costs it moved; the cost charts follow the timeline without it."""
    from tests.test_compare import PATCH, patched_history

    path = _write(tmp_path, *patched_history(tmp_path))
    with opened(browser, path.as_uri(), "patches") as offline:
        page = offline.page
        heads = page.locator("#matrix-snapshot_swap thead th.build")
        assert _shown(heads.nth(2)).splitlines() == [
            PATCH, "torch 2.14.1+cu130", "patch of torch-2.14.1"
        ]  # fmt: skip
        assert "patch" in heads.nth(2).get_attribute("class")
        for column in (2, 3):  # the patch against its base, 2.15.0 against 2.14.1
            cell = _cell(page, "snapshot_swap", "explicit_copies", "inductor", "3", column)
            assert cell.locator(".flip-mark").inner_text() == "\u25b2 fixed"
        page.click('nav a[href="#patches"]')
        article = page.locator(f'#patches article[data-patch="{PATCH}"]')
        assert article.is_visible()
        link = article.locator("a.pr")
        assert link.inner_text() == "pull request #198132"
        assert link.get_attribute("href") == "https://github.com/pytorch/pytorch/pull/198132"
        fixed = article.locator("ul.verdicts li.fixed")
        assert fixed.count() == 13 and fixed.first.is_visible()
        assert fixed.first.inner_text().startswith(
            "fixed: snapshot_swap/explicit_copies/inductor/3"
        )
        assert article.locator("ul.corpus li.broken").all_inner_texts() == [
            "BROKEN: corpus toy program 4 (inductor): exact -> wrong: 5"
        ]  # fmt: skip
        costs = article.locator("ul.costs li").all_inner_texts()
        scratch = "explicit_copies/1,048,576 runtime scratch: costed only in HEAD: 4,194,304 B"
        assert f"snapshot_swap/{scratch} (4 MiB)" in costs
        assert any(" -> " in line and "(x0." in line for line in costs), costs
        ticks = page.locator("#cost svg text.tick").all_text_contents()
        assert "torch-2.14.1" in ticks and PATCH not in ticks
        assert offline.blocked == [] and offline.errors == []


def _corpus_page(tmp_path: Path) -> Path:
    """The page of the two builds of tests/corpus_history.py (corpus records, nothing else)."""
    builds = corpus_history.two_builds(tmp_path / "results")
    return verdict_page.write(tmp_path / "html" / verdict_page.PAGE, builds, {})


def _family(page, name: str):
    return page.locator(f'#corpus table[data-corpus="{corpus_history.CORPUS}"] tbody.family'
                        f'[data-family="{name}"]')  # fmt: skip


def test_the_corpus_section_shows_each_family_over_the_builds(browser, tmp_path):
    alias, noop, stale, unfold = (corpus_history.ALIAS, corpus_history.NOOP,
                                  corpus_history.STALE, corpus_history.UNFOLD)  # fmt: skip
    with opened(browser, _corpus_page(tmp_path).as_uri(), "corpus") as offline:
        page = offline.page
        page.click('nav a[href="#corpus"]')
        families = page.locator("#corpus tbody.family")
        assert [f.get_attribute("data-family") for f in families.all()] == [
            alias,
            noop,
            stale,
            unfold,
        ]
        cells = {  # per build: (state, what the cell says)
            alias: [("v-wrong", "2 programs"), ("v-wrong", "3 programs")],
            noop: [("v-not-found", "not found"), ("v-wrong", "1 program")],
            stale: [("v-wrong", "1 program"), ("v-not-found", "not found")],
            unfold: [("v-wrong", "1 program"), ("v-not-run", "not measured")],
        }
        for name, expected in cells.items():
            row = _family(page, name)
            assert row.locator("th").first.inner_text() == name
            shown = row.locator("td.v").evaluate_all(
                "cells => cells.map(c => [[...c.classList].find(k => k.startsWith('v-')), "
                "c.querySelector('.short').textContent])"
            )
            assert [tuple(cell) for cell in shown] == expected, name
            assert row.locator("td.v").last.is_visible()
        newest = _family(page, alias).locator("td.v").nth(1)
        assert newest.get_attribute("title") == "wrong: 3 programs (1, 4, 5)"
        assert "flip-fixed" in _family(page, stale).locator("td.v").nth(1).get_attribute("class")
        assert "flip-broken" in _family(page, noop).locator("td.v").nth(1).get_attribute("class")
        assert _family(page, alias).locator("td.members").inner_text() == "3"
        assert _family(page, alias).locator(".pass").inner_text() == corpus_history.PASS
        assert _family(page, stale).locator(".pass").inner_text() == "remove_noop_ops"
        assert (
            _family(page, unfold)
            .locator("td.no-pass")
            .inner_text()
            .startswith("not attributed: already wrong with aot_eager")
        )
        catalogue = {n: _family(page, n).locator("td.catalogue").inner_text() for n in cells}
        assert catalogue == {alias: "aliasing.copy_of_mutated_input", noop: "new",
                             stale: "new", unfold: "new"}  # fmt: skip
        page.check("#only-inductor")
        assert not _family(page, unfold).is_visible() and _family(page, alias).is_visible()
        assert offline.blocked == [] and offline.errors == []


NO_CLIPBOARD = "Object.defineProperty(Navigator.prototype, 'clipboard', {get: () => undefined});"


@pytest.mark.parametrize("clipboard", [True, False], ids=["clipboard", "no-clipboard"])
def test_a_familys_repro_unfolds_and_copies(browser, tmp_path, clipboard):
    """The copy button puts the newest repro on the clipboard; without a clipboard API, into
    a text area beside it, selected, so Ctrl+C copies it."""
    script = corpus_history.repro("torch-2.15.0", corpus_history.ALIAS)
    with opened(browser, _corpus_page(tmp_path).as_uri(), "corpus-copy") as offline:
        page = offline.page
        if clipboard:
            offline.context.grant_permissions(["clipboard-read", "clipboard-write"])
        else:
            page.add_init_script(NO_CLIPBOARD)
            page.reload()
        family = _family(page, corpus_history.ALIAS)
        repro = family.locator("pre.repro")
        assert not repro.is_visible()
        family.locator("summary").click()
        assert repro.is_visible() and repro.text_content() == script
        assert "(newest: torch-2.15.0)" in family.locator("summary").inner_text()
        family.locator("button.copy").click()
        if clipboard:
            page.wait_for_function("() => document.querySelector("
                                   "'#corpus button.copy').textContent === 'copied'")  # fmt: skip
            assert page.evaluate("navigator.clipboard.readText()") == script
            assert family.locator("textarea.copied").count() == 0
        else:
            area = family.locator("textarea.copied")
            assert area.is_visible() and area.input_value() == script
            selected = area.evaluate(
                "a => [document.activeElement === a, a.selectionStart, a.selectionEnd]"
            )
            assert selected == [True, 0, len(script)]
        assert offline.blocked == [] and offline.errors == []


OPEN_TIMES = ARTIFACTS / "open-time.log"
"""Where the 26-release test writes how long the page took to open (a figure to read, never
asserted: a time depends on the machine)."""


def opened_in(browser, path: Path, what: str) -> float:
    """Seconds from navigation to the load event of the page at `path` in a fresh offline
    context (`site_browser.open_times`, as `--open-time` measures it), appended to OPEN_TIMES
    with `what` the page shows and its size."""
    seconds = site_browser.open_times(browser, path, 1)[0]["seconds"]
    OPEN_TIMES.parent.mkdir(parents=True, exist_ok=True)
    with OPEN_TIMES.open("a") as log:
        log.write(f"{datetime.now(timezone.utc).isoformat(timespec='seconds')} verdict page of "
                  f"{what} ({path.stat().st_size:,} bytes) opened from file:// "
                  f"in {seconds:.3f} s\n")  # fmt: skip
    return seconds


def _strip(page, line: str, row: str):
    return page.locator(f'#timeline article[data-line="{line}"] tbody.strip[data-row="{row}"]')


def _column(edges: list[list[float]], x: float) -> int | None:
    """The index of the column whose [left, right] holds `x` (None: none)."""
    return next((i for i, (left, right) in enumerate(edges) if left <= x <= right), None)


def _box_inside(inner: dict, outer: dict) -> bool:
    return (outer["x"] - 0.5 <= inner["x"] and inner["x"] + inner["width"]
            <= outer["x"] + outer["width"] + 0.5)  # fmt: skip


def test_the_page_opens_on_whats_wrong_now_then_a_strip_per_row_over_26_releases(
    browser, recorded, tmp_path
):
    """The recorded builds (builds.txt) and the 26 releases of tests/long_history.py
    (builds-long): the page opens on what is wrong on each line's newest build, since when
    and through which pass; then one strip per row, a cell a release, readable at 26 columns,
    with the flips both ways marked and the cost lines of the correct controls aligned with
    the cells; the matrices below. How long it took to open is written to OPEN_TIMES."""
    from tests import long_history

    builds = long_history.both_lines(recorded)
    benchmarks = json.loads((RECORDED / "benchmarks.json").read_text())
    path = verdict_page.write(tmp_path / "html" / verdict_page.PAGE, builds, benchmarks)
    seconds = opened_in(browser, path, f"{len(builds)} build results")
    print(f"the verdict page of {len(builds)} build results opened in {seconds:.3f} s")
    long, short = "builds-long on vm", "builds.txt on vm"
    explicit = "snapshot_swap.explicit_copies inductor 3"
    with opened(browser, path.as_uri(), "timeline") as offline:
        page = offline.page
        assert page.locator("h2").first.inner_text() == "What is wrong now"
        assert page.locator("#now").bounding_box()["y"] < 900  # in the first screen
        newest = page.locator(f'#now article[data-line="{long}"]')
        assert newest.locator("h3").inner_text().startswith("builds-long/torch-2.15.0 ")
        row = newest.locator(f'tr[data-row="{explicit}, 1,048,576"]')
        assert row.locator("td.since").inner_text() == (
            "2.9.0, broken again after 2.8.0 (also wrong 2.1.0-2.3.1)"
        )
        assert row.locator("td.since").get_attribute("data-since") == "builds-long/torch-2.9.0"
        assert row.locator("td.through .pass").inner_text() == long_history.PASS
        foreach = page.locator(f'#now article[data-line="{short}"] tr[data-row='
                               '"snapshot_swap.foreach_clones inductor 3, 1,048,576"]')  # fmt: skip
        assert foreach.locator("td.since").inner_text() == "2.13.0, the first build measured"
        assert foreach.locator("td.through").inner_text() == "no attribution recorded"
        assert newest.locator("tbody tr").count() < 23  # the sizes of a control share a row

        strip = _strip(page, long, explicit)
        assert strip.bounding_box()["y"] > 900  # below the first screen, until its link
        row.locator("a").click()
        assert -1 <= strip.bounding_box()["y"] < 900  # scrolled to it (its top, to a pixel)
        cells = strip.locator("tr.verdicts td.s")
        assert cells.count() == 26
        classes = cells.evaluate_all("cells => cells.map(c => c.className)")
        states = [next(k for k in c.split() if k.startswith("v-")) for c in classes]
        assert states == ["v-wrong"] * 8 + ["v-exact"] * 8 + ["v-wrong"] * 10
        flips = {i: k for i, c in enumerate(classes) for k in c.split() if k.startswith("s-")}
        assert flips == {8: "s-fixed", 16: "s-broken"}
        assert (
            cells.nth(16)
            .get_attribute("title")
            .startswith(
                "2.9.0: wrong: 9 (ret_a 3, in_a 3, view_a 3); pass: remove_noop_ops; broken again "
                "in 2.9.0 (after 2.8.0); upstream "
            )
        )
        assert cells.nth(16).inner_text() == "\u2717" and cells.nth(8).inner_text() == "\u2713"
        assert strip.locator("td.ranges").inner_text() == "2.1.0-2.3.1, 2.9.0-2.15.0"

        table = strip.locator("xpath=ancestor::table")
        heads = table.locator("thead th.release")
        assert heads.all_inner_texts()[:3] == ["2.1.0", "2.1.1", "2.1.2"]
        assert table.bounding_box()["x"] + table.bounding_box()["width"] <= 1280
        for i in range(26):  # each label inside its column, the cells wide enough to read
            column, label = heads.nth(i).bounding_box(), heads.nth(i).locator("span")
            assert label.is_visible() and _box_inside(label.bounding_box(), column), i
            assert cells.nth(i).bounding_box()["width"] >= 20

        costed = {m.asv_name for m in verdict_page.charted()
                  if f"snapshot_swap.{m.asv_name}" in benchmarks}  # fmt: skip
        lines = strip.locator("tr.cost-line")
        assert {line.get_attribute("data-metric") for line in lines.all()} == costed
        edges = cells.evaluate_all(
            "cs => cs.map(c => [c.getBoundingClientRect().left, c.getBoundingClientRect().right])"
        )
        for line in lines.all():  # a dot a costed release, inside that release's column
            centres = line.locator("line.dot").evaluate_all(
                "ds => ds.map(d => d.getBoundingClientRect().left + "
                "d.getBoundingClientRect().width / 2)"
            )
            columns = [_column(edges, x) for x in centres]
            assert columns == list(range(8, 16)), line.get_attribute("data-metric")
        assert _strip(page, long, "snapshot_swap.stack_buffer eager 3").locator(
            "tr.cost-line").count() == 0  # fmt: skip

        keys = {k for b in builds for k in b.values[f"snapshot_swap.{results.WRONG}"]}
        assert page.locator(
            f'#timeline article[data-line="{long}"] table.strips'
            '[data-scenario="snapshot_swap"] tbody.strip'
        ).count() == len(keys)
        assert page.locator("#matrix-snapshot_swap").bounding_box()["y"] > table.bounding_box()[
            "y"]  # fmt: skip
        page.check("#only-interesting")
        assert strip.is_visible()
        assert not _strip(page, long, "snapshot_swap.stack_buffer inductor 3").is_visible()
        assert offline.blocked == [] and offline.errors == []


def test_the_summary_counts_the_newest_build_of_each_line_not_of_each_machine(recorded, tmp_path):
    """One machine with builds.txt and builds-long measured has two newest builds: the
    summary above the matrices counts the Inductor rows wrong on each, naming its line (it
    counted only the machine's last build in load order, whichever file that came from)."""
    import re

    from tests import long_history

    builds = long_history.both_lines(recorded)
    benchmarks = json.loads((RECORDED / "benchmarks.json").read_text())
    path = verdict_page.write(tmp_path / "html" / verdict_page.PAGE, builds, benchmarks)
    summaries = re.findall(r'<p class="summary">(.*?)</p>', path.read_text(), re.S)
    matrices = [s for s in summaries if "Inductor wrong in" in s]  # one a scenario's matrix
    assert matrices
    for summary in matrices:
        parts = summary.split("; ")[1:]
        assert [re.sub(r"wrong in \d+ of \d+", "wrong in N", p) for p in parts] == [
            "Inductor wrong in N on torch-2.15.0 (builds.txt on vm)",
            "Inductor wrong in N on builds-long/torch-2.15.0 (builds-long on vm)",
        ], summary
