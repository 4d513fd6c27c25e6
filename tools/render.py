"""The tables both the report (tools/report.py) and the standalone check
(tools/check.py) print, in one wording: a verdict, the values table, the cost
table of a scenario's correct controls and the ratios between them.

Each caller gathers its numbers its own way (the report from asv's results and the probe
records beside them, the check from the probe it just ran) and hands them here as plain
values; every word a reader sees comes from this module, the metrics' labels from
benchmarks/metrics.py. Standard library and benchmarks/ only: the check imports it inside a
benchmark environment, which holds torch and nothing of the tools'.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable
from itertools import combinations

from benchmarks import metrics  # standard library only

MIB = 1024 * 1024
VERDICT_STATES = ("exact", "wrong", "harness failure", "skipped", "failed", "not run")
"""`harness failure`: the eager reference broke its own contract (the probe row's
`harness_failure`), so the harness, not torch, is wrong there."""
COORDINATE_KINDS = ("ret", "in", "view")


def verdict(
    state: str,
    why: str = "",
    *,
    total: int = 0,
    coordinates: dict | None = None,
    moved: int = 0,
    pass_name: str | None = None,
) -> str:
    """A verdict's words: `exact`, `wrong: 9 (ret_b 3, in_b 3, view_b 3); pass: NAME`,
    `harness failure: why`, `skipped: why`, `failed: why` or `not run (why)`. `state` is one
    of VERDICT_STATES; `why` is a harness failure's, skip's, failure's or missing result's
    reason; the rest describe a wrong one (`coordinates`: wrong elements per coordinate,
    `moved`: inputs whose storage moved)."""
    if state == "exact":
        return "exact"
    if state in ("harness failure", "skipped", "failed"):
        return f"{state}: {why}"
    if state == "not run":
        return f"not run ({why})"
    if state != "wrong":
        raise ValueError(f"unknown verdict state {state!r}; expected one of {VERDICT_STATES}")
    detail = coordinates or {}
    named = sorted((k for k in detail if k != "total" and detail[k]), key=coordinate_order)
    words = f"wrong: {int(total)}"
    words += f" ({', '.join(f'{k} {detail[k]}' for k in named)})" if named else ""
    if moved:
        words += f"; {int(moved)} {'storage' if int(moved) == 1 else 'storages'} moved"
    return words + (f"; pass: {pass_name}" if pass_name else "")


def row_verdict(row: dict | None) -> tuple[str, str]:
    """(state, words) of one probe row: a row of a probe record or of the check's JSON."""
    if row is None:
        return "not run", verdict("not run", "no result for it")
    if row.get("harness_failure"):
        return "harness failure", verdict("harness failure", row["harness_failure"])
    if row.get("skipped"):
        return "skipped", verdict("skipped", row["skipped"])
    if row.get("error"):
        return "failed", verdict("failed", row["error"])
    wrong = row.get("wrong_elements")
    if wrong is None:
        why = "stopped at the small correctness gate" if row.get("gated") else "not measured"
        return "not run", verdict("not run", why)
    moved = row.get("storages_moved") or 0
    if not wrong.get("total") and not moved:
        return "exact", verdict("exact")
    words = verdict("wrong", total=wrong.get("total", 0), coordinates=wrong, moved=moved,
                    pass_name=pass_names(row.get("attribution")))  # fmt: skip
    return "wrong", words


def pass_names(attribution: dict | None) -> str | None:
    """Every pass an attribution names, joined by ` + ` (its `passes`; `pass` in records
    written before attributions kept them all); None where it names none."""
    found = attribution or {}
    names = [named["pass"] for named in found.get("passes") or []]
    return " + ".join(names) if names else found.get("pass")


