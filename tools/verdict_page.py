"""The verdict page: html/writeback/index.html, one file that opens from the file system (no
server, no network: its CSS, script and SVG charts are inline, its data written into it).

    python -m tools.verdict_page [--results results] [--ledger .asv/ledger] [--html html]

It reads the results model (tools/results.py: every machine's asv results, probe records and
install records; the builds of every ledger branch) and shows:
  - first, what is wrong now: for the newest build of each release line (tools/timeline.py:
    the builds of one builds file on one machine), every wrong row, since which release and
    through which pass;
  - the timeline: per line and scenario, one strip per row with a cell per release (flips
    marked, the releases where it is wrong at its end), and under each Inductor row of a
    costed control a line per charted Cost metric over the same releases;
  - per scenario, the correctness matrix: one row per (control, backend, size), one column per
    build and machine (a patch build right after its base); each cell coloured by its verdict
    (results.verdict_state: exact, wrong, harness failure, skipped, failed, not run), marked
    where the verdict differs from the build it is compared with (the build before it of
    the same builds file on the same machine; a patch's base) (fixed, broken, changed),
    naming the pass(es) attribution found, and linking to asv's graph of that combination in
    the published site (`../#benchmark?p-...`);
  - each patch build beside its base (tools/compare.py): its diff and pull request, every
    verdict and corpus program it flips, every cost figure it moves;
  - per generated corpus, every family of wrong programs (one fault: results.family_histories)
    over the builds: one cell per build (wrong with its programs, not found, not measured),
    its member count, pass and catalogue match, and its repro, folded, with a copy button;
  - the cost of every correct control over the builds of the timeline (patches are beside
    their base above): one SVG line chart per (scenario, metric, size) for every Cost metric
    with a chart title in benchmarks/metrics.py (runtime scratch, full-length loops, time over
    floor, instructions).

`publish(html, results_dir, ledger)` writes the page and links it from asv's navigation bar;
tools/history.py calls it after `asv publish`.
"""

from __future__ import annotations

import argparse
import html as markup
import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from benchmarks import metrics  # standard library only
from tools import compare, render, results, timeline
from tools import ledger as ledger_repo

ROOT = Path(__file__).resolve().parents[1]
PAGE = Path("writeback") / "index.html"
BACKEND_ORDER = ("inductor", "aot_eager", "eager")
# Okabe-Ito: distinguishable with the common colour-vision deficiencies
SERIES_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
NAVBAR_ANCHOR = '<li id="nav-li-regressions">'
NAVBAR_LINK = '<li id="nav-li-writeback"><a href="writeback/index.html">Verdicts</a></li>'


@dataclass(frozen=True)
class Cell:
    state: str
    words: str
    label: str
    flip: str | None = None
    attributed: str | None = None


@dataclass(frozen=True)
class Row:
    scenario: str
    control: str
    backend: str
    size: object
    issue: str
    graph: str
    cells: tuple[Cell, ...]

    @property
    def interesting(self) -> bool:
        """Wrong, failed or changing somewhere: what a reader looks for first."""
        return any(c.state in ("wrong", "harness failure", "failed") or c.flip for c in self.cells)


def publish(html: Path, results_dir: Path, ledger: Path, builds=None) -> Path:
    """Write html/writeback/index.html from every machine's results (`builds`, when the
    caller has loaded them already) and link it from asv's navigation bar (html/index.html,
    written by `asv publish`)."""
    builds = results.load(results_dir, ledger) if builds is None else builds
    path = write(html / PAGE, builds, _benchmarks(results_dir))
    link_from_asv_navbar(html / "index.html")
    return path


def write(path: Path, builds: list[results.BuildResult], benchmarks: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page(builds, benchmarks))
    return path


def link_from_asv_navbar(index: Path) -> None:
    """Add the page to the navigation bar of asv's index.html, once."""
    text = index.read_text()
    if NAVBAR_LINK in text:
        return
    if NAVBAR_ANCHOR not in text:
        raise RuntimeError(
            f"{index} has no {NAVBAR_ANCHOR!r} to put the verdict page's link before "
            "(a new asv version? update NAVBAR_ANCHOR in tools/verdict_page.py)"
        )
    index.write_text(text.replace(NAVBAR_ANCHOR, NAVBAR_LINK + NAVBAR_ANCHOR, 1))


def page(builds: list[results.BuildResult], benchmarks: dict) -> str:
    if not builds:
        body = "<p>No results yet: run <code>make history</code> (or <code>asv run</code>).</p>"
        return _document(body)
    rows = matrix_rows(builds, benchmarks)
    scenarios = list(dict.fromkeys(row.scenario for row in rows))
    machines = sorted({b.machine for b in builds})
    patches = patch_section(builds)
    lines = [(line, timeline.row_timelines(line)) for line in timeline.lines(builds)]
    parts = [
        "<header><h1>writeback: what is broken where</h1>",
        now_section(lines),
        f"<p>{len(builds)} build results on {len(machines)} machine(s) "
        f"({markup.escape(', '.join(machines))}). Every cell links to asv's graph of that "
        "benchmark combination; hover a cell for the whole verdict.</p>",
        _navigation(scenarios, bool(patches)),
        _legend(),
        _filters(),
        "</header><main>",
        timeline_section(lines, benchmarks),
    ]
    for scenario in scenarios:
        parts.append(matrix_section(scenario, [r for r in rows if r.scenario == scenario], builds))
    parts.append(patches)
    parts.append(corpus_section(builds, benchmarks))
    parts.append(cost_section([b for b in builds if not b.base], benchmarks))
    parts.append("</main>")
    return _document("\n".join(parts))


def matrix_rows(builds: list[results.BuildResult], benchmarks: dict) -> list[Row]:
    """One row per (scenario, control, backend, size) any build measured, Inductor first."""
    keys = results.matrix_keys(builds)
    scenario_rank = {s: i for i, s in enumerate(dict.fromkeys(k[0] for k in keys))}
    control_rank = {k[:2]: i for i, k in reversed(list(enumerate(keys)))}
    size_rank = {k[::3]: i for i, k in reversed(list(enumerate(keys)))}
    keys.sort(
        key=lambda k: (
            scenario_rank[k[0]],
            control_rank[k[:2]],
            BACKEND_ORDER.index(k[2]) if k[2] in BACKEND_ORDER else len(BACKEND_ORDER),
            size_rank[k[::3]],
        )
    )
    against = [builds.index(b) if b else None for b in results.compared_with(builds)]
    return [_row(builds, against, benchmarks, *key) for key in keys]


