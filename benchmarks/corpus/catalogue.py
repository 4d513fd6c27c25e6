"""Which catalogue entry a corpus family is, by meaning: the entries' own controls run through
the same grouping as the corpus's wrong programs.

Every control of every scenario (the swap's controls, the catalogue of upstream reports, the
TensorDict swaps: `benchmarks/registry.py`) that runs here is judged at its gate size on each
backend with the snapshot contract, eager as the reference, all in one compile where they
compile as one graph (`screen_functions`; a group that fails is split in halves). A match
is a pointer to the entry, not its verdict (that is its scenario's, measured alone), so a
screened entry is not judged again alone here. A wrong control matches a family of its
backend when its call first goes wrong where the family's does (under `aot_eager`, or only
under Inductor), every kind of contract coordinate the family's shrunk repro gets wrong is
wrong for the control too (the kinds a control's contract has: the corpus's second call and
returns' aliasing are left out; a shrunk repro returns less than a control), and, for an
Inductor fault, when the family's passes, switched off, make the control exact
(`attribution.exact_without`, the check a family's members pass: a fresh compile of the
control alone). A family no control matches is `new`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import torch

from .. import attribution, pool, registry
from ..compat import import_problem, missing_attributes
from ..compiled import build
from ..contract import Case, check
from ..probes.probe import ready_to_compile
from .families import kinds

_OWNER = re.compile(r"(?:^|_)c(\d+)_")


@dataclass(frozen=True)
class Entry:
    """A control of a scenario, runnable here: its name, function and a fresh case."""

    name: str
    fn: Callable
    make_case: Callable[[], Case]
    fullgraph: bool


def entries() -> list[Entry]:
    """Every control of every scenario that this build and environment can run."""
    found = []
    for scenario in registry.scenarios().values():
        for control in scenario.controls:
            if missing_attributes(control.requires) or import_problem(control.requires_module):
                continue
            found.append(Entry(
                f"{scenario.name}.{control.name}",
                control.fn,
                lambda scenario=scenario, control=control: scenario.case(control,
                                                                         scenario.gate_size),
                control.fullgraph,
            ))  # fmt: skip
    return found


def judged_entries(backends) -> dict[str, dict[str, dict[str, int]]]:
    """Each backend's `wrong_entries` of every entry of the catalogue (`entries()`)."""
    chosen = entries()
    return {backend: wrong_entries(backend, chosen) for backend in backends}


def wrong_entries(backend: str, chosen: list[Entry]) -> dict[str, dict[str, int]]:
    """The wrong coordinates of each entry that is wrong on `backend` (a failure: left out)."""
    return {
        entry.name: wrong
        for entry, wrong in zip(chosen, screen_functions(chosen, backend))
        if wrong
    }


def screen_functions(chosen: list[Entry], backend: str) -> list[dict[str, int]]:
    """Each entry's wrong coordinates on `backend` ({} when exact or failing): the entries that
    compile as one graph share a compile, the others are judged alone."""
    found: list = [None] * len(chosen)
    shared = [k for k, entry in enumerate(chosen) if entry.fullgraph]
    for k in set(range(len(chosen))) - set(shared):
        found[k] = _alone(chosen[k], backend)
    _screen(chosen, shared, backend, found)
    return found


def _screen(chosen, indices, backend, found) -> None:
    if len(indices) <= 1:
        for k in indices:
            found[k] = _alone(chosen[k], backend)
        return
    wrong = _judged(*_combined([chosen[k] for k in indices]), backend, fullgraph=True)
    if wrong is None:
        half = len(indices) // 2
        _screen(chosen, indices[:half], backend, found)
        _screen(chosen, indices[half:], backend, found)
        return
    owners = {_owner(key) for key in wrong}
    if None in owners:  # a coordinate of no one entry: judge each alone
        for k in indices:
            found[k] = _alone(chosen[k], backend)
        return
    for position, k in enumerate(indices):
        found[k] = {key: n for key, n in wrong.items() if _owner(key) == position}


def _owner(key: str) -> int | None:
    found = _OWNER.search(key)
    return int(found.group(1)) if found else None


def _alone(entry: Entry, backend: str) -> dict[str, int]:
    return _judged(entry.fn, entry.make_case(), backend, entry.fullgraph) or {}


def exact_check(entry: Entry, backend: str) -> Callable[[], bool]:
    """A fresh compile and check of `entry`: True when exact; raises when it fails."""

    def exact() -> bool:
        wrong = _judged(entry.fn, entry.make_case(), backend, entry.fullgraph)
        if wrong is None:
            raise RuntimeError(f"{entry.name} failed to compile or run on {backend}")
        return not wrong

    return exact


