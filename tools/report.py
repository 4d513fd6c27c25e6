"""Print the history as Markdown: per build the write-up's two tables, then one correctness
matrix over all builds and machines.

    python -m tools.report [--results results] [--ledger .asv/ledger] [--machine NAME]

Everything it prints comes from the results model (tools/results.py): every machine's asv
results, probe records and install records, for the builds of every builds file (every ledger
branch). A build with results of an older benchmark set says which it leaves out. A cell is
the verdict of its row (`results.verdict_state`): `exact`, `wrong: ...`, `harness failure:
why`, `skipped: why`, `failed: why` or `not run (why)`. A patch build (tools/builds.py) stands
right after its base, is marked against it, and has a section of its own beside its base:
its diff and pull request, every verdict, corpus program and cost figure it changes
(tools/compare.py). The Timeline section follows each release line (tools/timeline.py): per
fault the releases where it is wrong as ranges, and every flip of every row with its upstream
commits, the pass on its wrong side and the `asv find` command that bisects it alone.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from benchmarks import metrics  # standard library only
from benchmarks.known_failures import headline  # standard library only
from tools import compare, results, time_spent, timeline
from tools import render as words


def render(builds: list[results.BuildResult]) -> str:
    if not builds:
        return "No results yet: run `make history` (or `asv run`) first."
    parts = ["# writeback history", ""]
    histories = {machine: results.family_histories([b for b in builds if b.machine == machine])
                 for machine in {b.machine for b in builds}}  # fmt: skip
    for build in builds:
        parts += [f"## {build.label} on {build.machine}", "", _identity_line(build), ""]
        if stale := stale_line(build):
            parts += [stale, ""]
        if not build.installed:
            parts += [f"Not measured: the build did not install ({build.identity.get('error')}).",
                      ""]  # fmt: skip
            continue
        parts += [values_table(build), ""]
        if attributed := attribution_lines(build):
            parts += ["Which pass (attribution, with the time it took):", "", *attributed, ""]
        parts += corpus_lines(build, histories[build.machine])
        for scenario in results.cost_scenarios(build):
            parts += [words.cost_section(scenario, *cost_rows(build, scenario)), ""]
    parts += timeline_section(builds)
    parts += ["## Correctness over all builds", "", matrix(builds), ""]
    parts += patch_section(builds)
    failed = results.failures(builds)
    unknown = (f for f in results.failed_programs(builds) if not f.known)
    found = [*(f for f in failed if not f.known), *unknown]
    if found:
        parts += ["## Failures (nobody expected these)", ""]
        parts += [f"- {failure.describe()}" for failure in found] + [""]
    if known := [f for f in failed if f.known]:
        parts += ["## Known failures (faults of the builds: benchmarks/known_failures.py)", ""]
        parts += [f"- {failure.describe()}" for failure in known] + [""]
    parts += time_section(builds)
    parts += stability_section(builds[0].results_dir, sorted({b.machine for b in builds}))
    return "\n".join(parts).rstrip() + "\n"


def timeline_section(builds: list[results.BuildResult]) -> list[str]:
    """Per release line (tools/timeline.py): each fault with the releases where it is wrong,
    then every flip of every row with its upstream commits, the pass on its wrong side and
    the `asv find` command that bisects it alone."""
    parts = ["## Timeline", "", TIMELINE_INTRO, ""]
    for line in timeline.lines(builds):
        rows = timeline.row_timelines(line)
        parts += [f"### {timeline.describe_line(line)}", ""]
        faults = timeline.faults(rows)
        parts += ["Where each fault is wrong:", ""]
        parts += [f"- {name}: {ranges}" for name, ranges in faults] or ["- nothing is wrong"]
        parts += [""]
        flipping = [row for row in rows if row.flips]
        parts += ["Every flip:", ""] if flipping else []
        for row in flipping:
            parts.append(f"- {row.name}")
            parts += [f"  - {flip.describe()}: {flip.commit_range()}; pass on the wrong side "
                      f"({timeline.short(flip.wrong_side)}): {flip.passes}; bisect it alone: "
                      f"`{flip.find_command()}`" for flip in row.flips]  # fmt: skip
        between = {(f.before.tag, f.after.tag): f for row in flipping for f in row.flips}
        if between:
            parts += ["", "Upstream commits between the two builds of each flip:", ""]
            parts += [f"- {before}..{after}: {flip.upstream()}"
                      for (before, after), flip in between.items()]  # fmt: skip
        parts += [""]
    return parts


TIMELINE_INTRO = (
    "A line is the builds of one builds file measured on one machine, oldest first (patch "
    "builds sit beside their base, below). A flip is a row's verdict changing between exact "
    "and wrong from one build to the next with a verdict (skipped, failed and not run builds "
    "in between neither flip nor break a range). Each flip names the upstream commits between "
    "its two builds, the pass attribution recorded on its wrong side, and the `asv find` "
    "command over the builds around it that hold no other flip of the row (docs/running.md, "
    "bisecting one flip)."
)


def patch_section(builds: list[results.BuildResult]) -> list[str]:
    """Each patch build beside its base on the same machine: its diff and pull request, and
    what it changes (tools/compare.py's verdicts, corpus programs and cost figures)."""
    pairs = [(base, b) for b, base in zip(builds, results.compared_with(builds)) if b.base]
    if not pairs:
        return []
    parts = ["## Patches beside their base", ""]
    for base, patch in pairs:
        number = (patch.patch or {}).get("pr")
        link = f" ([pull request #{number}]({patch.pull_request}))" if number else ""
        parts += [f"### {patch.tag} on {patch.machine}: {patch.base} + "
                  f"{(patch.patch or {}).get('diff', '?')}{link}", ""]  # fmt: skip
        parts += [f"- {line}" for line in compare.describe(patch)] + [""]
        if base is None:
            parts += [f"Not compared: {patch.base} has no results on {patch.machine}.", ""]
            continue
        if failed := next((b for b in (base, patch) if not b.installed), None):
            parts += [f"Not compared: {failed.tag} did not install "
                      f"({failed.identity.get('error')}).", ""]  # fmt: skip
            continue
        for heading, lines in compare.sections(base, patch):
            parts += [f"{heading}, against {base.tag}:", ""]
            parts += [*(f"- {line}" for line in lines or ["none"]), ""]
    return parts


def stale_line(build: results.BuildResult) -> str:
    """What the report says of a build with results of an older benchmark set ('' if none)."""
    if not build.stale:
        return ""
    shown = ", ".join(build.stale[:3]) + (f" and {len(build.stale) - 3} more"
                                          if len(build.stale) > 3 else "")  # fmt: skip
    return (
        f"Not shown: {len(build.stale)} benchmark(s) measured on this build with an older "
        f"version of the benchmark than results/benchmarks.json ({shown}); asv's site leaves "
        "them out too. Measure the build again on this machine to show them."
    )


def time_section(builds: list[results.BuildResult]) -> list[str]:
    """Where each build's time went (tools/time_spent.py), machine by machine, with the peak
    disk of the run that measured it (tools/disk.py); then each release line's builds summed
    (how long a whole line took, in one run or in shards)."""
    timed = [b for b in builds if b.installed and b.durations]
    if not timed:
        return []
    spent = {
        id(b): time_spent.time_spent(b.durations, _install_seconds(b), b.callgrind, _attributing(b))
        for b in timed
    }
    rows = [(f"{b.tag or b.name} on {b.machine}", spent[id(b)], b.run) for b in timed]
    per_line = time_spent.line_totals(
        [(line.name, [spent[id(b)] for b in line.builds]) for line in timeline.lines(timed)]
    )
    caveat = time_spent.__doc__.split("\n\n")[1].replace("\n", " ").strip()
    return ["## Where the time went", "", caveat, "", *time_spent.render(rows), "",
            "Each release line's builds (patch builds are on none), their totals summed:", "",
            *per_line, ""]  # fmt: skip


def _attributing(build: results.BuildResult) -> float:
    """Seconds the attributions of this build's probe rows took."""
    rows = build.probe.values()
    return sum(float((r.get("attribution") or {}).get("seconds") or 0.0) for r in rows)


def _install_seconds(build: results.BuildResult) -> float | None:
    """The install's seconds, when this machine's own record has them (a record borrowed from
    another machine timed that machine's install)."""
    return None if build.identity.get("recorded_by") else build.identity.get("install_seconds")


def stability_section(results_dir: Path | None, machines: list[str]) -> list[str]:
    """What tools/stability.py found on these machines, where it has been run."""
    folder = results_dir / "stability" if results_dir else None
    files = sorted(p for m in machines for p in (folder / m).glob("*.json")) if folder else []
    if not files:
        return []
    from tools import stability

    parts = ["## Stability of the cost figures (tools/stability.py)", ""]
    for path in files:
        parts += [f"On {path.parent.name}:", ""]
        parts += [stability.render(json.loads(path.read_text())), ""]
    return parts


def values_table(build: results.BuildResult) -> str:
    wrong = build.values.get(f"{results.CORRECTNESS}.track_wrong_elements", {})
    sizes = sorted({combo[2] for combo in wrong})
    keys = [(control, backend) for control, backend, _ in wrong]
    return words.values_table(keys, sizes, lambda c, b, n: results.verdict(build, c, b, n))


def cost_rows(
    build: results.BuildResult, scenario: str = results.SCENARIO
) -> tuple[list[dict], list[tuple]]:
    """The Cost figures asv recorded for `scenario` on this build, one row per timed (control,
    n) with the probe record's notes on what is missing; and the (control, n) not costed
    because they are wrong under Inductor."""
    cost = f"{scenario}.Cost"
    rows, not_costed = [], []
    for (control, n), seconds in build.values.get(f"{cost}.time_warm_call", {}).items():
        probe = build.probe.get((scenario, control, "inductor", n), {})
        if not results.is_number(seconds):
            if (probe.get("wrong_elements") or {}).get("total"):
                not_costed.append((control, n))
            continue
        figure = {
            metric.row_key: build.values.get(f"{cost}.{metric.benchmark}", {}).get((control, n))
            for metric in metrics.of(metrics.COST)
        }
        stats = build.stats.get(f"{cost}.time_warm_call", {}).get((control, n)) or {}
        notes = ("scratch_bytes_static", "floor_defect", "floor_note", "instructions_note",
                 "instructions_error")  # fmt: skip
        rows.append(
            {
                "control": control,
                "n": n,
                **figure,
                **{key: probe.get(key) for key in notes},
                "q25_s": stats.get("q_25"),
                "q75_s": stats.get("q_75"),
                "samples": stats.get("repeat", "?") if "q_25" in stats else None,
            }
        )
    return rows, not_costed


def matrix(builds: list[results.BuildResult]) -> str:
    """scenario x control x backend x size -> verdict per build, each row linked to its
    upstream issue where it has one; `changed` marks a verdict that differs from the build it
    is compared with (`results.compared_with`: the timeline build before it on the same
    machine, a patch's base)."""
    keys = results.matrix_keys(builds)
    machines = len({b.machine for b in builds}) > 1
    header = "| scenario | control or pattern | backend | size | " + " | ".join(
        column_name(b, machines) for b in builds
    )
    lines = [header + " |", "|---|---|---|---|" + "---|" * len(builds)]
    against = [builds.index(b) if b else None for b in results.compared_with(builds)]
    for scenario, control, backend, n in keys:
        cells, issue, fix = [], "", ""
        verdicts = [results.verdict(b, control, backend, n, scenario) for b in builds]
        for build, cell, before in zip(builds, verdicts, against):
            row = build.probe.get((scenario, control, backend, n), {})
            issue, fix = issue or row.get("issue", ""), fix or row.get("fix", "")
            changed = before is not None and verdicts[before] != cell
            cells.append(f"**{cell}** (changed)" if changed else cell)
        name = f"[{control}]({issue})" if issue else control
        name += f" ([fix]({fix}))" if fix else ""
        lines.append(
            f"| {scenario} | {name} | {backend} | {words.size_cell(n)} | {' | '.join(cells)} |"
        )
    return "\n".join(lines)


def column_name(build: results.BuildResult, machines: bool) -> str:
    """A build's matrix column: its tag, its base if it is a patch, its machine if `machines`."""
    patched = f" (patch of {build.base})" if build.base else ""
    return build.tag + patched + (f" ({build.machine})" if machines else "")


def corpus_lines(build: results.BuildResult, histories: dict) -> list[str]:
    """The generated corpora this build ran: its wrong programs, each family of them
    (`family_lines`; `histories`: `results.family_histories` of this machine's builds in the
    report), and every program that failed, with its first error line."""
    lines = []
    failed = results.failed_programs([build])
    for record in results.corpus_records(build):
        lines += [_corpus_heading(record), ""]
        if results.current_corpus_record(record):
            for family in record["families"]:
                lines += family_lines(family, histories[record["corpus"]][family["family"]])
        else:  # families of an older corpus version: other groupings, not followed here
            lines += ["Families not shown: recorded by an older version of the corpus (no "
                      "`first_wrong`, `kinds` or `skeleton`); measure the build again to see "
                      "them.", ""]  # fmt: skip
        mine = [f for f in failed if f.corpus == record["corpus"]]
        if mine:
            lines += [f"Failed to compile or run ({len(mine)} program(s) of "
                      f"`{record['corpus']}`):", ""]  # fmt: skip
            lines += [f"- {f.backend} program {f.program}: `{headline(f.error)}` ("
                      + (f"known: {f.known})" if f.known else "not a known state: fails "
                         "`make history`)") for f in mine] + [""]  # fmt: skip
    return lines


def _corpus_heading(record: dict) -> str:
    """`Generated corpus `seed0-50` (50 programs; inductor: 3 wrong, aot_eager: 1 wrong), 2
    families:`."""
    wrong = {b: sum(1 for r in record["rows"] if r["backend"] == b and r.get("wrong_elements"))
             for b in record.get("backends", [])}  # fmt: skip
    counts = ", ".join(f"{b}: {n} wrong" for b, n in wrong.items())
    families = len(record.get("families", []))
    named = f"{families} {'family' if families == 1 else 'families'}"
    return (f"Generated corpus `{record['corpus']}` ({record['programs']} programs; {counts}), "
            f"{named}{':' if families else '.'}")  # fmt: skip


SHOWN_MEMBERS = 10
"""Member programs a family lists by number; the rest are counted."""


def family_lines(family: dict, history: results.FamilyHistory) -> list[str]:
    """One family of a build's corpus record: the fault in words, its programs here, the
    builds where it is wrong (`history`), its pass, the catalogue entries with the same fault,
    the shrunk program's skeleton and the repro."""
    members = family["members"]
    shown = ", ".join(map(str, members[:SHOWN_MEMBERS]))
    shown += f" and {len(members) - SHOWN_MEMBERS} more" if len(members) > SHOWN_MEMBERS else ""
    repro = [f"    {line}".rstrip() for line in family["repro"].rstrip().splitlines()]
    return [
        f"- **{family['family']}**: {family['programs']} program(s) ({shown})",
        f"  - {wrong_builds(history)}",
        *_family_attribution(family),
        f"  - catalogue: {family['catalogue']}",
        f"  - shrunk (program {family['representative']}): `{family['skeleton']}`",
        "  - repro (paste into `python` with this build installed):",
        "",
        "    ```python",
        *repro,
        "    ```",
        "",
    ]


def wrong_builds(history: results.FamilyHistory) -> str:
    """Where a family is wrong among the builds of its history (the report's builds of one
    machine): `wrong on 2 of the 3 builds of vm that judged it: first torch-2.13.0, last
    torch-2.15.0`, or `...: torch-2.15.0` where it is wrong on one."""
    judged = sum(1 for count in history.counts if count is not None)
    wrong = sum(1 for count in history.counts if count)
    first, last = (build.tag or build.name for build in (history.first_build, history.last_build))
    where = f"first {first}, last {last}" if wrong > 1 else first
    return (f"wrong on {wrong} of the {judged} build(s) of {history.first_build.machine} that "
            f"judged it: {where}")  # fmt: skip


def _family_attribution(family: dict) -> list[str]:
    """The family's attribution, made on its representative (a record without one: none)."""
    found = family.get("attribution")
    if not found:
        return []
    return [f"  - which pass (attributed on the repro, of program {family['representative']}): "
            f"{words.attribution_text(found)}"]  # fmt: skip


def attribution_lines(build: results.BuildResult) -> list[str]:
    """What attribution found for each wrong Inductor row of this build (a configuration
    variant's among them), and its time."""
    lines = []
    for (scenario, control, backend, n), row in sorted(build.probe.items(), key=str):
        found = row.get("attribution")
        if not found or str(found.get("note", "")).startswith("attributed at the first wrong"):
            continue
        how = (
            f"ATTRIBUTION FAILED: {row['attribution_error']}"
            if row.get("attribution_error")
            else words.attribution_text(found)
        )
        at = backend if n is None else words.size_cell(n)  # a variant's row: its name
        lines.append(f"- {scenario}.{control} ({at}): {how}")
    return lines


def _identity_line(build: results.BuildResult) -> str:
    ident = build.identity
    if not ident:
        return (f"ledger commit {build.commit[:8]}; no install record in "
                f"results/builds/{build.machine}/")  # fmt: skip
    by = f" (install recorded by {ident['recorded_by']})" if ident.get("recorded_by") else ""
    pip = " ".join(ident.get("pip_args", []))
    patched = f", then {build.patch['diff']} applied" if build.patch else ""
    return (
        f"ledger commit {build.commit[:8]}{by}; installed `{pip}`{patched} -> "
        f"torch {ident.get('torch_version', '?')}, upstream commit "
        f"{ident.get('torch_git_version', '?')}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = results.parser("python -m tools.report", __doc__.split("\n\n")[0])
    args = parser.parse_args(argv)
    print(render(results.load(args.results, args.ledger, args.machine)), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