def _row(builds, against, benchmarks, scenario, control, backend, size) -> Row:
    """A matrix row: each build's cell, flipped where it differs from the build at its index
    in `against` (`results.compared_with`)."""
    benchmark = f"{scenario}.{results.WRONG}"
    names = benchmarks.get(benchmark, {}).get("param_names", [])
    verdicts = [results.verdict_state(b, control, backend, size, scenario) for b in builds]
    cells, issue = [], ""
    combo = results.combo(control, backend, size)
    for build, (state, words), before in zip(builds, verdicts, against):
        probe = build.probe.get((scenario, control, backend, size), {})
        issue = issue or probe.get("issue", "")
        flip = None
        if before is not None and verdicts[before][1] != words:
            flip = flip_kind(verdicts[before][0], state)
        cells.append(
            Cell(
                state,
                words,
                _label(build, benchmark, combo, state),
                flip,
                render.pass_names(probe.get("attribution")),
            )
        )
    graph = graph_template(benchmark, names, combo)
    return Row(scenario, control, backend, size, issue, graph, tuple(cells))


def flip_kind(before: str, after: str) -> str:
    """`fixed` (wrong -> exact), `broken` (exact -> wrong), otherwise `changed`."""
    if before == "wrong" and after == "exact":
        return "fixed"
    if before == "exact" and after == "wrong":
        return "broken"
    return "changed"


def graph_link(benchmark: str, param_names: list[str], combo: tuple, build) -> str:
    """asv's graph of one combination on this machine, this build highlighted (asv's hash
    format: `#name?key=value&...`, each parameter as `p-<name>` with asv's repr of it)."""
    return graph_template(benchmark, param_names, combo).format(
        machine=quote(build.machine, safe=""), commit=quote(build.commit[:8], safe="")
    )


def graph_template(benchmark: str, param_names: list[str], combo: tuple) -> str:
    """`graph_link` with `{machine}` and `{commit}` left to fill: the page writes it once a
    row (`data-graph`) and each build's machine and commit once (its column head), and its
    script joins them into each cell's link (`fillLinks`). Every value is quoted, so the
    two placeholders are the only braces in it."""
    params = [(f"p-{name}", repr(value)) for name, value in zip(param_names, combo)]
    query = "".join(f"&{quote(key, safe='')}={quote(value, safe='')}" for key, value in params)
    return f"../#{benchmark}?machine={{machine}}&commits={{commit}}{query}"


def _label(build, benchmark: str, combo: tuple, state: str) -> str:
    if state != "wrong":
        return state
    wrong = int(build.values[benchmark][combo])
    return f"wrong {wrong:,}" if wrong else "storage moved"


def matrix_section(scenario: str, rows: list[Row], builds: list[results.BuildResult]) -> str:
    heads = _build_heads(builds)
    wrong_now = _wrong_on_latest(rows, builds)
    lines = [
        f'<section class="matrix" id="matrix-{_e(scenario)}" data-scenario="{_e(scenario)}">',
        f"<h2>{_e(scenario)}</h2>",
        f'<p class="summary">{len(rows)} rows; {wrong_now}</p>',
        _harness_failures(rows),
        '<div class="scroll"><table><thead><tr><th scope="col">control or pattern</th>'
        f'<th scope="col">backend</th><th scope="col">size</th>{heads}</tr></thead><tbody>',
    ]
    for row in rows:
        name = _e(row.control)
        if row.issue:
            name = f'<a href="{_e(row.issue)}" title="upstream issue">{name}</a>'
        lines.append(
            f'<tr data-backend="{_e(row.backend)}" data-interesting="{int(row.interesting)}" '
            f'data-graph="{_e(row.graph)}"><th scope="row">{name}</th><td>{_e(row.backend)}</td>'
            f'<td class="size">{_e(render.size_cell(row.size))}</td>'
            + "".join(_cell(c) for c in row.cells)
            + "</tr>"
        )
    lines.append("</tbody></table></div></section>")
    return "\n".join(lines)


def _build_heads(builds: list[results.BuildResult]) -> str:
    """One column head per build: its tag, torch version, the base it patches (a patch build)
    and (several machines) machine."""
    several = len({b.machine for b in builds}) > 1
    return "".join(
        f'<th scope="col" class="build{" patch" if b.base else ""}" data-machine='
        f'"{_e(b.machine)}" data-commit="{_e(b.commit[:8])}"><span class="tag">'
        f'{_e(b.tag)}</span><span class="sub">torch {_e(b.identity.get("torch_version", "?"))}'
        "</span>"
        + (f'<span class="sub">patch of {_e(b.base)}</span>' if b.base else "")
        + (f'<span class="sub">{_e(b.machine)}</span>' if several else "")
        + "</th>"
        for b in builds
    )


def _harness_failures(rows: list[Row]) -> str:
    """A warning above the matrix where any cell is a harness failure ('' where none is)."""
    count = sum(cell.state == "harness failure" for row in rows for cell in row.cells)
    if not count:
        return ""
    return (
        f'<p class="harness-failures">HARNESS FAILURE in {count} cell(s): the eager reference '
        "broke its own contract there, so the harness, not torch, is wrong; no verdict on those "
        "inputs can be trusted.</p>"
    )


def _wrong_on_latest(rows: list[Row], builds: list[results.BuildResult]) -> str:
    """How many Inductor rows are wrong on the newest build of each release line (a builds
    file on a machine: `builds.txt` and `builds-long` are two lines of one machine)."""
    inductor = [r for r in rows if r.backend == "inductor"]
    parts = []
    for line in timeline.lines(builds):
        index = next(i for i, b in enumerate(builds) if b is line.newest)
        wrong = sum(r.cells[index].state == "wrong" for r in inductor)
        parts.append(
            f"Inductor wrong in {wrong} of {len(inductor)} on {_e(builds[index].tag)} "
            f"({_e(line.name)})"
        )
    return "; ".join(parts)


