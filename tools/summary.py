"""What a run ends with on the terminal: one screen, the full report being in a file.

Per build (oldest first, machine by machine): how many verdicts are wrong and which (scenario,
control, backend, sizes or variants: the coordinates wrong), or that they are the build
before's (same machine, same builds file) but for what flipped since it (fixed / BROKEN); what
failed, grouped by its reason. A patch build is compared with its base, the build after it with the
last build of the timeline before it. Then where the report, the site and the verdict page are,
and the command that serves the site. Everything comes from the results model
(`tools/results.py`'s `load`), as the report does; `make history` and `make merge` print this
and write the report to results/report.md.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.known_failures import headline  # standard library only
from tools import render as words
from tools import results, verdict_page

ROOT = Path(__file__).resolve().parents[1]
SERVE = ".venv/bin/asv preview"
REASONS_SHOWN = 3
"""Distinct failure reasons a build lists; the report lists every failure."""


def summary(builds: list[results.BuildResult], report_file: Path, html: Path | None) -> str:
    """The run's summary: every build's wrong verdicts, flips and failures, then where the
    report (`report_file`), the site and the verdict page (under `html`; None: not published
    by this run) are."""
    if not builds:
        return "No results yet: run `make history` first."
    keys = results.matrix_keys(builds)
    several = len({b.machine for b in builds}) > 1
    lines, states_of, latest = [], {}, {}
    for build, base in zip(builds, results.compared_with(builds)):
        name = build.label + (f" on {build.machine}" if several else "")
        name += f", a patch of {build.base}" if build.base else ""
        if not build.installed:
            lines += [f"{name}: not measured", *failure_lines(build)]
            continue
        states = states_of[id(build)] = verdict_states(build, keys)
        wrong = [key for key, state in states.items() if state == "wrong"]
        lines += [f"{name}: {_count(len(wrong), 'wrong verdict')}", *_stale(build)]
        previous = base if build.base else latest.get((build.machine, build.branch))
        previous_states = states_of.get(id(previous), {})
        previous = previous if previous_states else None
        if not build.base:
            latest[build.machine, build.branch] = build
        flips = flip_lines(previous, previous_states, build, states) if previous else []
        if wrong and previous and _explained_by_flips(previous_states, states):
            since = previous.tag or previous.name
            lines.append(f"  wrong: the same as {since}" + (", but for:" if flips else ""))
        else:
            lines += [f"  wrong: {row}" for row in grouped(build, wrong)]
        lines += flips
        lines += failure_lines(build)
    lines += ["", f"The full report: {shown(report_file)}"]
    if html is not None:
        lines += [
            f"The verdict page: {shown(html / verdict_page.PAGE)} (opens from the file system)",
            f"The site: {shown(html)}/; serve it with `{SERVE}` (http://127.0.0.1:8080)",
        ]
    return "\n".join(lines) + "\n"


def verdict_states(build: results.BuildResult, keys: list[tuple]) -> dict[tuple, str]:
    """The verdict state (one of `render.VERDICT_STATES`) of each matrix key (scenario, control,
    backend, size) on `build`."""
    return {key: results.verdict_state(build, key[1], key[2], key[3], key[0])[0] for key in keys}


def grouped(build: results.BuildResult, rows: list[tuple]) -> list[str]:
    """`scenario.control backend sizes: coordinates`, one line per (scenario, control, backend,
    coordinates): the sizes wrong in the same coordinates share a line, and so do the
    configuration variants (rows without a size) of one control."""
    sizes: dict[tuple, list] = {}
    for scenario, control, backend, n in rows:
        wrong = coordinates(build, (scenario, control, backend, n))
        where = (scenario, control, VARIANTS if n is None else backend, wrong)
        sizes.setdefault(where, []).append(backend if n is None else n)
    return [
        f"{scenario}.{control} {_where(backend, found)}" + (f": {wrong}" if wrong else "")
        for (scenario, control, backend, wrong), found in sizes.items()
    ]


VARIANTS = "variants"
"""What `grouped` files a configuration variant's row under (its backend is its variant)."""


