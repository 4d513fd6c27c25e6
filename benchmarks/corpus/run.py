"""A named corpus on the installed torch: one row per (program, backend), and its families.

Every program goes through the oracle per backend; a wrong one is shrunk (on the same
backend) and filed under the family of its shrunk shape. Verdicts are memoized by program
text and backend, so shrinking never compiles the same candidate twice in one run.

Each Inductor family is attributed once (`benchmarks/attribution.py`, with the whole oracle as
the check: every coordinate of every call), on its representative: the member whose shrunk
program is the family's repro. The family keeps the attribution; each member's row names the
representative. An `aot_eager` family runs no Inductor pass: its attribution says so without
compiling. `$WRITEBACK_ATTRIBUTION=0` turns attribution off, as for the scenarios.
"""

from __future__ import annotations

import os
import sys
import time

import torch

from .. import attribution, pool
from ..probes.probe import ready_to_compile
from .families import catalogue_match, group, shape
from .generate import generate
from .oracle import Outcome, judge
from .program import Program
from .shrink import shrink

BACKENDS = ("inductor", "aot_eager")
CORPORA = {"seed0-50": (0, 50), "seed0-200": (0, 200), "seed1-1000": (1, 1000)}
DEFAULT = "seed0-50"
"""The corpus every history run measures: 50 programs (its setup_cache took 31-33 s a build in
the committed history: asv's durations in results/; `seed0-200` took 1,136 s on 2.13.0 and
1,390 s on 2.15.0 without asv, results/logs/corpus-seed0-200-torch-2.1*.md), plus one
attribution per wrong Inductor family. `seed0-200` is its first 200 and `seed1-1000` another
seed; `$WRITEBACK_CORPORA` adds them without changing the parameter space."""
KNOB = "WRITEBACK_CORPORA"
"""Which named corpora run: unset, the default only; else comma-separated names, `all` or `none`."""


def chosen() -> set[str]:
    text = os.environ.get(KNOB)
    if text is None:
        return {DEFAULT}
    names = {part.strip() for part in text.split(",") if part.strip()} - {"none"}
    if unknown := names - set(CORPORA) - {"all"}:
        raise ValueError(
            f"${KNOB} names unknown corpora {sorted(unknown)} (known: {list(CORPORA)})"
        )
    return set(CORPORA) if "all" in names else names


def enabled(name: str) -> str | None:
    """None when corpus `name` runs here, else why not."""
    if name in chosen():
        return None
    return f"corpus {name} runs only when ${KNOB} names it (or is 'all')"


def programs(name: str) -> list[Program]:
    seed, count = CORPORA[name]
    return [generate(seed, index) for index in range(count)]


class Judge:
    """The oracle with a memo: (program text, backend) -> outcome."""

    def __init__(self):
        self.memo: dict[tuple[str, str, str], Outcome] = {}

    def __call__(self, program: Program, backend: str) -> Outcome:
        key = (program.source(), repr(program.inputs), backend)
        if key not in self.memo:
            self.memo[key] = judge(program, backend)
        return self.memo[key]


CHUNK = 5
"""Programs a worker judges per task: small enough to share the load, large enough that a
worker's memo still spares most repeated shrink candidates."""


def run(
    name: str, backends=BACKENDS, corpus: list[Program] | None = None, workers: int = 1
) -> dict:
    """The record: rows (program, backend, wrong_elements, coordinates, family, shrunk, error,
    representative) and, per backend, the families with their count, shrunk repro, catalogue
    match, representative and attribution. `workers` processes judge chunks of programs side
    by side (`benchmarks/pool.py`), each keeping its memo for this run only, then attribute
    the families side by side."""
    corpus = programs(name) if corpus is None else corpus
    run_id = f"{name}-{os.getpid()}-{time.monotonic_ns()}"
    threads = torch.get_num_threads()
    tasks = [
        (run_id, list(enumerate(corpus))[start : start + CHUNK], tuple(backends), threads)
        for start in range(0, len(corpus), CHUNK)
    ]
    started = time.perf_counter()
    judged, wrong = 0, 0

    def progress(_, chunk):
        nonlocal judged, wrong
        before = judged
        judged += len(chunk) // max(1, len(backends))
        wrong += sum(1 for row, _ in chunk if row["wrong_elements"])
        if judged // 25 > before // 25 or judged == len(corpus):
            _progress(name, judged, len(corpus), wrong, time.perf_counter() - started)

    chunks = pool.run(_judge_chunk, tasks, workers, on_result=progress)
    rows = [row for chunk in chunks for row, _ in chunk]
    shrunk = {(row["program"], row["backend"]): small for chunk in chunks for row, small in chunk}
    found = families(rows)
    attribute_families(found, shrunk, workers)
    return {
        "corpus": name,
        "backends": list(backends),
        "programs": len(corpus),
        "rows": rows,
        "families": found,
        "seconds": round(time.perf_counter() - started, 1),
    }