def _cell(cell: Cell) -> str:
    classes = f"v v-{cell.state.replace(' ', '-')}" + (
        f" flip flip-{cell.flip}" if cell.flip else ""
    )
    mark = {"fixed": "\u25b2 fixed", "broken": "\u25bc broken"}.get(
        cell.flip or "", "\u25c6 changed"
    )
    flip = f'<span class="flip-mark">{mark}</span>' if cell.flip else ""
    attributed = (
        f'<span class="pass" title="the pass attribution names">{_e(cell.attributed)}</span>'
        if cell.attributed
        else ""
    )
    return (
        f'<td class="{classes}" title="{_e(cell.words)}"><a><span class="short">'
        f"{_e(cell.label)}</span></a>{flip}{attributed}</td>"
    )


def now_section(lines: list[tuple[timeline.Line, list[timeline.RowTimeline]]]) -> str:
    """What a reader reads first: for the newest build of each release line, every row wrong
    there (the sizes of a control together where the rest is the same), since which release
    and through which pass; each row links to its strip."""
    parts = ['<section id="now"><h2>What is wrong now</h2>']
    for line, rows in lines:
        newest = line.newest
        wrong = [row for row in rows if row.wrong_now()]
        heading = (f"{_e(newest.tag)} (torch {_e(newest.identity.get('torch_version', '?'))}), "
                   f"the newest build of {_e(line.name)}")  # fmt: skip
        parts.append(f'<article class="now" data-line="{_e(line.name)}"><h3>{heading}</h3>')
        if not newest.installed:
            parts.append(f'<p class="empty">It did not install: '
                         f"{_e(newest.identity.get('error'))}</p></article>")  # fmt: skip
            continue
        if not wrong:
            parts.append('<p class="empty">Nothing is wrong on it.</p></article>')
            continue
        parts.append(
            f'<p class="summary">{len(wrong)} row(s) wrong</p><table class="now"><thead><tr>'
            '<th scope="col">wrong</th><th scope="col">since</th>'
            '<th scope="col">through (the pass attribution names)</th></tr></thead><tbody>'
        )

        def detail(row: timeline.RowTimeline, newest=newest) -> tuple[str, str]:
            return row.since_text(), timeline.pass_on(newest, row.key)

        for name, (since, _), found in timeline.by_sizes(wrong, detail):
            parts.append(
                f'<tr data-row="{_e(name)}"><th scope="row"><a href="#{_strip_id(found[0])}">'
                f'{_e(name)}</a></th><td class="since" data-since="{_e(found[0].since().tag)}">'
                f'{_e(since)}</td><td class="through">{_through(newest, found[0].key)}</td></tr>'
            )
        parts.append("</tbody></table></article>")
    parts.append("</section>")
    return "\n".join(parts)


def _through(build: results.BuildResult, key: tuple) -> str:
    """The pass(es) attribution names for a row on a build, else why it names none."""
    named = timeline.named_passes(build, key)
    return f'<span class="pass">{_e(named)}</span>' if named else _e(timeline.pass_on(build, key))


STRIP_MARKS = {"exact": "\u2713", "wrong": "\u2717", "harness failure": "H", "skipped": "\u2013",
               "failed": "!", "not run": "\u00b7"}  # fmt: skip
"""The mark of each verdict state in a timeline strip's cell (its colour is the matrix's)."""


def timeline_section(lines: list[tuple[timeline.Line, list[timeline.RowTimeline]]],
                     benchmarks: dict) -> str:  # fmt: skip
    """Per release line and scenario, one strip per row: a cell per build of the line (a
    release), flips marked, the releases where it is wrong at its end; under an Inductor row
    of a costed control, one line per charted Cost metric over the same builds."""
    parts = [
        '<section id="timeline"><h2>Timeline</h2>',
        "<p>Each release line (the builds of one builds file on one machine; patch builds are "
        "beside their base, below) as strips: one cell a release, oldest first, a bar on the "
        "left of the cell where the row flips between exact and wrong (dark red: broken, dark "
        "green: fixed; skipped, failed and not run cells in between neither flip nor break a "
        "range). Hover a cell for its verdict and flip. Under a correct Inductor control, its "
        "cost over the same releases (a gap: wrong or not measured there).</p>",
    ]
    for line, rows in lines:
        parts.append(f'<article class="line" data-line="{_e(line.name)}">'
                     f"<h3>{_e(timeline.describe_line(line))}</h3>")  # fmt: skip
        for scenario in dict.fromkeys(row.key[0] for row in rows):
            mine = [row for row in rows if row.key[0] == scenario]
            parts.append(strip_table(line, scenario, mine, benchmarks))
        parts.append("</article>")
    parts.append("</section>")
    return "\n".join(parts)


def strip_table(line: timeline.Line, scenario: str, rows: list[timeline.RowTimeline],
                benchmarks: dict) -> str:  # fmt: skip
    """One scenario's strips on one line: a head of the releases, a `tbody` per row."""
    count = len(line.builds)
    heads = "".join(f'<th scope="col" class="release" title="{_e(b.label)}"><span>'
                    f"{_e(timeline.short(b))}</span></th>" for b in line.builds)  # fmt: skip
    lines = [
        f'<h4>{_e(scenario)}</h4><div class="scroll"><table class="strips" '
        f'data-scenario="{_e(scenario)}"><colgroup><col class="row-name">'
        f'<col span="{count}" class="release"><col class="ranges"></colgroup><thead><tr>'
        f'<th scope="col">row</th>{heads}<th scope="col">wrong in</th></tr></thead>'
    ]
    for row in rows:
        flips = {id(f.after): f for f in row.flips}
        cells = "".join(
            _strip_cell(b, v, flips.get(id(b))) for b, v in zip(line.builds, row.verdicts)
        )
        interesting = any(s in ("wrong", "harness failure", "failed") for s in row.states)
        _, control, backend, size = row.key
        sub = backend + ("" if size is None else f", {render.size_cell(size)}")
        lines.append(
            f'<tbody class="strip" id="{_strip_id(row)}" data-row="{_e(row.name)}" '
            f'data-backend="{_e(backend)}" data-interesting="{int(interesting)}">'
            f'<tr class="verdicts"><th scope="row">{_e(control)} <span class="sub">{_e(sub)}'
            f'</span></th>{cells}<td class="ranges">{_e(row.ranges() or "never wrong")}</td></tr>'
            + "".join(_cost_line(line, row, metric, benchmarks) for metric in charted())
            + "</tbody>"
        )
    lines.append("</table></div>")
    return "\n".join(lines)