def _judged(fn, case: Case, backend: str, fullgraph: bool) -> dict[str, int] | None:
    """The wrong coordinates of one checked call; None when it fails to compile or run."""
    try:
        compiled = build(fn, backend, fullgraph)
        with torch.no_grad():
            verdict = check(compiled, case, reference=fn)
    except Exception:  # noqa: BLE001  an entry that fails here is its scenario's to report
        return None
    wrong = {key: n for key, n in verdict.wrong.items() if n}
    return {**wrong, **{f"moved_{name}": 1 for name in verdict.moved}}


def _combined(chosen: list[Entry]) -> tuple[Callable, Case]:
    """One function calling every entry on its own inputs, and the case of all of them, each
    entry's tensors named `c<k>_<name>`."""
    cases = [entry.make_case() for entry in chosen]
    spans, start = [], 0
    for case in cases:
        spans.append((start, start + len(case.inputs)))
        start += len(case.inputs)
    functions = [entry.fn for entry in chosen]

    def combined(*args):
        out = []
        for fn, (lo, hi) in zip(functions, spans):
            result = fn(*args[lo:hi])
            out += [result] if isinstance(result, torch.Tensor) else list(result or ())
        return tuple(out)

    def named(k: int, values: dict) -> dict:
        return {f"c{k}_{name}": value for name, value in values.items()}

    case = Case(
        inputs={n: v for k, c in enumerate(cases) for n, v in named(k, c.inputs).items()},
        after={n: v for k, c in enumerate(cases) for n, v in named(k, c.after).items()},
        returns={n: v for k, c in enumerate(cases) for n, v in named(k, c.returns).items()},
    )
    return combined, case


def match(found: list[dict], backends: tuple, wrong: dict | None = None, workers: int = 1) -> None:
    """Fill each family's `catalogue`: the entries that have its fault, or `new`. `wrong`: each
    backend's `wrong_entries` of every entry when already judged in this run (else judged
    here); the pass checks run `workers` processes side by side, one task a family that has a
    candidate control (a family no control could match is `new` without one)."""
    if wrong is None:
        wrong = judged_entries(backends)
    before = wrong.get("aot_eager", {})
    checked_families, tasks = [], []
    for family in found:
        candidates = [
            name for name, coordinates in wrong.get(family["backend"], {}).items()
            if ("aot_eager" if name in before else family["backend"]) == family["first_wrong"]
            and _comparable(family["kinds"]) <= _comparable(kinds(coordinates))
        ]  # fmt: skip
        family["catalogue"] = "new"
        if candidates:  # a family no entry could match needs no worker
            checked = {k: family[k] for k in ("backend", "passes", "attribution")}
            checked_families.append(family)
            tasks.append((checked, candidates, torch.get_num_threads()))
    checks = pool.run(_same_passes_of, tasks, workers)
    for family, (_, candidates, _), same in zip(checked_families, tasks, checks):
        family["catalogue"] = ", ".join(n for n, ok in zip(candidates, same) if ok) or "new"


def _same_passes_of(family: dict, names: list[str], threads: int) -> list[bool]:
    """`_same_passes_each` of the entries named `names` (a pool task: entries are found again
    by name in the worker, their functions cannot travel)."""
    ready_to_compile(threads)
    by_name = {entry.name: entry for entry in entries()}
    return _same_passes_each(family, [by_name[name] for name in names])


def _comparable(found: list[str] | tuple[str, ...]) -> set[str]:
    """The kinds a control's contract has (the corpus's own probes left out)."""
    return set(found) - {"second call", "returns' aliasing", "later call on unaliased inputs"}


def _same_passes_each(family: dict, chosen: list[Entry]) -> list[bool]:
    """`_same_passes` of each entry, the entries that compile as one graph checked together
    (`attribution.exact_without_each`: two compiles for all of them, with the family's passes
    on, then off); an entry that compile cannot answer for, and every other entry, alone."""
    if not family["passes"]:
        return [True] * len(chosen)
    shared = [k for k, entry in enumerate(chosen) if entry.fullgraph]

    def judge_each() -> list[bool]:
        together = [chosen[k] for k in shared]
        wrong = _judged(*_combined(together), family["backend"], fullgraph=True)
        owners = {_owner(key) for key in wrong or {}}
        if wrong is None or None in owners:
            raise RuntimeError("the shared compile failed or named no one entry")
        return [position not in owners for position in range(len(shared))]

    verdicts = attribution.exact_without_batched(
        family["attribution"], chosen, shared, judge_each, lambda entry: _same_passes(family, entry)
    )
    return [bool(verdict) for verdict in verdicts]


def _same_passes(family: dict, entry: Entry) -> bool:
    """True when the family names no pass, or its passes switched off make `entry` exact."""
    if not family["passes"]:
        return True
    try:
        return bool(attribution.exact_without(family["attribution"],
                                              exact_check(entry, family["backend"])))  # fmt: skip
    except RuntimeError:
        return False
