"""Screening: many programs judged in one compile, every suspect judged again alone.

A corpus program's seconds are mostly one compile's fixed cost (dynamo, AOTAutograd and
Inductor set up a graph, gcc parses the same headers for every file: see
results/logs/corpus-where-the-seconds-go-torch-2.15.0.log). Programs are independent, so
`GROUP` of them are renamed apart (`p<k>_<name>`: disjoint inputs, one graph) into one program
and judged once by the same oracle, every coordinate still naming its tensor. A program with
no wrong coordinate there is exact; each program with one (a suspect) is judged again alone,
and that single-program outcome is its verdict. So a wrong verdict is always a single-program
measurement; what screening can do wrong is miss a program whose fault only shows alone (its
graph fused or scheduled with the others'), which `$WRITEBACK_CORPUS_SCREEN=0` (every program
alone, the reference) measures: `tests/test_corpus_screen.py` on planted faults, and the
README's miss rate on `seed0-200`.

A group that fails to compile or run (one program's failure fails the graph) is split in
halves and each half screened again, down to single programs judged alone: a program's error
is always its own. A program whose inputs overlap in memory is always judged alone: how
dynamo guards and AOTAutograd handles aliased inputs is decided for a graph's inputs as a
whole, so another program's inputs beside them change it. On seed0-200 / 2.15.0 (grammar
version 2) screening such programs too missed 4 of 49 wrong rows, all of them programs with
overlapping inputs (results/logs/corpus-seed0-200-grammar2-screened-against-alone-*.txt).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import replace

from .oracle import Outcome, judge_coordinates
from .program import Program

KNOB = "WRITEBACK_CORPUS_SCREEN"
GROUP = 40
"""Programs per screening compile: on torch 2.15.0, 50 programs took 20-30 s in one Inductor
compile (0.39-0.61 s a program) and 13-14 s under aot_eager, against 3.3 s a program for both
backends judged alone, with other jobs beside
(results/logs/corpus-where-the-seconds-go-torch-2.15.0.log)."""

_OWNER = re.compile(r"(?:^|_)p(\d+)_")


def screening() -> bool:
    """False when `$WRITEBACK_CORPUS_SCREEN` is `0`: every program judged alone."""
    return os.environ.get(KNOB, "1").strip() != "0"


def combine(programs: list[Program]) -> Program:
    """One program running `programs` side by side, program k's tensors renamed `p<k>_<name>`."""
    inputs, statements, returns = [], [], []
    for k, program in enumerate(programs):

        def renamed(name: str, k=k) -> str:
            return f"p{k}_{name}"

        inputs += [
            replace(spec, name=renamed(spec.name), base=spec.base and renamed(spec.base))
            for spec in program.inputs
        ]
        statements += [
            replace(s, out=renamed(s.out) if s.out else None, args=tuple(map(renamed, s.args)))
            for s in program.statements
        ]
        returns += [renamed(name) for name in program.returns]
    return Program(tuple(inputs), tuple(statements), tuple(returns))


def owner(coordinate: str) -> int | None:
    """The index of the program a combined program's coordinate is about (None: unknown)."""
    found = _OWNER.search(coordinate)
    return int(found.group(1)) if found else None


def judge_all(
    programs: list[Program], backend: str, alone: Callable[[Program, str], Outcome]
) -> list[tuple[Outcome, str]]:
    """Each program's outcome and how it was reached (`screened`: exact in a screening compile;
    `alone`: judged alone, by `alone(program, backend)`), in order."""
    if not screening():
        return [(alone(program, backend), "alone") for program in programs]
    found: list = [None] * len(programs)
    shared = []
    for index, program in enumerate(programs):
        if program.overlapping_inputs():
            found[index] = (alone(program, backend), "alone")
        else:
            shared.append(index)
    for start in range(0, len(shared), GROUP):
        _screen(programs, shared[start : start + GROUP], backend, alone, found)
    return found


def _screen(programs, indices, backend, alone, found) -> None:
    if len(indices) == 1:
        found[indices[0]] = (alone(programs[indices[0]], backend), "alone")
        return
    outcome = judge_coordinates(combine([programs[i] for i in indices]), backend)
    if outcome.error:
        half = len(indices) // 2
        _screen(programs, indices[:half], backend, alone, found)
        _screen(programs, indices[half:], backend, alone, found)
        return
    owners = {owner(key) for key in outcome.wrong}
    suspects = set(range(len(indices))) if None in owners else owners
    for k, index in enumerate(indices):
        if k in suspects:
            found[index] = (alone(programs[index], backend), "alone")
        else:
            found[index] = (Outcome({}), "screened")


def suspects(programs: list[Program], backend: str) -> list[bool]:
    """Which programs one screening compile of all of them finds wrong (no single-program
    verdict: the shrinker's first sieve); every one when that compile fails."""
    if len(programs) == 1 or not screening():
        return [True] * len(programs)
    outcome = judge_coordinates(combine(programs), backend)
    owners = {owner(key) for key in outcome.wrong}
    if outcome.error or None in owners:
        return [True] * len(programs)
    return [k in owners for k in range(len(programs))]