def _strip_cell(build: results.BuildResult, verdict: tuple[str, str],
                flip: timeline.Flip | None) -> str:  # fmt: skip
    """One release's cell of a strip: the state's colour and mark, a flip marked."""
    state, words = verdict
    classes = f"s v-{state.replace(' ', '-')}"
    title = f"{timeline.short(build)}: {words}"
    if flip:
        classes += f" s-{'fixed' if flip.fixed else 'broken'}"
        title += f"; {flip.describe()}; {flip.commit_range()}"
    return (f'<td class="{classes}" data-build="{_e(build.tag)}" title="{_e(title)}">'
            f"{STRIP_MARKS[state]}</td>")  # fmt: skip


def _cost_line(line: timeline.Line, row: timeline.RowTimeline, metric: metrics.Metric,
               benchmarks: dict) -> str:  # fmt: skip
    """A Cost metric's line under an Inductor row's strip, aligned with its cells ('' where
    the page has no chart of it or the control was never costed on the line)."""
    scenario, control, backend, size = row.key
    benchmark = f"{scenario}.{metric.asv_name}"
    if backend != "inductor" or size is None or benchmark not in benchmarks:
        return ""
    values = [b.values.get(benchmark, {}).get((control, size)) for b in line.builds]
    points = [v if results.is_number(v) else None for v in values]
    measured = [v for v in points if v is not None]
    if not measured:
        return ""
    unit = benchmarks[benchmark].get("unit", "")
    labels = [timeline.short(b) for b in line.builds]
    extent = " to ".join(dict.fromkeys(compact(v, unit) for v in (min(measured), max(measured))))
    return (
        f'<tr class="cost-line" data-metric="{_e(metric.asv_name)}"><th scope="row" '
        f'class="metric">{_e(metric.chart)}</th><td colspan="{len(points)}" class="spark">'
        f'{sparkline(labels, points, unit)}</td><td class="extent">{_e(extent)}</td></tr>'
    )


def compact(value: float, unit: str) -> str:
    """A figure in three significant digits with its unit: `4 MiB`, `12 B`, `1.33M
    instructions`, `24.2 x floor`."""
    if unit == "bytes":
        return f"{value / render.MIB:.3g} MiB" if value >= render.MIB else f"{int(value):,} B"
    scaled = next(((value / step, suffix) for step, suffix in ((1e6, "M"), (1e3, "k"))
                   if value >= step), (value, ""))  # fmt: skip
    return f"{scaled[0]:.3g}{scaled[1]} {unit}"


def sparkline(labels: list[str], points: list, unit: str) -> str:
    """A line of `points` (None: a gap) over as many equal columns, from 0 up, stretched to
    its cell's width: a dot a measured value (hover it for the value), joined where adjacent."""
    height, pad = 20, 3
    top = max((v for v in points if v is not None), default=0) or 1

    def at(i: int) -> tuple[int, str]:
        return 10 * i + 5, f"{height - pad - (height - 2 * pad) * points[i] / top:.1f}"

    out = [f'<svg class="spark" viewBox="0 0 {10 * len(points)} {height}" '
           f'preserveAspectRatio="none" width="100%" height="{height}" role="img" '
           f'aria-label="{_e(unit)} over releases">']  # fmt: skip
    for run in _runs(points):
        out.append(f'<polyline points="{" ".join("{},{}".format(*at(i)) for i in run)}"/>')
    for i, value in enumerate(points):
        if value is not None:
            x, y = at(i)
            title = f"{labels[i]}: {value_text(value, unit)}"
            out.append(f'<line class="dot" x1="{x}" y1="{y}" x2="{x}" y2="{y}"><title>'
                       f"{_e(title)}</title></line>")  # fmt: skip
    return "".join(out) + "</svg>"


def _strip_id(row: timeline.RowTimeline) -> str:
    """A strip's element id: its line and row, in characters an id and a URL keep."""
    text = f"strip-{row.line.machine}-{row.line.branch}-" + "-".join(map(str, row.key))
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def patch_section(builds: list[results.BuildResult]) -> str:
    """Each patch build beside its base on its machine: what it is (diff, sha256, pull request,
    files), and what it changes (tools/compare.py: verdicts, corpus programs, cost figures);
    '' when there is no patch build."""
    pairs = [(base, b) for b, base in zip(builds, results.compared_with(builds)) if b.base]
    if not pairs:
        return ""
    parts = ['<section id="patches"><h2>Patches beside their base</h2>']
    for base, patch in pairs:
        number = (patch.patch or {}).get("pr")
        link = (f' (<a class="pr" href="{_e(patch.pull_request)}">pull request #{number}</a>)'
                if number else "")  # fmt: skip
        parts.append(
            f'<article class="patch" data-patch="{_e(patch.tag)}" data-machine='
            f'"{_e(patch.machine)}"><h3>{_e(patch.tag)} on {_e(patch.machine)}: '
            f"{_e(patch.base)} + {_e((patch.patch or {}).get('diff', '?'))}{link}</h3>"
            f'<p class="summary">{"<br>".join(_e(line) for line in compare.describe(patch))}</p>'
        )
        parts.append(_changes(base, patch))
        parts.append("</article>")
    parts.append("</section>")
    return "\n".join(parts)


CORPUS_BENCHMARK = "corpus.Correctness.track_wrong_programs"
"""The asv benchmark a corpus cell links to: its wrong programs, per backend and corpus."""


