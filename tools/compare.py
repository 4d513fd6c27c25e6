"""What one build changes against another, from the committed results (`make compare`).

    python -m tools.compare BASE HEAD [--machine NAME] [--results results] [--ledger LEDGER]

BASE and HEAD are builds of the ledger (their tags: `torch-2.15.0`, a patch build's name,
`builds-long/torch-2.1.0`) measured on the machine (default: this one). It prints plain text,
to be kept as it is (results/logs/):

- every verdict that differs (tools/results.py `verdict_state`), both ways: `fixed` (wrong ->
  exact), `BROKEN` (exact -> wrong), `changed` (anything else: other coordinates, another
  pass, a skip or a failure on one side);
- every generated corpus program whose verdict differs (exact, wrong, failed), and the corpus
  counts that moved;
- every cost figure that moved (benchmarks/metrics.py's Cost metrics that `make expected`
  gates: scratch, loops and entrypoint calls exactly, time over floor and instructions beyond
  the margin it gives them), in its unit with the ratio HEAD / BASE, and the figures one side
  has alone (a control wrong on BASE is not costed there: what a repair costs appears here);
- the warm-call times asv's own comparison finds changed (`asv compare` of the two ledger
  commits on the machine, its statistics over the samples recorded with each result).

It exits 1 when HEAD breaks a verdict or a corpus program BASE had exact (a finding, whatever
else it fixes), 2 when BASE or HEAD has no results on the machine; else 0. The report
(tools/report.py) shows the same comparison, but for asv's timing, for each patch build
against its base.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from dataclasses import dataclass
from pathlib import Path

from benchmarks import metrics  # standard library only
from benchmarks.known_failures import headline  # standard library only
from benchmarks.machine import machine_name  # standard library only
from tools import expected, results
from tools import ledger as ledger_repo
from tools import render as words

ROOT = Path(__file__).resolve().parents[1]
TIMED = "Cost.time_warm_call"
"""The benchmark asv compare judges (every scenario's): the one timed over samples."""
BREAKS = ("wrong", "failed", "harness failure")
"""What an exact verdict must not become."""
ASV_FACTOR = 1.1
"""asv compare's default: a change smaller than 10% is never reported."""


@dataclass(frozen=True)
class Flip:
    """One verdict that differs between two builds: where, and (state, words) on each."""

    where: str
    before: tuple[str, str]
    after: tuple[str, str]

    @property
    def kind(self) -> str:
        states = (self.before[0], self.after[0])
        return {("wrong", "exact"): "fixed", ("exact", "wrong"): "BROKEN"}.get(states, "changed")

    def describe(self) -> str:
        return f"{self.kind}: {self.where}: {self.before[1]} -> {self.after[1]}"


@dataclass(frozen=True)
class Move:
    """One cost figure that moved (or is on one side only), in its metric's unit."""

    where: str
    metric: metrics.Metric
    before: float | None
    after: float | None
    margin: float = 0

    def describe(self) -> str:
        figure = f"{self.where} {self.metric.label}"
        if self.before is None:
            return f"{figure}: costed only in HEAD: {self._value(self.after)}"
        if self.after is None:
            return f"{figure}: costed only in BASE: {self._value(self.before)}"
        ratio = f"x{self.after / self.before:.3g}" if self.before else "from 0"
        margin = f", margin {self._value(self.margin)}" if self.margin else ""
        values = f"{self._value(self.before)} -> {self._value(self.after)}"
        return f"{figure}: {values} ({ratio}{margin})"

    def _value(self, value: float) -> str:
        if self.metric.unit == "bytes":
            return words.bytes_text(value)
        shown = f"{value:,}" if float(value).is_integer() else f"{value:g}"
        return f"{shown.removesuffix('.0')} {self.metric.unit}"


def verdict_flips(base: results.BuildResult, head: results.BuildResult) -> list[Flip]:
    """Every matrix row (scenario, control, backend, size) whose verdict differs."""
    flips = []
    for scenario, control, backend, n in results.matrix_keys([base, head]):
        before, after = (results.verdict_state(b, control, backend, n, scenario)
                         for b in (base, head))  # fmt: skip
        if before[1] != after[1]:
            where = f"{scenario}/{control}/{backend}/{words.size_cell(n)}"
            flips.append(Flip(where, before, after))
    return flips


def program_flips(base: results.BuildResult, head: results.BuildResult) -> list[Flip]:
    """Every generated corpus program (by corpus, backend and number) whose verdict differs."""
    old, new = _programs(base), _programs(head)
    return [
        Flip(f"corpus {corpus} program {number} ({backend})", old[key], verdict)
        for key, verdict in new.items()
        if key in old and old[key] != verdict
        for corpus, backend, number in [key]
    ]


def _programs(build: results.BuildResult) -> dict[tuple, tuple[str, str]]:
    found = {}
    for record in results.corpus_records(build):
        for row in record["rows"]:
            if row.get("error"):
                verdict = ("failed", f"failed: {headline(row['error'])}")
            elif row.get("wrong_elements"):
                verdict = ("wrong", f"wrong: {row['wrong_elements']}")
            else:
                verdict = ("exact", "exact")
            found[(record["corpus"], row["backend"], row["program"])] = verdict
    return found


def cost_moves(base: results.BuildResult, head: results.BuildResult) -> list[Move]:
    """Every gated Cost figure that moved beyond its margin (the larger of the two builds'),
    and every one measured on one side only."""
    old = _gated(base, metrics.COST)
    moves = []
    for key, row in _gated(head, metrics.COST).items():
        before = old.pop(key, None)
        metric = metrics.named(row.metric)
        where = f"{row.scenario}/{row.control}/{_size(row.size)}"
        if before is None:
            moves.append(Move(where, metric, None, row.expected))
        elif abs(row.expected - before.expected) > (margin := max(before.margin, row.margin)):
            moves.append(Move(where, metric, before.expected, row.expected, margin))
    moves += [Move(f"{r.scenario}/{r.control}/{_size(r.size)}", metrics.named(r.metric),
                   r.expected, None) for r in old.values()]  # fmt: skip
    return moves


def corpus_moves(base: results.BuildResult, head: results.BuildResult) -> list[str]:
    """The corpus counts (wrong programs, families, failed programs) that differ."""
    old = _gated(base, metrics.CORPUS)
    lines = []
    for key, row in _gated(head, metrics.CORPUS).items():
        before = old.get(key)
        if before is not None and before.expected != row.expected:
            lines.append(f"corpus {row.control} ({row.backend}) {row.metric.replace('_', ' ')}: "
                         f"{before.expected:g} -> {row.expected:g}")  # fmt: skip
    return lines


def _gated(build: results.BuildResult, kind: str) -> dict[tuple, expected.Row]:
    """The build's figures of metrics of `kind` as `make expected` rounds and margins them,
    keyed without the build."""
    kinds = {metric.name for metric in metrics.of(kind)}
    return {row.key[1:]: row for row in expected.measured_rows([build]) if row.metric in kinds}


def _size(size: str) -> str:
    return words.size_cell(int(size)) if size.isdigit() else size


def timing_lines(base: results.BuildResult, head: results.BuildResult) -> list[str]:
    """The warm-call times asv compare finds changed between the two builds (its table, only
    the changed rows), or a line saying none did."""
    from asv.commands.compare import Compare
    from asv.config import Config

    conf = Config.load(str(ROOT / "asv.conf.json"))
    conf.results_dir = str(base.results_dir)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        Compare.print_table(
            conf, base.commit, head.commit, factor=ASV_FACTOR, split=False,
            resultset_1=_timed(base), resultset_2=_timed(head), machine=base.machine,
            only_changed=True, sort="ratio", commit_names={base.commit: base.tag,
                                                           head.commit: head.tag},
        )  # fmt: skip
    table = [line for line in printed.getvalue().splitlines() if line.strip()]
    return table or [f"no warm-call time changed (asv compare, factor {ASV_FACTOR})"]


def _timed(build: results.BuildResult):
    """asv compare's result set of one build: its `time_warm_call` results, as asv reads them."""
    from asv.results import iter_results_for_machine_and_hash

    for result in iter_results_for_machine_and_hash(
        str(build.results_dir), build.machine, build.commit
    ):
        for key in result.get_all_result_keys():
            if key.endswith(f".{TIMED}") and key not in build.stale:
                params = result.get_result_params(key)
                yield (key, params, result.get_result_value(key, params),
                       result.get_result_stats(key, params),
                       result.get_result_samples(key, params),
                       result.benchmark_version.get(key), build.machine,
                       result.env_name)  # fmt: skip


def broken(base: results.BuildResult, head: results.BuildResult) -> list[Flip]:
    """What HEAD breaks that BASE had exact: verdicts and corpus programs."""
    found = [*verdict_flips(base, head), *program_flips(base, head)]
    return [flip for flip in found if flip.before[0] == "exact" and flip.after[0] in BREAKS]


def describe(head: results.BuildResult) -> list[str]:
    """What a patch build is: its diff and sha256, pull request, patched and skipped files."""
    patch = head.patch or {}
    if not patch:
        return []
    pr = f"; pull request {head.pull_request}" if head.pull_request else ""
    lines = [f"{head.tag}: {head.base} with {patch['diff']} (sha256 {patch['diff_sha256']}) "
             f"applied{pr}"]  # fmt: skip
    if patch.get("patched"):
        lines.append(f"patched: {', '.join(patch['patched'])}")
    if patch.get("skipped"):
        lines.append(f"skipped (not in the wheel): {', '.join(patch['skipped'])}")
    return lines


def sections(base: results.BuildResult, head: results.BuildResult) -> list[tuple[str, list]]:
    """The comparison's sections, each (heading, lines): verdicts, corpus, costs."""
    verdicts = [f.describe() for f in verdict_flips(base, head)]
    programs = [f.describe() for f in program_flips(base, head)] + corpus_moves(base, head)
    costs = [m.describe() for m in cost_moves(base, head)]
    return [
        (f"Verdicts that differ ({len(verdicts)})", verdicts),
        (f"Generated corpus programs that differ ({len(programs)})", programs),
        (f"Cost figures that moved ({len(costs)})", costs),
    ]


def render(base: results.BuildResult, head: results.BuildResult, timing: list[str]) -> str:
    lines = [f"{base.tag} -> {head.tag} on {base.machine}"]
    lines += [f"  {line}" for line in describe(head)]
    asv = "Warm-call time (asv compare; - faster, + slower, ! failing now)"
    for heading, found in [*sections(base, head), (asv, timing)]:
        lines += ["", f"{heading}:", *(f"  {line}" for line in found or ["none"])]
    if found := broken(base, head):
        lines += ["", f"{head.tag} breaks {len(found)} verdict(s) {base.tag} had exact."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.compare", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("base")
    parser.add_argument("head")
    parser.add_argument("--machine", default=None, help="default: this machine")
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    parser.add_argument("--ledger", type=Path, default=ledger_repo.DEFAULT_LEDGER)
    args = parser.parse_args(argv)
    machine = args.machine or machine_name()
    try:
        loaded = {b.tag: b for b in results.load(args.results, args.ledger, machine)}
    except FileNotFoundError as exc:
        print(f"writeback: {exc}", file=sys.stderr)
        return 2
    if missing := [tag for tag in (args.base, args.head) if tag not in loaded]:
        print(f"writeback: no results of {' and '.join(missing)} on {machine} in {args.results} "
              f"(it has: {', '.join(loaded) or 'none'}); measure with `make history "
              f"ONLY=...` first, or name another machine (--machine)", file=sys.stderr)  # fmt: skip
        return 2
    base, head = loaded[args.base], loaded[args.head]
    print(render(base, head, timing_lines(base, head)), end="")
    return 1 if broken(base, head) else 0


if __name__ == "__main__":
    sys.exit(main())
