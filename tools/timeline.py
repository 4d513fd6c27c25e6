"""The timeline: every row's verdict on each build of a release line, in order, with what a
reader asks of it first: where it flips, between which upstream commits, through which pass,
and the releases where it is wrong.

    python -m tools.timeline [--results results] [--ledger .asv/ledger] [--machine NAME]
                             [--builds FILE ...]

prints, for each line, each fault (a row wrong on some build; its sizes, or a control's
configuration variants, together where they are wrong on the same releases) with the
releases where it is wrong as ranges, `2.1.0-2.3.1, 2.9.0-2.15.0` (`make timeline`). It
first makes the ledger's branch of each builds file (default: builds.txt and
builds-long.txt), as `make history` does, so it reads the committed results on a fresh
checkout.

A line is the builds of one builds file (its ledger branch) that one machine measured, oldest
first. Patch builds are not on it: each sits beside its base (the report's and the verdict
page's patch sections). A row is (scenario, control or entry, backend or variant, size). A
flip is a change between `exact` and `wrong` from one build of the line to the next build
with either verdict: builds between them that are skipped, failed or not run have no verdict
and neither make a flip nor break a range. A flip is `broken in`, `fixed in`, `broken again
in` or `fixed again in`, and carries the upstream commits between its two builds (each
build's `torch.version.git_version` from its install record, tools/upstream_range.py's
range, read offline), the pass attribution recorded on its wrong side, and the `asv find`
command that bisects it alone: its window runs from the first build after the flip before it
to the last build before the flip after it, so it holds this one flip.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from tools import builds as builds_file
from tools import ledger as ledger_repo
from tools import render as words
from tools import results, upstream_range

ROOT = Path(__file__).resolve().parents[1]
BUILDS_FILES = ("builds.txt", "builds-long.txt")
"""The builds files whose lines `python -m tools.timeline` reads by default."""
ASV = ".venv/bin/asv"
JUDGED = ("exact", "wrong")
"""The states a flip is made of; the others (skipped, failed, not run) give no verdict."""


def short(build: results.BuildResult) -> str:
    """A build as the timeline names it: a release's version (`2.15.0`), else its name."""
    return build.name.removeprefix("torch-")


@dataclass(frozen=True)
class Line:
    """The timeline builds of one builds file that one machine measured, oldest first."""

    machine: str
    branch: str
    builds: tuple[results.BuildResult, ...]

    @property
    def name(self) -> str:
        """`builds.txt on vm`, `builds-long on vm` (another file is named by its branch)."""
        source = "builds.txt" if self.branch == ledger_repo.BRANCH else self.branch
        return f"{source} on {self.machine}"

    @property
    def newest(self) -> results.BuildResult:
        return self.builds[-1]


def lines(builds: list[results.BuildResult]) -> list[Line]:
    """The release lines of these builds (given oldest first, as `results.load` orders them):
    machine by machine, builds.txt's first; patch builds are on none."""
    grouped: dict[tuple[str, str], list] = {}
    for build in builds:
        if not build.base:
            grouped.setdefault((build.machine, build.branch), []).append(build)
    order = sorted(grouped, key=lambda k: (k[0], k[1] != ledger_repo.BRANCH, k[1]))
    return [Line(machine, branch, tuple(grouped[machine, branch])) for machine, branch in order]