def _progress(name: str, done: int, total: int, wrong: int, seconds: float) -> None:
    print(
        f"[writeback corpus {name}] {done}/{total} programs, {wrong} wrong rows, {seconds:.0f} s",
        file=sys.stderr,
        flush=True,
    )


_MEMO: dict[str, Judge] = {}
"""This process's oracle for the run it is judging (a worker judges chunks of one run)."""


def _judge_chunk(
    run_id: str, chunk: list[tuple[int, Program]], backends: tuple, threads: int
) -> list[tuple[dict, Program | None]]:
    """The rows of a chunk of programs (a pool task), judged with this run's memo, each with
    its shrunk program (None unless wrong)."""
    ready_to_compile(threads)
    if run_id not in _MEMO:
        _MEMO.clear()
        _MEMO[run_id] = Judge()
    oracle = _MEMO[run_id]
    return [
        _row(index, program, backend, oracle) for index, program in chunk for backend in backends
    ]


def _row(index: int, program: Program, backend: str, oracle: Judge) -> tuple[dict, Program | None]:
    outcome = oracle(program, backend)
    row = {
        "program": index,
        "backend": backend,
        "wrong_elements": outcome.total,
        "coordinates": outcome.wrong,
        "error": outcome.error,
        "family": None,
        "shrunk": None,
        "shrunk_repro": None,
        "representative": None,
    }
    if not outcome.is_wrong:
        return row, None
    small = shrink(program, lambda p: oracle(p, backend).is_wrong)
    row.update(family=shape(small), shrunk=small.source(), shrunk_repro=small.repro(backend))
    return row, small


def families(rows: list[dict]) -> list[dict]:
    """One entry per (backend, family): count, the smallest shrunk repro and its program (the
    representative, which each member's row names), catalogue match; not yet attributed."""
    wrong = [r for r in rows if r["family"] is not None]
    found = []
    for (backend, family), members in group(wrong, lambda r: (r["backend"], r["family"])).items():
        smallest = min(members, key=lambda r: len(r["shrunk_repro"]))
        for member in members:
            member["representative"] = smallest["program"]
        found.append({
            "backend": backend,
            "family": family,
            "programs": len(members),
            "members": [r["program"] for r in members],
            "repro": smallest["shrunk_repro"],
            "catalogue": catalogue_match(family),
            "representative": smallest["program"],
            "attribution": None,
        })  # fmt: skip
    return sorted(found, key=lambda f: (f["backend"], -f["programs"], f["family"]))


def attribute_families(
    found: list[dict], shrunk: dict[tuple[int, str], Program], workers: int = 1
) -> None:
    """Fill each family's `attribution`: its representative's shrunk program attributed
    (Inductor families, one pool task each), or why not."""
    for family in found:
        if not attribution.enabled():
            family["attribution"] = attribution.empty_result(f"not run: {attribution.KNOB}=0")
        elif family["backend"] in attribution.BEFORE_INDUCTOR:
            backend = family["backend"]
            family["attribution"] = attribution.empty_result(
                f"not attributed: {backend} runs {attribution.BEFORE_INDUCTOR[backend]}, "
                "no Inductor pass"
            )
    todo = [f for f in found if f["attribution"] is None]
    tasks = [(shrunk[(f["representative"], f["backend"])], f["backend"], torch.get_num_threads())
             for f in todo]  # fmt: skip
    for family, found_pass in zip(todo, pool.run(_attribute_program, tasks, workers)):
        family["attribution"] = found_pass


def _attribute_program(program: Program, backend: str, threads: int) -> dict:
    """Which Inductor pass makes `program` wrong on `backend` (a pool task)."""
    ready_to_compile(threads)

    def exact() -> bool:
        outcome = judge(program, backend)
        if outcome.error:
            raise RuntimeError(f"the corpus program failed: {outcome.error}")
        return not outcome.is_wrong

    return attribution.attribute_check(exact)


def count_wrong_programs(record: dict, backend: str) -> int:
    return sum(1 for r in record["rows"] if r["backend"] == backend and r["wrong_elements"])


def count_wrong_families(record: dict, backend: str) -> int:
    return sum(1 for f in record["families"] if f["backend"] == backend)


def count_failed_programs(record: dict, backend: str) -> int:
    """Programs whose compile or compiled call failed (known failures included)."""
    return sum(1 for r in record["rows"] if r["backend"] == backend and r["error"])
