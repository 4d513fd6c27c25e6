"""Families by fault: what is wrong, where it first goes wrong, and through which pass.

A wrong program's fault is described by four things (`Fault`):

- `first_wrong`: the backend where the call first goes wrong. An Inductor row whose program is
  also wrong under `aot_eager` is already wrong in dynamo or AOTAutograd: no Inductor pass
  can be behind it.
- `passes`: the Inductor passes the family's attribution names (`run.py` attributes one
  representative per candidate group and checks every other member against it: a member
  that the representative's pass, switched off, makes exact has the same fault).
- `kinds`: which kinds of coordinate are wrong (`KINDS`: the value of a return, an input
  after the call, a view taken before it, an output's aliasing, the second call, an input's
  storage).
- `essential`: the op the wrong value comes from in the shrunk program (`essential_op`): the
  op that produced a wrong return, or the write that left a wrong input (through a view: the
  view op, e.g. `unfold`); every in-place foreach op is one, `_foreach_*_`.

Candidate groups (before any attribution) share backend, `first_wrong` and `kinds`; a family
is a candidate group split by pass. `shape` (the op sequence with names canonicalised and
literals dropped) is still computed for each repro: it is the family's skeleton, shown beside
it, not its key.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .program import FOREACH, VIEWS, Program

KINDS = (
    ("unaliased_", "later call on unaliased inputs"),
    ("second_", "second call"),
    ("alias_returns", "returns' aliasing"),
    ("alias_", "output alias"),
    ("ret_", "return value"),
    ("in_", "input after the call"),
    ("view_", "pre-call view"),
    ("moved_", "input storage"),
)
"""Coordinate prefixes (the oracle's names, first match wins) and the kind each is."""


@dataclass(frozen=True)
class Fault:
    backend: str
    first_wrong: str
    kinds: tuple[str, ...]
    passes: tuple[str, ...] = ()
    essential: str = ""

    def describe(self) -> str:
        where = (
            f"already wrong with {self.first_wrong}"
            if self.first_wrong != self.backend
            else f"wrong in {self.backend}"
        )
        through = f", through {' + '.join(self.passes)}" if self.passes else ""
        op = f", from `{self.essential}`" if self.essential else ""
        return f"{self.backend}: {', '.join(self.kinds)} {where}{through}{op}"


def kind(coordinate: str) -> str:
    for prefix, name in KINDS:
        if coordinate.startswith(prefix):
            return name
    return coordinate


def kinds(coordinates: Iterable[str]) -> tuple[str, ...]:
    """The kinds of the wrong coordinates, in `KINDS` order."""
    found = {kind(c) for c in coordinates}
    return tuple(name for _, name in KINDS if name in found) + tuple(
        sorted(found - {name for _, name in KINDS})
    )


FOREACH_INPLACE = "_foreach_*_"
"""How `essential_op` names any in-place foreach op (`FOREACH`): Inductor lowers each of them
as one in-place foreach, so which one a shrunk program keeps says nothing of its fault (on
seed0-500 / 2.13.0 the `reinplace_inplaceable_ops` foreach fault came out as two families,
`_foreach_add_` and `_foreach_copy_`, the same coordinates and pass)."""


def essential_op(program: Program, coordinates: Iterable[str]) -> str:
    """The op the first wrong coordinate's value comes from (see the module), or "" when no
    statement of the program produces or writes it; any in-place foreach op is
    `FOREACH_INPLACE`."""
    op = _essential_op(program, coordinates)
    return FOREACH_INPLACE if op in FOREACH else op


def _essential_op(program: Program, coordinates: Iterable[str]) -> str:
    order = [prefix for prefix, _ in KINDS]
    producers = {s.out: s for s in program.statements if s.out}
    # a later call on unaliased inputs is wrong because a graph compiled for overlapping ones
    # is reused: no op of the program is the cause
    chosen = [c for c in coordinates if not c.startswith("unaliased_")]
    for coordinate in sorted(chosen, key=lambda c: order.index(_prefix(c))):
        name = _tensor(coordinate, program)
        if name is None:
            continue
        if name in producers and not coordinate.startswith(
            ("in_", "view_", "second_in_", "unaliased_in_")
        ):
            return producers[name].op
        if found := _last_write(program, name, producers):
            return found
    return ""


def _prefix(coordinate: str) -> str:
    return next((p for p, _ in KINDS if coordinate.startswith(p)), KINDS[-1][0])


def _tensor(coordinate: str, program: Program) -> str | None:
    """The program tensor a coordinate names (`ret_1_t3` -> `t3`, `in_a` -> `a`)."""
    names = [spec.name for spec in program.inputs] + [s.out for s in program.statements if s.out]
    for name in sorted(names, key=len, reverse=True):
        if coordinate.endswith(f"_{name}"):
            return name
    return None


def _last_write(program: Program, name: str, producers: dict) -> str:
    """The op of the last statement writing `name`, or the view op it wrote through; where no
    statement writes it in eager (the compiled call wrote it through a tensor that should not
    have aliased it), the op that made the last written tensor derived from it (`clone`)."""
    for through in (VIEWS, None):
        found = ""
        for statement in program.statements:
            for written in statement.written():
                if name in _chain(written, producers, through):
                    found = statement.op if written == name else producers[written].op
        if found:
            return found
    return ""


def _chain(name: str, producers: dict, ops) -> list[str]:
    """`name`, then the tensor it was made from (its first argument) by one of `ops` (None:
    any op), and so on back to an input."""
    chain = [name]
    while chain[-1] in producers and (ops is None or producers[chain[-1]].op in ops):
        if not producers[chain[-1]].args:
            break
        chain.append(producers[chain[-1]].args[0])
    return chain


def shape(program: Program) -> str:
    """The op sequence with names canonicalised (inputs `i0, i1, ...`, other tensors `t0, ...`,
    in order of first use) and literals dropped: `t0=clone(i0); _foreach_copy_(i1,i0,t0)`."""
    inputs = {spec.name for spec in program.inputs}
    names: dict[str, str] = {}

    def canonical(name: str) -> str:
        if name not in names:
            prefix = "i" if name in inputs else "t"
            names[name] = f"{prefix}{sum(1 for v in names.values() if v[0] == prefix)}"
        return names[name]

    parts = []
    for statement in program.statements:
        args = ",".join(canonical(a) for a in statement.args)
        out = f"{canonical(statement.out)}=" if statement.out else ""
        parts.append(f"{out}{statement.op}({args})")
    return "; ".join(parts)


def group(items: Iterable, key: Callable) -> dict:
    """Items by `key(item)`, in order of first appearance."""
    groups: dict = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return groups