def _where(backend: str, found: list) -> str:
    if backend == VARIANTS:
        return f"{_count(len(found), 'variant')} ({', '.join(found)})"
    return backend + _sizes(found)


def _explained_by_flips(previous_states: dict, states: dict) -> bool:
    """Whether every change of a wrong verdict between two builds is a fix or a break (a wrong
    verdict that became skipped, failed or not run is not)."""
    flips = {("wrong", "exact"), ("exact", "wrong")}
    return all(
        (before, now) in flips
        for key, now in states.items()
        if (before := previous_states.get(key)) != now and "wrong" in (before, now)
    )


def coordinates(build: results.BuildResult, key: tuple) -> str:
    """The contract's coordinates a wrong row is wrong in (`ret_b, in_b, view_b`) and the
    storages it moved; '' when the probe record is missing."""
    row = build.probe.get(key, {})
    counts = row.get("wrong_elements") or {}
    wrong = sorted((k for k, count in counts.items() if k != "total" and count),
                   key=words.coordinate_order)  # fmt: skip
    return ", ".join(wrong + [f"moved {name}" for name in row.get("moved") or []])


def flip_lines(previous, previous_states: dict, build, states: dict) -> list[str]:
    """What flipped between two builds of one machine (each with its `verdict_states`): `fixed`
    (wrong before, exact now) and `BROKEN` (exact before, wrong now), named as `grouped` names
    them."""
    since = previous.tag or previous.name
    flips = {key: (previous_states.get(key), state) for key, state in states.items()}
    fixed = [key for key, flip in flips.items() if flip == ("wrong", "exact")]
    broken = [key for key, flip in flips.items() if flip == ("exact", "wrong")]
    return [f"  fixed since {since}: {row}" for row in grouped(previous, fixed)] + [
        f"  BROKEN since {since}: {row}" for row in grouped(build, broken)
    ]


def failure_lines(build: results.BuildResult) -> list[str]:
    """The build's failures (`results.failures`, a known fault of the build saying so) and its
    corpus programs that failed other than a known state, one line per distinct reason with the
    first thing that failed for it: harness failures first, then the most frequent reason."""
    failed: dict[tuple[bool, str], list[str]] = {}
    for failure in results.failures([build]):
        failed.setdefault((not failure.harness, failure.why), []).append(failure.benchmark)
    for program in results.failed_programs([build]):
        if not program.known:
            where = f"corpus {program.corpus} program {program.program} ({program.backend})"
            failed.setdefault((True, headline(program.error)), []).append(where)
    ordered = sorted(failed.items(), key=lambda item: (item[0][0], -len(item[1])))
    lines = [f"  failed: {_first_of(names)}: {reason}"
             for (_, reason), names in ordered[:REASONS_SHOWN]]  # fmt: skip
    if rest := ordered[REASONS_SHOWN:]:
        count = sum(len(names) for _, names in rest)
        lines.append(f"  failed: {count} more, for {len(rest)} other reasons (the report "
                     "lists each)")  # fmt: skip
    return lines


def shown(path: Path) -> str:
    """`path` relative to the project when it is inside it, else as it is."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _stale(build: results.BuildResult) -> list[str]:
    if not build.stale:
        return []
    return [f"  not shown: {_count(len(build.stale), 'benchmark')} measured with an older "
            "version of the benchmark (the report says which)"]  # fmt: skip


def _first_of(names: list[str]) -> str:
    return names[0] + (f" and {len(names) - 1} more" if len(names) > 1 else "")


def _sizes(found: list) -> str:
    return (" " + ", ".join(words.size_cell(n) for n in found)) if found else ""


def _count(number: int, thing: str) -> str:
    return f"{number} {thing}" + ("" if number == 1 else "s")