@dataclass(frozen=True)
class Flip:
    """A row's verdict changing between exact and wrong from `before` to `after`, the next
    build of its line with a verdict."""

    key: tuple
    kind: str
    """`broken in`, `fixed in`; `broken again in` where the row was wrong on an earlier build
    of the line (the fault comes back), `fixed again in` where an earlier flip fixed it."""
    before: results.BuildResult
    after: results.BuildResult
    window: tuple[results.BuildResult | None, results.BuildResult]
    """The builds `asv find` bisects this flip alone over: after the first (None: from the
    first build of the builds file) up to the second, both of the line."""

    @property
    def fixed(self) -> bool:
        return self.kind.startswith("fixed")

    @property
    def wrong_side(self) -> results.BuildResult:
        return self.before if self.fixed else self.after

    @property
    def passes(self) -> str:
        """The pass attribution recorded on the wrong side."""
        return pass_on(self.wrong_side, self.key)

    @property
    def commits(self) -> tuple[str, str] | None:
        """The upstream commits of `before` and `after` (None: a build without one recorded)."""
        records = (self.before.identity, self.after.identity)
        if not all(record.get("torch_git_version") for record in records):
            return None
        older, newer = (upstream_range.upstream(record, None)[0] for record in records)
        return older, newer

    def commit_range(self) -> str:
        """`upstream 5c488690..d0f2af8b`, or why there is no range."""
        commits = self.commits
        if commits is None:
            missing = next(b for b in (self.before, self.after)
                           if not b.identity.get("torch_git_version"))  # fmt: skip
            return f"no upstream commit recorded for {missing.tag}"
        older, newer = commits
        if older == newer:
            return f"the same upstream commit {older[:8]}: nothing upstream between"
        return f"upstream {older[:8]}..{newer[:8]}"

    def upstream(self) -> str:
        """Where to read the upstream commits between the two builds: the compare page and
        the `git log` command (what `python -m tools.upstream_range` prints, offline)."""
        commits = self.commits
        if commits is None or commits[0] == commits[1]:
            return self.commit_range()
        older, newer = commits
        text = (f"{upstream_range.compare_url(older, newer)} "
                f"(`{upstream_range.git_log(older, newer)}` in a PyTorch checkout)")  # fmt: skip
        if any(upstream_range.is_nightly(b.identity) for b in (self.before, self.after)):
            text += (f"; a nightly's commit may be its `nightly` branch's: `python -m "
                     f"tools.upstream_range {self.before.tag} {self.after.tag} --pytorch-repo "
                     "PATH` ranges the main commits")  # fmt: skip
        return text

    def find_command(self) -> str:
        """The `asv find` command that bisects this flip alone (over its window)."""
        start, end = self.window
        spec = f"{start.tag}..{end.tag}" if start else end.tag
        invert = " --invert" if self.fixed else ""
        return f'{ASV} find{invert} {spec} "{benchmark_pattern(self.key)}"'

    def describe(self) -> str:
        """`fixed in 2.15.0 (after 2.14.1)`."""
        return f"{self.kind} {short(self.after)} (after {short(self.before)})"


def benchmark_pattern(key: tuple) -> str:
    """asv's name of a row's wrong-elements benchmark, its parameters as asv writes them, with
    the parentheses escaped: the regular expression `asv find` takes."""
    scenario, control, backend, n = key
    params = ", ".join(repr(p) for p in results.combo(control, backend, n))
    return f"{scenario}.{results.WRONG}\\({params}\\)"


def pass_on(build: results.BuildResult, key: tuple) -> str:
    """The pass(es) attribution names for a row on a build (`named_passes`), else why it
    names none."""
    found = attribution_of(build, key)
    if not found:
        return "no attribution recorded"
    return words.pass_names(found) or words.attribution_text(found)


def named_passes(build: results.BuildResult, key: tuple) -> str | None:
    """The passes attribution names for a row on a build (`attribution_of`); None: none."""
    return words.pass_names(attribution_of(build, key))


POINTER = "attributed at the first wrong"
"""How a later wrong size's (or configuration input's) attribution points to the row attributed
(benchmarks/probes/probe.py, variants.py): `attributed at the first wrong size, 3`."""


def attribution_of(build: results.BuildResult, key: tuple) -> dict | None:
    """A row's attribution on a build, or, where it points to the control's first wrong size
    (or its configuration's first wrong input), that row's; None: none recorded."""
    found = build.probe.get(key, {}).get("attribution")
    note = str((found or {}).get("note", ""))
    if not note.startswith(POINTER):
        return found
    scenario, control, backend, n = key
    where = note.rsplit(", ", 1)[-1]
    for (s, c, b, m), row in build.probe.items():
        pointed = (b == backend and str(m) == where) if n is not None else b == where
        if (s, c) == (scenario, control) and pointed:
            return row.get("attribution") or found
    return found


