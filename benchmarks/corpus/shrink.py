"""The shrinker: the smallest program, step by greedy step, that is still wrong.

Candidates, in order: drop a statement, drop one (destination, source) pair of a
foreach op, replace a view by its base or a clone by its source (every later use reads the
base or the source instead), drop a return, drop an unused input. A candidate is kept when it is
still well-defined in eager (`program.problem`: shrinking never produces an undefined program)
and `still_wrong` holds for it. Each pass goes on from the candidate it kept (a restart after
every step would compile every earlier candidate again); passes repeat until one keeps none.
Before a pass tries its candidates one by one, it tries dropping at once every statement that
a candidate it would try drops alone (`_drops_together`): one judgement for many steps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

from .program import FOREACH, VIEWS, Program, Statement, problem


def shrink(
    program: Program,
    still_wrong: Callable[[Program], bool],
    flagged: Callable[[list[Program]], list[bool]] | None = None,
) -> Program:
    """The smallest program still wrong, by `still_wrong` (a single-program verdict).

    `flagged(candidates)`, when given, screens a pass's remaining candidates at once
    (`screen.suspects`: one compile) and only the flagged ones are judged by `still_wrong`, in
    order: a pass that keeps none (every shrink ends with one) costs one compile, not one a
    candidate. A candidate the screen misses is only a step not taken."""
    current, position, kept_in_pass = program, 0, False
    while True:
        options = [
            (offset, candidate)
            for offset, candidate in enumerate(list(candidates(current))[position:])
            if problem(candidate) is None
        ]
        marks = flagged([c for _, c in options]) if flagged and options else [True] * len(options)
        together = _drops_together(current, [c for (_, c), m in zip(options, marks) if m])
        if together is not None and still_wrong(together):
            current, position, kept_in_pass = together, 0, True
            continue
        for (offset, candidate), marked in zip(options, marks):
            if marked and still_wrong(candidate):
                current, position, kept_in_pass = candidate, position + offset, True
                break
        else:
            if not kept_in_pass:
                return current
            position, kept_in_pass = 0, False


def _drops_together(current: Program, marked: list[Program]) -> Program | None:
    """`current` without every statement that one of the `marked` candidates drops alone,
    when two or more do and the result is well-defined: one compile that may take many
    steps at once (a wrong program of twelve statements is often wrong for two of them)."""
    dropped = set()
    for candidate in marked:
        if (candidate.inputs, candidate.returns) != (current.inputs, current.returns):
            continue
        if len(candidate.statements) == len(current.statements) - 1:
            rest = set(candidate.statements)
            dropped |= {k for k, s in enumerate(current.statements) if s not in rest}
    if len(dropped) < 2:
        return None
    kept = tuple(s for k, s in enumerate(current.statements) if k not in dropped)
    together = replace(current, statements=kept)
    return together if problem(together) is None else None


def candidates(program: Program) -> Iterator[Program]:
    statements = program.statements
    for index, statement in enumerate(statements):
        rest = statements[:index] + statements[index + 1 :]
        if statement.out is None or not _uses(rest[index:], program.returns, statement.out):
            yield replace(program, statements=rest)
    for index, statement in enumerate(statements):
        for shorter in _fewer_pairs(statement):
            yield replace(program, statements=(*statements[:index], shorter,
                                               *statements[index + 1 :]))  # fmt: skip
    for index, statement in enumerate(statements):
        if statement.op in VIEWS or statement.op == "clone":
            base, view = statement.args[0], statement.out
            later = tuple(_renamed(s, view, base) for s in statements[index + 1 :])
            returns = tuple(dict.fromkeys(base if r == view else r for r in program.returns))
            yield replace(program, statements=statements[:index] + later, returns=returns)
    for index in range(len(program.returns)):
        yield replace(program, returns=program.returns[:index] + program.returns[index + 1 :])
    for index, spec in enumerate(program.inputs):
        if not _uses(statements, program.returns, spec.name):
            yield replace(program, inputs=program.inputs[:index] + program.inputs[index + 1 :])


def _fewer_pairs(statement: Statement) -> Iterator[Statement]:
    """The foreach op without one of its list elements (and its source)."""
    if statement.op == "_foreach_mul_" and len(statement.args) > 1:
        for k in range(len(statement.args)):
            yield replace(statement, args=statement.args[:k] + statement.args[k + 1 :])
    elif statement.op in FOREACH and len(statement.args) > 2:
        half = len(statement.args) // 2
        for k in range(half):
            kept = [a for j, a in enumerate(statement.args) if j not in (k, half + k)]
            yield replace(statement, args=tuple(kept))


def _uses(statements, returns, name: str) -> bool:
    return name in returns or any(name in s.args for s in statements)


def _renamed(statement: Statement, old: str, new: str) -> Statement:
    return replace(statement, args=tuple(new if a == old else a for a in statement.args))