def values_table(
    keys: Iterable[tuple[str, str]], sizes: Iterable, cell: Callable[[str, str, object], str]
) -> str:
    """control x backend rows, one column per size, each cell `cell(control, backend, size)`."""
    sizes = list(sizes)
    lines = [
        "| control | backend | " + " | ".join(size_label(n) for n in sizes) + " |",
        "|---|---|" + "---|" * len(sizes),
    ]
    for control, backend in dict.fromkeys(keys):
        cells = [cell(control, backend, n) for n in sizes]
        lines.append(f"| {control} | {backend} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def cost_section(scenario: str, rows: list[dict], not_costed: Iterable[tuple[str, int]]) -> str:
    """The cost of a scenario's correct controls: the table (a column per Cost metric of
    benchmarks/metrics.py, under its label), what was not costed (wrong under Inductor), each
    note on a missing figure once, and the ratios of the warm calls.

    A row has `control`, `n`, each Cost metric's row key it measured (`scratch_bytes`,
    `median_s`, `instructions`, ...), and whichever notes it has of `scratch_bytes_static` (the
    wrapper's simulated peak), `q25_s`, `q75_s`, `samples`, `floor_defect`, `floor_note`,
    `instructions_note`, `instructions_error` (absent or None: not measured)."""
    columns = metrics.of(metrics.COST)
    lines = [
        f"Cost of the correct `{scenario}` controls (Inductor):",
        "",
        "| correct control | N | " + " | ".join(m.label for m in columns) + " |",
        "|---|---|" + "---|" * len(columns),
    ]
    timed = [row for row in rows if _number(row.get("median_s"))]
    for row in timed:
        cells = [CELLS.get(m.row_key, _figure)(row, m.row_key) for m in columns]
        lines.append(f"| {row['control']} | {row['n']:,} | " + " | ".join(cells) + " |")
    if not timed:
        lines.append("| (no control was correct and timed) |" + " |" * (len(columns) + 1))
    wrong = [f"{control} (N={n:,}: wrong, not costed)" for control, n in not_costed]
    if wrong:
        lines += ["", "Not costed (wrong under Inductor): " + ", ".join(wrong)]
    notes = _notes(timed)
    if notes:
        lines += ["", *notes]
    return "\n".join([*lines, "", ratio_lines(timed)])


def ratio_lines(rows: list[dict]) -> str:
    """Each pair of timed controls at one size: the faster's median warm call over the
    slower's (both from one run)."""
    lines = []
    for n in sorted({row["n"] for row in rows}):
        at_n = sorted((r for r in rows if r["n"] == n), key=lambda r: r["median_s"])
        for fast, slow in combinations(at_n, 2):
            ratio = fast["median_s"] / slow["median_s"]
            lines.append(
                f"- N={n:,}: {fast['control']} / {slow['control']} = {ratio:.3f} "
                f"({(1 - ratio) * 100:.1f}% lower median latency, same run)"
            )
    return "\n".join(lines) or "- fewer than two correct controls were timed"


def quartiles(samples: list[float]) -> tuple[float, float] | None:
    """The first and third quartiles of timing samples (linear interpolation, as numpy's and
    asv's), or None for fewer than two samples."""
    if len(samples) < 2:
        return None
    q25, _, q75 = statistics.quantiles(samples, n=4, method="inclusive")
    return q25, q75


def size_label(n) -> str:
    """A size column's header: `N=1,048,576`, or a catalogue's size label as it is."""
    return f"N={n:,}" if isinstance(n, int) else str(n)


def size_cell(n) -> str:
    """A size in a cell: `1,048,576`, a label as it is, `-` for none (a variant)."""
    return f"{n:,}" if isinstance(n, int) else "-" if n is None else str(n)


def bytes_text(value) -> str:
    if not _number(value):
        return "n/a"
    value = int(value)
    return f"{value:,} B ({value / MIB:g} MiB)" if value >= MIB else f"{value:,} B"


def coordinate_order(coordinate: str) -> tuple[int, str]:
    """The contract's order: returns, then inputs, then views, then the rest (alias probes)."""
    kind, _, name = coordinate.partition("_")
    return (COORDINATE_KINDS.index(kind) if kind in COORDINATE_KINDS else 3, name)


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)


def _figure(row: dict, key: str) -> str:
    """A cost figure as it is (an integer without decimals), `n/a` where it was not measured."""
    value = row.get(key)
    if not _number(value):
        return "n/a"
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _scratch(row: dict, key: str) -> str:
    measured, static = row.get(key), row.get("scratch_bytes_static")
    text = bytes_text(measured)
    if _number(measured) and _number(static) and int(measured) != int(static):
        text += f" (DISAGREES with the wrapper's {bytes_text(static)})"
    return text


def _warm_call(row: dict, key: str) -> str:
    text = f"{row[key] * 1e3:.4f} ms"
    if not _number(row.get("q25_s")) or not _number(row.get("q75_s")):
        return text
    samples = row.get("samples")
    count = f", {samples} samples" if samples is not None else ""
    return text + f" ({row['q25_s'] * 1e3:.4f}-{row['q75_s'] * 1e3:.4f}{count})"


def _floor(row: dict, key: str) -> str:
    ratio = row.get(key)
    if row.get("floor_defect"):
        return f"FLOOR DEFECT ({ratio:.2f} x, see below)" if _number(ratio) else "FLOOR DEFECT"
    return f"{ratio:.2f} x" if _number(ratio) else "n/a"


def _instructions(row: dict, key: str) -> str:
    if _number(row.get(key)):
        return f"{int(row[key]):,}"
    return "FAILED" if row.get("instructions_error") else "n/a"


CELLS: dict[str, Callable[[dict, str], str]] = {
    "scratch_bytes": _scratch,
    "median_s": _warm_call,
    "time_over_floor": _floor,
    "instructions": _instructions,
}
"""The cost cells worded beyond the figure itself, by row key; any other metric's cell is
its figure (`_figure`)."""


def _notes(rows: list[dict]) -> list[str]:
    """Why a figure is missing or failed, each distinct reason once."""
    notes: dict[str, None] = {}
    for row in rows:
        if row.get("floor_defect"):
            where = f"{row['control']} at N={row['n']:,}"
            notes[f"- time over floor, {where}: FLOOR DEFECT: {row['floor_defect']}"] = None
        elif not _number(row.get("time_over_floor")) and row.get("floor_note"):
            notes[f"- time over floor n/a: {row['floor_note']}"] = None
        if row.get("instructions_error"):
            notes[f"- instructions FAILED for {row['control']} at N={row['n']:,}: "
                  f"{row['instructions_error']}"] = None  # fmt: skip
        elif not _number(row.get("instructions")) and row.get("instructions_note"):
            notes[f"- instructions n/a: {row['instructions_note']}"] = None
    return list(notes)


def attribution_text(found: dict) -> str:
    """An attribution (`benchmarks/attribution.py`'s result) in words: the pass and how it
    was found, where else it points, or why nothing was attributed; and the seconds it took."""
    where = f"{found.get('subsystem') or found.get('backend') or '-'}"
    where += f", #{found['bisect_number']}" if found.get("bisect_number") else ""
    seconds = f", {found['seconds']} s" if found.get("seconds") is not None else ""
    if passes := pass_names(found):
        return f"`{passes}` ({found['method']}, {where}){seconds}"
    if found.get("method"):
        return f"{found['method']}: {where} ({found.get('note')}){seconds}"
    note = str(found.get("note"))
    return (note if note.startswith("not attributed") else f"not attributed: {note}") + seconds