def corpus_section(builds: list[results.BuildResult], benchmarks: dict) -> str:
    """Per generated corpus, one row per family of wrong programs (`results.family_histories`),
    one cell per build, then its member count, pass and catalogue match; its repro below it,
    folded, with a copy button."""
    histories = results.family_histories(builds)
    parts = [
        '<section id="corpus"><h2>Generated corpus: families of wrong programs</h2>',
        "<p>A family is one fault: where the call first goes wrong, the pass, the kind of "
        "coordinate and the op, in words. The same programs run on every build. A cell says "
        "how many programs of the corpus have the fault on that build (<em>not found</em>: "
        "none; <em>not measured</em>: the build has no record of the corpus on that backend, "
        "or one of an older corpus version) and links to asv's graph of the corpus's wrong "
        "programs. <em>programs</em> counts them on the newest build where the family is "
        "wrong; the pass, the catalogue match and the repro are from that build.</p>",
    ]
    for corpus, families in histories.items():
        parts.append(corpus_table(corpus, list(families.values()), builds, benchmarks))
    if not histories:
        parts.append("<p>No corpus records of the current corpus version yet.</p>")
    parts.append("</section>")
    return "\n".join(parts)


def _changes(base: results.BuildResult | None, patch: results.BuildResult) -> str:
    """What a patch changes against its base, one list per kind (or why it cannot say)."""
    if base is None:
        return f'<p class="empty">{_e(patch.base)} has no results on {_e(patch.machine)}.</p>'
    if failed := next((b for b in (base, patch) if not b.installed), None):
        why = f"{failed.tag} did not install: {failed.identity.get('error')}"
        return f'<p class="empty">Not compared: {_e(why)}</p>'
    flips = {"fixed": "fixed", "BROKEN": "broken", "changed": "changed"}
    verdicts = [(flips[f.kind], f.describe()) for f in compare.verdict_flips(base, patch)]
    programs = [(flips[f.kind], f.describe()) for f in compare.program_flips(base, patch)]
    programs += [("changed", line) for line in compare.corpus_moves(base, patch)]
    costs = [("cost", move.describe()) for move in compare.cost_moves(base, patch)]
    lists = [("verdicts", "Verdicts that differ", verdicts),
             ("corpus", "Generated corpus programs that differ", programs),
             ("costs", "Cost figures that moved", costs)]  # fmt: skip
    return "".join(
        f'<h4>{_e(title)} against {_e(base.tag)} ({len(items)})</h4><ul class="{kind}">'
        + "".join(f'<li class="{cls}">{_e(text)}</li>' for cls, text in items)
        + ("" if items else '<li class="empty">none</li>')
        + "</ul>"
        for kind, title, items in lists
    )


def corpus_table(corpus: str, families: list[results.FamilyHistory],
                 builds: list[results.BuildResult], benchmarks: dict) -> str:  # fmt: skip
    """One corpus's families: a `tbody` each, its row of cells and its folded repro."""
    lines = [
        f'<h3 id="corpus-{_e(corpus)}">{_e(corpus)}</h3>',
        f'<p class="summary">{len(families)} families of wrong programs over '
        f"{len(builds)} build results</p>",
    ]
    if not families:
        return "\n".join([*lines, "<p>No program of this corpus is wrong on any build.</p>"])
    lines.append(
        f'<div class="scroll"><table class="corpus" data-corpus="{_e(corpus)}"><thead><tr>'
        f'<th scope="col">family (the fault)</th><th scope="col">backend</th>'
        f'{_build_heads(builds)}<th scope="col">programs</th><th scope="col">pass</th>'
        '<th scope="col">catalogue</th></tr></thead>'
    )
    names = benchmarks.get(CORPUS_BENCHMARK, {}).get("param_names", [])
    for history in families:
        cells = "".join(_cell(c) for c in family_cells(history, builds))
        graph = graph_template(CORPUS_BENCHMARK, names, (history.backend, history.corpus))
        lines.append(
            f'<tbody class="family" data-backend="{_e(history.backend)}" data-interesting="1" '
            f'data-family="{_e(history.family)}"><tr data-graph="{_e(graph)}">'
            f'<th scope="row">{_e(history.family)}</th>'
            f"<td>{_e(history.backend)}</td>{cells}"
            f'<td class="members">{history.newest_count}</td>{_family_pass(history)}'
            f'<td class="catalogue">{_e(history.catalogue)}</td></tr>'
            f'<tr class="repro"><td colspan="{len(builds) + 5}">{_repro(history)}</td></tr>'
            "</tbody>"
        )
    lines.append("</table></div>")
    return "\n".join(lines)


def family_cells(history: results.FamilyHistory, builds: list[results.BuildResult]) -> list[Cell]:
    """A family's verdict on each build: `wrong` (with its programs), `not found` or `not run`
    (not measured); marked where it differs from the build to its left on the same machine."""
    cells, previous = [], None
    for build, members in zip(builds, history.members):
        state, label, words = _family_verdict(history, members)
        flip = None
        if previous and previous[0] == build.machine and previous[2] != words:
            flip = flip_kind(*(FOUND_AS.get(s, s) for s in (previous[1], state)))
        cells.append(Cell(state, words, label, flip))
        previous = (build.machine, state, words)
    return cells


FOUND_AS = {"not found": "exact"}
"""A family not found on a build is, for its marks, as an exact verdict: wrong -> not found
is `fixed`, not found -> wrong `broken`."""


def _family_verdict(history: results.FamilyHistory, members) -> tuple[str, str, str]:
    """(state, short label, words) of a family on one build from its members there."""
    if members is None:
        why = (f"no record of corpus {history.corpus} on {history.backend} here, or one of an "
               "older corpus version")  # fmt: skip
        return "not run", "not measured", f"not measured ({why})"
    if not members:
        return "not found", "not found", f"not found: no program of {history.corpus} has it here"
    programs = "program" if len(members) == 1 else "programs"
    listed = ", ".join(map(str, members))
    return "wrong", f"{len(members)} {programs}", f"wrong: {len(members)} {programs} ({listed})"


def _family_pass(history: results.FamilyHistory) -> str:
    """The pass cell: the passes the family names, else why none is named."""
    if history.passes:
        return f'<td><span class="pass">{_e(" + ".join(history.passes))}</span></td>'
    why = render.attribution_text(history.attribution) if history.attribution else "not attributed"
    return f'<td class="no-pass">{_e(why)}</td>'


def _repro(history: results.FamilyHistory) -> str:
    """The family's repro, folded: the script, a copy button, the shrunk skeleton."""
    return (
        f"<details><summary>repro of program {history.representative} (newest: "
        f"{_e(history.last_build.tag)}), shrunk to <code>{_e(history.skeleton)}</code></summary>"
        '<button type="button" class="copy">copy</button>'
        f'<pre class="repro"><code>{_e(history.repro)}</code></pre></details>'
    )