@dataclass(frozen=True)
class Segment:
    """Consecutive builds of a line with one verdict, `exact` or `wrong` (indices into the
    line's builds; builds between them without a verdict are inside it)."""

    state: str
    first: int
    last: int


@dataclass(frozen=True)
class RowTimeline:
    """One row on one line: its verdict on each build, its flips and where it is wrong."""

    line: Line
    key: tuple
    verdicts: tuple[tuple[str, str], ...]
    """(state, words) on each build of the line (`results.verdict_state`)."""

    @property
    def name(self) -> str:
        """`snapshot_swap.explicit_copies inductor 3`."""
        scenario, control, backend, n = self.key
        size = "" if n is None else f" {words.size_cell(n)}"
        return f"{scenario}.{control} {backend}{size}"

    @property
    def states(self) -> tuple[str, ...]:
        return tuple(state for state, _ in self.verdicts)

    @cached_property
    def segments(self) -> tuple[Segment, ...]:
        found: list[Segment] = []
        for index, state in enumerate(self.states):
            if state not in JUDGED:
                continue
            if found and found[-1].state == state:
                found[-1] = Segment(state, found[-1].first, index)
            else:
                found.append(Segment(state, index, index))
        return tuple(found)

    @cached_property
    def flips(self) -> tuple[Flip, ...]:
        builds, segments, found = self.line.builds, self.segments, []
        for k, (old, new) in enumerate(zip(segments, segments[1:])):
            direction = "fixed" if new.state == "exact" else "broken"
            if direction == "broken":  # the fault comes back
                again = any(earlier.state == "wrong" for earlier in segments[:k])
            else:  # a fix after an earlier fix
                again = any(flip.fixed for flip in found)
            start = builds[segments[k - 1].last] if k else None
            found.append(Flip(self.key, f"{direction}{' again' if again else ''} in",
                              builds[old.last], builds[new.first],
                              (start, builds[new.last])))  # fmt: skip
        return tuple(found)

    def wrong_runs(self) -> list[tuple[results.BuildResult, results.BuildResult]]:
        """(first, last) build of each run of the line where the row is wrong."""
        builds = self.line.builds
        return [(builds[s.first], builds[s.last]) for s in self.segments if s.state == "wrong"]

    def ranges(self) -> str:
        """The releases where the row is wrong: `2.1.0-2.3.1, 2.9.0-2.15.0` ('' nowhere)."""
        return ranges_text(self.wrong_runs())

    def wrong_now(self) -> bool:
        """Whether the row is wrong on the line's newest build."""
        return self.states[-1] == "wrong"

    def since(self) -> results.BuildResult | None:
        """The build the row has been wrong since, up to the line's newest (None: it is not
        wrong there)."""
        if not self.wrong_now():
            return None
        return self.line.builds[self.segments[-1].first]

    def since_text(self) -> str:
        """Since when the row is wrong on the newest build: `2.9.0, broken again after 2.8.0
        (also wrong 2.1.0-2.3.1)`, `2.13.0, the first build measured`; '' when it is not."""
        since = self.since()
        if since is None:
            return ""
        if not self.flips:  # wrong on every build with a verdict
            return f"{short(since)}, {FIRST if since is self.line.builds[0] else FIRST_VERDICT}"
        flip = self.flips[-1]
        earlier = ranges_text(self.wrong_runs()[:-1])
        text = f"{short(since)}, {flip.kind.removesuffix(' in')} after {short(flip.before)}"
        return text + (f" (also wrong {earlier})" if earlier else "")


FIRST = "the first build measured"
FIRST_VERDICT = "the first build with a verdict (the ones before it: skipped, failed or not run)"


def ranges_text(runs: list[tuple[results.BuildResult, results.BuildResult]]) -> str:
    """`2.1.0-2.3.1, 2.9.0`: each (first, last) run as a range, a run of one build as it."""
    return ", ".join(
        short(first) if first is last else f"{short(first)}-{short(last)}" for first, last in runs
    )


