"""The oracle: a program compiled for a backend against the plain eager call, exactly.

Runs on fresh inputs, each against eager on its own fresh inputs:

- one call, checked with the snapshot contract (`contract.check` with the eager reference:
  every return, every input, every view taken before the call, storage kept, and the output
  alias probe);
- two calls in a row: `second_ret_<name>` and `second_in_<name>` compare the second call's
  returns and the inputs after it with eager's after two calls;
- for a program whose inputs overlap in memory, two more calls of the same compiled function
  on independent inputs of the same layouts (`unaliased_ret_<name>`, `unaliased_in_<name>`):
  inputs aliased differently from the first call;
- one more call, `alias_returns`: the returns' aliasing of each other. A distinct value is
  written through each return in turn, compiled and in eager, and the elements of every
  return that change must be the same: two returns that share storage in eager must share it
  compiled, the same elements overlapping, and two that do not must not.

A compile or runtime failure of the compiled program is not a wrong result: it is returned as
the error; an eager failure is a generator bug and raises. Which errors are expected states is
said in one place, `benchmarks/known_failures.py`; every other failure fails `make history`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..compat import exception_name, raised_at
from ..compiled import build
from ..contract import Case, Verdict, alias_wrong, check, count_wrong
from .program import Program

RETURNS_ALIAS = "alias_returns"


@dataclass(frozen=True)
class Outcome:
    """Wrong elements per coordinate (only the wrong ones), or the error that stopped it."""

    wrong: dict[str, int]
    error: str | None = None

    @property
    def total(self) -> int:
        return sum(self.wrong.values())

    @property
    def is_wrong(self) -> bool:
        return self.error is None and self.total > 0


def judge(program: Program, backend: str) -> Outcome:
    """The program's outcome on `backend`, `alias_returns` one number for all its returns."""
    outcome = judge_coordinates(program, backend)
    wrong = {k: v for k, v in outcome.wrong.items() if not k.startswith(RETURNS_ALIAS)}
    if shared := sum(v for k, v in outcome.wrong.items() if k.startswith(RETURNS_ALIAS)):
        wrong[RETURNS_ALIAS] = shared
    return Outcome(wrong, outcome.error)


def judge_coordinates(program: Program, backend: str) -> Outcome:
    """`judge` with `alias_returns` per return (`alias_returns_<position>_<name>`): every
    coordinate names the tensor it is about, which screening needs (`screen.py`)."""
    fn = program.function()
    with torch.no_grad():
        case = _case(program, fn)
    try:
        compiled = build(fn, backend)
        with torch.no_grad():
            verdict = check(compiled, case, reference=fn)
            second = _second_call_wrong(program, fn, compiled)
            unaliased = _unaliased_calls_wrong(program, fn, compiled)
            shared = _returns_alias_wrong(program, fn, compiled)
    except Exception as exc:  # noqa: BLE001  a compile or runtime failure is this result
        return Outcome({}, error=error_text(exc))
    wrong = {**_verdict_wrong(verdict), **second, **shared, **unaliased}
    return Outcome({k: v for k, v in wrong.items() if v})


def error_text(exc: BaseException) -> str:
    """`Class: message` (at most 300 characters of it), then where it was raised
    (`compat.raised_at`: `(at torch/_inductor/scheduler.py:1234)`)."""
    return f"{exception_name(exc)}: {str(exc).strip()[:300]}{raised_at(exc)}"


def _case(program: Program, fn) -> Case:
    """The program's fresh inputs and what eager leaves behind on its own copies."""
    reference = program.make_inputs()
    returned = _as_tuple(fn(*reference))
    keys = [_return_key(position, name) for position, name in enumerate(program.returns)]
    return Case(
        inputs={i.name: t for i, t in zip(program.inputs, program.make_inputs())},
        after={i.name: t.clone() for i, t in zip(program.inputs, reference)},
        returns={key: t.clone() for key, t in zip(keys, returned)},
    )


def _second_call_wrong(program: Program, fn, compiled) -> dict[str, int]:
    ours, theirs = program.make_inputs(), program.make_inputs()
    fn(*theirs)
    expected = _as_tuple(fn(*theirs))
    compiled(*ours)
    got = _as_tuple(compiled(*ours))
    wrong = {}
    for position, (name, value) in enumerate(zip(program.returns, expected)):
        got_value = got[position] if position < len(got) else None
        wrong[f"second_ret_{_return_key(position, name)}"] = count_wrong(got_value, value)
    for spec, mine, reference in zip(program.inputs, ours, theirs):
        wrong[f"second_in_{spec.name}"] = count_wrong(mine, reference)
    return wrong


def _unaliased_calls_wrong(program: Program, fn, compiled) -> dict[str, int]:
    """For a program whose inputs overlap, after the calls above on overlapping inputs: two more
    calls of the same compiled function on independent inputs of the same layouts
    (`Program.independent`), against eager's two calls (`unaliased_ret_*`, `unaliased_in_*`).
    Dynamo must guard on how the inputs alias and compile again."""
    if not program.overlapping_inputs():
        return {}
    wrong = _second_call_wrong(program.independent(), fn, compiled)
    return {key.replace("second_", "unaliased_", 1): count for key, count in wrong.items()}


def _returns_alias_wrong(program: Program, fn, compiled) -> dict[str, int]:
    """Per return, elements of the returns that a write through it changes on one side only
    (the compiled call's or eager's), on fresh inputs."""
    got = _as_tuple(compiled(*program.make_inputs()))
    expected = _as_tuple(fn(*program.make_inputs()))
    keys = [_return_key(position, name) for position, name in enumerate(program.returns)]
    if len(got) != len(expected):  # nothing to pair: every element unmatched
        return {f"{RETURNS_ALIAS}_{key}": t.numel() for key, t in zip(keys, expected)}
    wrong = alias_wrong(keys, got, dict(zip(keys, got)), expected, dict(zip(keys, expected)))
    return {f"{RETURNS_ALIAS}_{key}": wrong[f"alias_{key}"] for key in keys}


def _verdict_wrong(verdict: Verdict) -> dict[str, int]:
    return {**verdict.wrong, **{f"moved_{name}": 1 for name in verdict.moved}}


def _return_key(position: int, name: str) -> str:
    return f"{position}_{name}"


def _as_tuple(result) -> tuple:
    if isinstance(result, torch.Tensor):
        return (result,)
    return tuple(result or ())