def cost_section(builds: list[results.BuildResult], benchmarks: dict) -> str:
    parts = [
        '<section id="cost"><h2>Cost of the correct controls (Inductor)</h2>',
        "<p>Only correct controls are costed: a control that is wrong on a build has no point "
        "there. Hover a point for its value.</p>",
    ]
    scenarios = list(dict.fromkeys(s for b in builds for s in results.cost_scenarios(b)))
    for scenario in scenarios:
        parts.append(f'<h3 id="cost-{_e(scenario)}">{_e(scenario)}</h3><div class="charts">')
        for metric in charted():
            benchmark = f"{scenario}.{metric.asv_name}"
            if benchmark not in benchmarks:
                continue
            unit = benchmarks[benchmark].get("unit", "")
            for size in _sizes(builds, benchmark):
                title = f"{metric.chart}, N={render.size_cell(size)}"
                parts.append(cost_chart(builds, benchmark, size, title, unit))
        parts.append("</div>")
    if not scenarios:
        parts.append("<p>No Cost results yet.</p>")
    parts.append("</section>")
    return "\n".join(parts)


def charted() -> list[metrics.Metric]:
    """The Cost metrics the page charts (benchmarks/metrics.py: those with a chart title)."""
    return [metric for metric in metrics.of(metrics.COST) if metric.chart]


def _sizes(builds, benchmark: str) -> list:
    return list(dict.fromkeys(size for b in builds for _, size in b.values.get(benchmark, {})))


def cost_series(builds, benchmark: str, size) -> tuple[list[str], dict[tuple, list]]:
    """x labels (build tags, by date) and one series per (correct control, machine): its
    value on each build, None where it was not measured; in the benchmark's control order."""
    tags = list(dict.fromkeys(b.tag for b in sorted(builds, key=_build_date)))
    series: dict[tuple, list] = {}
    for build in builds:
        for (control, n), value in build.values.get(benchmark, {}).items():
            if n == size and results.is_number(value):
                points = series.setdefault((control, build.machine), [None] * len(tags))
                points[tags.index(build.tag)] = value
    controls = _controls(builds, benchmark)
    return tags, dict(sorted(series.items(), key=lambda item: controls.index(item[0][0])))


def _controls(builds, benchmark: str) -> list[str]:
    """Every control of a Cost benchmark, in the order asv lists them."""
    return list(dict.fromkeys(c for b in builds for c, _ in b.values.get(benchmark, {})))


def cost_chart(builds, benchmark: str, size, title: str, unit: str) -> str:
    tags, series = cost_series(builds, benchmark, size)
    controls, machines = _controls(builds, benchmark), sorted({b.machine for b in builds})
    named = {}
    for (control, machine), points in series.items():
        name = f"{control} ({machine})" if len(machines) > 1 else control
        named[name] = (points, (_colour(controls.index(control)), machines.index(machine)))
    legend = "".join(
        f'<li><span class="swatch" style="background:{colour}"></span>{_e(name)}</li>'
        for name, (_, (colour, _)) in named.items()
    )
    empty = "" if series else '<p class="empty">no correct control was measured</p>'
    return (
        f'<figure class="chart" data-benchmark="{_e(benchmark)}" data-size="{_e(str(size))}">'
        f"<figcaption>{_e(title)}</figcaption>{line_chart(tags, named, unit)}"
        f'<ul class="legend">{legend}</ul>{empty}</figure>'
    )


def line_chart(x_labels: list[str], series: dict[str, tuple], unit: str) -> str:
    """An SVG line chart: builds along x, the metric in `unit` up y (from 0); series: name ->
    (values, (colour, dash)), dash 0 for a solid line; a line breaks where a value is missing."""
    width, height, left, right, top, bottom = 520, 260, 78, 12, 12, 70
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [v for vs, _ in series.values() for v in vs if v is not None]
    ticks = nice_ticks(max(values, default=0), unit)
    top_value = ticks[-1]

    def x(i: int) -> float:
        return left + (plot_w * (i + 0.5) / len(x_labels) if x_labels else 0)

    def y(value: float) -> float:
        return top + plot_h * (1 - value / top_value)

    out = [
        f'<svg viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{_e(unit)} over builds">'
    ]
    for tick in ticks:
        out.append(
            f'<line class="grid" x1="{left}" x2="{width - right}" y1="{y(tick):.1f}" '
            f'y2="{y(tick):.1f}"/><text class="tick" x="{left - 6}" y="{y(tick) + 4:.1f}" '
            f'text-anchor="end">{_e(tick_label(tick, unit))}</text>'
        )
    out.append(
        f'<text class="axis-label y-label" transform="translate(14,{top + plot_h / 2}) '
        f'rotate(-90)" text-anchor="middle">{_e(unit)}</text>'
    )
    for i, label in enumerate(x_labels):
        out.append(
            f'<text class="tick" transform="translate({x(i):.1f},{top + plot_h + 12}) '
            f'rotate(-30)" text-anchor="end">{_e(label)}</text>'
        )
    out.append(
        f'<text class="axis-label x-label" x="{left + plot_w / 2}" y="{height - 4}" '
        'text-anchor="middle">build</text>'
    )
    out.append(
        f'<line class="axis" x1="{left}" x2="{left}" y1="{top}" y2="{top + plot_h}"/>'
        f'<line class="axis" x1="{left}" x2="{width - right}" y1="{top + plot_h}" '
        f'y2="{top + plot_h}"/>'
    )
    for name, (points, (colour, dash)) in series.items():
        dashes = f' stroke-dasharray="{3 * dash + 3},3"' if dash else ""
        for run in _runs(points):
            path = " ".join(f"{x(i):.1f},{y(points[i]):.1f}" for i in run)
            out.append(f'<polyline class="series" stroke="{colour}"{dashes} points="{path}"/>')
        for i, value in enumerate(points):
            if value is None:
                continue
            out.append(
                f'<circle class="point" cx="{x(i):.1f}" cy="{y(value):.1f}" r="4" fill="{colour}">'
                f"<title>{_e(name)} on {_e(x_labels[i])}: {_e(value_text(value, unit))}</title>"
                "</circle>"
            )
    out.append("</svg>")
    return "".join(out)