def row_timelines(line: Line) -> list[RowTimeline]:
    """Every row any build of the line measured, in the matrix's order."""
    return [
        RowTimeline(
            line, key, tuple(results.verdict_state(b, *key[1:], key[0]) for b in line.builds)
        )
        for key in results.matrix_keys(list(line.builds))
    ]


def faults(rows: list[RowTimeline]) -> list[tuple[str, str]]:
    """(the fault, the releases where it is wrong) of every row wrong somewhere on its line,
    the sizes of one (scenario, control, backend) together where their ranges are the same:
    (`snapshot_swap.foreach_clones inductor 3, 1,048,576`, `2.1.0-2.3.1, 2.9.0-2.15.0`)."""
    wrong = [row for row in rows if row.wrong_runs()]
    return [(name, ranges) for name, (ranges,), _ in by_sizes(wrong, lambda r: (r.ranges(),))]


def by_sizes(rows: list[RowTimeline], detail) -> list[tuple[str, tuple, list[RowTimeline]]]:
    """The rows of one (scenario, control, backend) with the same `detail(row)` together, and
    the configuration variants of one control (rows without a size): (`snapshot_swap.
    foreach_clones inductor 3, 1,048,576` or `snapshot_swap_configs.foreach_clones
    inductor-fp32, aoti-fp32`, the detail, those rows), in the rows' order, sizes ascending."""
    grouped: dict[tuple, list[RowTimeline]] = {}
    for row in rows:
        scenario, control, backend, n = row.key
        name = f"{scenario}.{control}" + ("" if n is None else f" {backend}")
        grouped.setdefault((name, detail(row)), []).append(row)
    return [(f"{name} {_where(found)}", found_detail, found)
            for (name, found_detail), found in grouped.items()]  # fmt: skip


def _where(rows: list[RowTimeline]) -> str:
    """`3, 1,048,576`: the rows' sizes, ascending; `inductor-fp32, aoti-fp32`: the variants
    of rows without a size."""
    if rows[0].key[3] is None:
        return ", ".join(row.key[2] for row in rows)
    ordered = sorted(rows, key=lambda row: row.key[3] if isinstance(row.key[3], int) else 0)
    return ", ".join(words.size_cell(row.key[3]) for row in ordered)


def describe_line(line: Line) -> str:
    """`builds.txt on vm: 3 builds, torch-2.13.0 to torch-2.15.0`."""
    count = f"{len(line.builds)} build" + ("" if len(line.builds) == 1 else "s")
    return f"{line.name}: {count}, {line.builds[0].tag} to {line.newest.tag}"


def render(builds: list[results.BuildResult]) -> str:
    """What `make timeline` prints: per line, each fault and the releases where it is wrong."""
    found = lines(builds)
    if not found:
        return "No results yet: run `make history` first.\n"
    out = []
    for line in found:
        out += [describe_line(line)]
        wrong = faults(row_timelines(line))
        out += [f"  {name}: {ranges}" for name, ranges in wrong] or ["  nothing wrong"]
        out += [""]
    out += ["Every flip, with its upstream commits, pass and `asv find` command: the report's "
            "Timeline (results/report.md)."]  # fmt: skip
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = results.parser("python -m tools.timeline", __doc__.split("\n\n")[0])
    parser.add_argument("--builds", action="append", type=Path, metavar="FILE",
                        help="a builds file whose line to show (default: builds.txt and "
                             "builds-long.txt; repeat for more)")  # fmt: skip
    args = parser.parse_args(argv)
    files = args.builds or [ROOT / name for name in BUILDS_FILES if (ROOT / name).is_file()]
    try:
        ledger_repo.build_branches(files, args.ledger)
    except builds_file.BuildsFileError as exc:
        print(f"writeback: {exc}", file=sys.stderr)
        return 2
    print(render(results.load(args.results, args.ledger, args.machine)), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