def nice_ticks(largest: float, unit: str = "", count: int = 5) -> list[float]:
    """0 and evenly spaced round values up to at least `largest` (1, 2, 2.5 or 5 x 10^k; of
    MiB for bytes from a MiB up)."""
    if largest <= 0:
        return [0, 1]
    scale = render.MIB if unit == "bytes" and largest >= render.MIB else 1
    raw = largest / scale / (count - 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw) * scale
    return [step * i for i in range(math.ceil(largest / step - 1e-9) + 1)]


def tick_label(value: float, unit: str) -> str:
    if unit == "bytes" and value >= render.MIB:
        return f"{value / render.MIB:g} MiB"
    if value >= 1e6:
        return f"{value / 1e6:g}M"
    if value >= 1e3:
        return f"{value / 1e3:g}k"
    return f"{value:g}"


def value_text(value: float, unit: str) -> str:
    if unit == "bytes":
        return render.bytes_text(value)
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.3f} {unit}"
    return f"{int(value):,} {unit}"


def _runs(points: list) -> list[list[int]]:
    """Indices of consecutive measured points, two or more (a line joins only these)."""
    runs: list[list[int]] = [[]]
    for i, value in enumerate(points):
        if value is None:
            runs.append([])
        else:
            runs[-1].append(i)
    return [run for run in runs if len(run) > 1]


def _build_date(build: results.BuildResult) -> str:
    return build.identity.get("date", "")


def _colour(index: int) -> str:
    return SERIES_COLOURS[index % len(SERIES_COLOURS)]


def _e(text) -> str:
    return markup.escape(str(text), quote=True)


def _navigation(scenarios: list[str], patches: bool) -> str:
    links = ['<a href="#timeline">timeline</a>']
    links += [f'<a href="#matrix-{_e(s)}">{_e(s)}</a>' for s in scenarios]
    links += ['<a href="#patches">patches</a>'] if patches else []
    links += [
        '<a href="#corpus">corpus families</a>',
        '<a href="#cost">cost charts</a>',
        '<a href="../index.html">asv site</a>',
    ]
    return f"<nav>{' | '.join(links)}</nav>"


def _legend() -> str:
    items = "".join(
        f'<li><span class="v v-{state.replace(" ", "-")} key">{STRIP_MARKS[state]} {state}'
        "</span></li>"
        for state in render.VERDICT_STATES
    )
    flips = (
        '<li><span class="v v-exact flip key">\u25b2 fixed / \u25bc broken / \u25c6 changed'
        "</span> differs from the build it is compared with (on the same machine, the build "
        "before it of the same builds file; a patch's base)</li>"
        '<li><span class="key pass">pass</span> the Inductor pass attribution names</li>'
    )
    return f'<ul class="states">{items}{flips}</ul>'


def _filters() -> str:
    return (
        '<form class="filters"><label><input type="checkbox" id="only-interesting"> only rows '
        'wrong, failed or changing somewhere</label> <label><input type="checkbox" '
        'id="only-inductor"> Inductor only</label> <label><input type="checkbox" '
        'id="full-words"> whole verdicts in the cells</label></form>'
    )


STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 0 16px 32px; color: #1f2328; }
header { padding-bottom: 4px; border-bottom: 1px solid #d0d7de; }
h1 { font-size: 20px; margin: 12px 0 4px; } h2 { margin: 24px 0 4px; font-size: 18px; }
nav a { margin: 0 4px; } .summary { margin: 0 0 6px; color: #57606a; }
ul.states, ul.legend { list-style: none; padding: 0; margin: 6px 0; display: flex;
  flex-wrap: wrap; gap: 6px 14px; }
.key { display: inline-block; padding: 1px 8px; border-radius: 3px; }
.key.pass { display: inline-block; margin: 0 4px 0 0; }
.scroll { overflow-x: auto; content-visibility: auto; contain-intrinsic-size: auto 900px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #d0d7de; padding: 3px 6px; text-align: left; vertical-align: top; }
thead th { background: #f6f8fa; position: sticky; top: 0; }
th.build span { display: block; } .sub { font-weight: normal; color: #57606a; font-size: 12px; }
tbody th { font-weight: 600; white-space: nowrap; } td.size { text-align: right; }
td.v { min-width: 96px; } td.v a { color: inherit; text-decoration: none; display: block; }
td.v a:hover { text-decoration: underline; }
.v-exact { background: #dafbe1; color: #116329; }
.v-wrong { background: #ffcecb; color: #82071e; font-weight: 600; }
.v-skipped { background: #eaeef2; color: #57606a; }
.v-failed { background: #fbefff; color: #6639ba; font-weight: 600; }
.harness-failures { margin: 0 0 6px; padding: 4px 8px; background: #1f2328; color: #fff;
  font-weight: 700; }
.v-harness-failure { background: #1f2328; color: #fff; font-weight: 700;
  outline: 2px solid #cf222e; outline-offset: -2px; }
.v-not-run { background: repeating-linear-gradient(45deg, #fff, #fff 4px, #f6f8fa 4px,
  #f6f8fa 8px); color: #8c959f; }
.flip { box-shadow: inset 4px 0 0 #bf8700; }
.flip-mark { display: block; font-size: 11px; color: #7d4e00; font-weight: 600; }
.pass { display: block; font-size: 11px; font-family: ui-monospace, monospace;
  color: #0550ae; background: #ddf4ff; border-radius: 3px; padding: 0 3px; margin-top: 2px; }
.words { display: none; } body.full .words { display: inline; } body.full .short { display: none; }
td.v .words { white-space: normal; font-weight: normal; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
figure.chart { margin: 0; border: 1px solid #d0d7de; border-radius: 4px; padding: 6px; }
figcaption { font-weight: 600; }
svg .grid { stroke: #eaeef2; } svg .axis { stroke: #57606a; }
svg .tick { font-size: 11px; fill: #57606a; } svg .axis-label { font-size: 12px; fill: #1f2328; }
svg .series { fill: none; stroke-width: 2; }
.swatch { display: inline-block; width: 12px; height: 12px; margin-right: 4px;
  vertical-align: -1px; border-radius: 2px; }
.empty { color: #57606a; }
th.patch { background: #fff8c5; }
article.patch { border-left: 4px solid #bf8700; padding: 0 10px; margin: 8px 0 16px; }
article.patch h3 { font-size: 15px; margin: 8px 0 4px; } article.patch h4 { margin: 8px 0 2px; }
article.patch ul { margin: 2px 0; padding-left: 18px; }
li.fixed { color: #116329; } li.broken { color: #82071e; font-weight: 600; }
.v-not-found { background: #fff; color: #116329; }
table.corpus tbody.family { border-top: 2px solid #d0d7de; }
table.corpus tbody th { white-space: normal; max-width: 420px; }
td.members { text-align: right; } td.no-pass { font-size: 12px; color: #57606a; max-width: 260px; }
tr.repro td { background: #f6f8fa; } tr.repro summary { cursor: pointer; color: #0550ae; }
pre.repro { margin: 4px 0 0; padding: 6px; background: #fff; border: 1px solid #d0d7de;
  max-height: 420px; overflow: auto; font-size: 12px; }
button.copy { margin: 4px 0 0; font: inherit; font-size: 12px; }
textarea.copied { display: block; width: 100%; height: 10em; margin-top: 4px;
  font: 12px ui-monospace, monospace; }
table.now th { white-space: normal; } table.now td { max-width: 460px; }
td.through { font-size: 12px; color: #57606a; } td.through .pass { display: inline-block; }
table.strips { table-layout: fixed; width: max-content; }
table.strips col.row-name { width: 260px; } table.strips col.release { width: 26px; }
table.strips col.ranges { width: 200px; }
table.strips th, table.strips td { padding: 1px 3px; overflow: hidden; }
table.strips th.release { padding: 2px 0; vertical-align: bottom; text-align: center; }
th.release span { writing-mode: vertical-rl; transform: rotate(180deg); font-size: 11px;
  font-weight: normal; white-space: nowrap; }
td.s { text-align: center; padding: 1px 0; font-size: 13px; }
td.s-broken { box-shadow: inset 3px 0 0 #82071e; } td.s-fixed { box-shadow: inset 3px 0 0 #116329; }
tbody.strip { border-top: 2px solid #d0d7de; }
tr.cost-line th.metric { font-weight: normal; font-size: 12px; color: #57606a; }
tr.cost-line td.spark { padding: 0; } td.extent, td.ranges { font-size: 12px; }
td.extent { color: #57606a; white-space: nowrap; }
svg.spark { display: block; } svg.spark polyline { fill: none; stroke: #0072B2;
  stroke-width: 1.5; vector-effect: non-scaling-stroke; }
svg.spark line.dot { stroke: #0072B2; stroke-width: 5; stroke-linecap: round;
  vector-effect: non-scaling-stroke; }
"""

SCRIPT = """
const rows = () => document.querySelectorAll(
  'section.matrix tbody tr, #corpus tbody.family, #timeline tbody.strip');
function applyFilters() {
  const interesting = document.getElementById('only-interesting').checked;
  const inductor = document.getElementById('only-inductor').checked;
  rows().forEach(row => {
    const hide = (interesting && row.dataset.interesting !== '1') ||
      (inductor && row.dataset.backend !== 'inductor');
    row.hidden = hide;
  });
  const full = document.getElementById('full-words').checked;
  if (full) fillWords();
  document.body.classList.toggle('full', full);
}
// each cell's whole verdict is its title, written once; the words shown in place of the short
// label are made from it the first time a reader asks for them
function fillWords() {
  document.querySelectorAll('td.v > a').forEach(a => {
    if (a.querySelector('.words')) return;
    const words = document.createElement('span');
    words.className = 'words';
    words.textContent = a.parentElement.title;
    a.append(words);
  });
}
// each cell's link to asv's graph: its row's template (data-graph) with the machine and
// commit of its column's build (data-machine, data-commit on the column heads)
function fillLinks() {
  document.querySelectorAll('table').forEach(table => {
    const heads = [...table.querySelectorAll('thead th.build')];
    table.querySelectorAll('tr[data-graph]').forEach(row => {
      const template = row.dataset.graph;
      row.querySelectorAll('td.v > a').forEach((a, i) => {
        const head = heads[i].dataset;
        a.href = template.replace('{machine}', encodeURIComponent(head.machine))
          .replace('{commit}', encodeURIComponent(head.commit));
      });
    });
  });
}
fillLinks();
document.querySelectorAll('form.filters input')
  .forEach(input => input.addEventListener('change', applyFilters));
// copy a repro: the clipboard where the browser lets a file:// page write it, else the script
// in a selected text area beside the button (Ctrl+C copies it)
function selectBeside(button, text) {
  let area = button.parentElement.querySelector('textarea.copied');
  if (!area) {
    area = document.createElement('textarea');
    area.className = 'copied';
    area.readOnly = true;
    button.after(area);
  }
  area.value = text;
  area.focus();
  area.select();
  let copied = false;
  try { copied = document.execCommand('copy'); } catch (e) { copied = false; }
  button.textContent = copied ? 'copied' : 'selected: press Ctrl+C';
}
function copyRepro(button) {
  const text = button.parentElement.querySelector('pre.repro').textContent;
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text)
      .then(() => { button.textContent = 'copied'; }, () => selectBeside(button, text));
  } else {
    selectBeside(button, text);
  }
}
document.querySelectorAll('#corpus button.copy')
  .forEach(button => button.addEventListener('click', () => copyRepro(button)));
"""


def _document(body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>writeback: verdicts</title>"
        f"<style>{STYLE}</style></head>\n<body>\n{body}\n<script>{SCRIPT}</script>\n"
        "</body></html>\n"
    )


def _benchmarks(results_dir: Path) -> dict:
    path = results_dir / "benchmarks.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.verdict_page", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    parser.add_argument("--ledger", type=Path, default=ledger_repo.DEFAULT_LEDGER)
    parser.add_argument("--html", type=Path, default=ROOT / "html")
    args = parser.parse_args(argv)
    if (args.html / "index.html").is_file():
        path = publish(args.html, args.results, args.ledger)
    else:
        builds = results.load(args.results, args.ledger)
        path = write(args.html / PAGE, builds, _benchmarks(args.results))
    print(f"verdict page: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
