"""The snapshot contract: what one call of a control must leave behind, checked exactly.

A call has two outputs: the values it returns and the storage it changes. Before the call we
keep the expected values (computed independently of the code under test, by the scenario),
a view of every input, and every input's storage address. After the call every coordinate
must be exact:

    ret_<name>   each returned tensor
    in_<name>    each input, read through the tensor object that was passed in
    view_<name>  each input, read through the view taken before the call
    alias_<name> each returned tensor's aliasing (when the eager `reference` is given): after
                 the call a distinct value is written through the return, here and in an
                 eager call on copies of the same inputs; the input elements that change
                 must be the same in both (a return that aliases an input in eager must alias
                 it here, one that does not must not)

and every input must still live at its original storage address. The verdict counts wrong
elements per coordinate, so a wrong result is a number that asv can track and bisect.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .compat import storage_address


@dataclass
class Case:
    """One call's inputs and the values it must leave behind.

    `inputs` are passed positionally in their order; `after` holds the value each input must
    hold after the call; `returns` the value of each returned tensor, in return order.
    """

    inputs: dict[str, torch.Tensor]
    after: dict[str, torch.Tensor]
    returns: dict[str, torch.Tensor]


@dataclass
class Verdict:
    """Wrong elements per coordinate, and the inputs whose storage moved."""

    wrong: dict[str, int]
    moved: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.wrong.values())

    @property
    def ok(self) -> bool:
        return self.total == 0 and not self.moved

    def describe(self) -> str:
        """`exact, storage kept`, or which coordinates are wrong by how many elements."""
        if self.ok:
            return "exact, storage kept"
        parts = [f"{coord} {count} wrong" for coord, count in self.wrong.items() if count]
        if self.moved:
            parts.append("storage moved: " + ", ".join(self.moved))
        return "; ".join(parts)


class ContractBroken(AssertionError):
    """A control broke the snapshot contract; the message names where and by how much."""


ALIAS_MARK = -(2**23)
"""The first value written through a returned tensor by the alias probe (then -2**23 + 1, ...):
exact in FP32 and in every integer dtype the scenarios use, and far from their input values."""


def check(call, case: Case, reference=None) -> Verdict:
    """Call `call(*case.inputs)` once and check every coordinate of the contract.

    With `reference` (the plain eager function), the alias probe runs too: `reference` is
    called on copies of the inputs taken before the call, then each return is written through
    on both sides (see `alias_<name>` above). The probe writes into the inputs, so it runs
    after every value and storage coordinate has been read.
    """
    views = {name: tensor.view(tensor.shape) for name, tensor in case.inputs.items()}
    addresses = {name: storage_address(tensor) for name, tensor in case.inputs.items()}
    copies = copies_keeping_aliases(case.inputs) if reference else {}
    result = call(*case.inputs.values())
    returned = _as_tuple(result)

    wrong = {}
    for position, (name, expected) in enumerate(case.returns.items()):
        got = returned[position] if position < len(returned) else None
        wrong[f"ret_{name}"] = count_wrong(got, expected)
    for name, expected in case.after.items():
        wrong[f"in_{name}"] = count_wrong(case.inputs[name], expected)
    for name, expected in case.after.items():
        wrong[f"view_{name}"] = count_wrong(views[name], expected)
    moved = [
        name for name, tensor in case.inputs.items() if storage_address(tensor) != addresses[name]
    ]
    if reference is not None:
        reference_returns = _as_tuple(reference(*copies.values()))
        wrong.update(
            alias_wrong(list(case.returns), returned, case.inputs, reference_returns, copies)
        )
    return Verdict(wrong=wrong, moved=moved)


def copies_keeping_aliases(inputs: dict) -> dict:
    """Copies of `inputs` for the eager reference: one new storage per storage the inputs
    share, each copy a view of it with its input's offset, sizes and strides, so inputs that
    are views of one tensor (or one storage seen as two dtypes) are so in the copies too.
    A clone per input would give the reference unaliased inputs, and a different meaning."""
    storages = {}
    copies = {}
    for name, tensor in inputs.items():
        if not isinstance(tensor, torch.Tensor):
            copies[name] = tensor
            continue
        source = tensor.untyped_storage()
        key = (source.data_ptr(), source.nbytes())
        if key not in storages:
            storages[key] = source.clone()
        copy = torch.empty(0, dtype=tensor.dtype, device=tensor.device)
        copy.set_(storages[key], tensor.storage_offset(), tensor.size(), tensor.stride())
        copies[name] = copy
    return copies


def alias_wrong(names, returned, inputs, reference_returns, reference_inputs) -> dict[str, int]:
    """`alias_<name>` per return: input elements that a write through that return changes on
    one side only (the call's, or the eager reference's)."""
    wrong = {}
    for position, name in enumerate(names):
        mark = ALIAS_MARK + position
        here = _changed_by_write(_at(returned, position), mark, inputs)
        there = _changed_by_write(_at(reference_returns, position), mark, reference_inputs)
        wrong[f"alias_{name}"] = sum(count_wrong(here[key], there[key]) for key in there)
    return wrong


def _changed_by_write(tensor, mark: int, inputs: dict) -> dict[str, torch.Tensor]:
    """Write `mark` through `tensor` (when it is one); return, per input, which elements changed."""
    before = {name: value.clone() for name, value in inputs.items()}
    if isinstance(tensor, torch.Tensor):
        tensor.detach().fill_(mark)
    return {name: torch.ne(inputs[name], before[name]) for name in inputs}


def _at(values: tuple, position: int):
    return values[position] if position < len(values) else None


def count_wrong(got, expected: torch.Tensor) -> int:
    """Elements of `got` whose bits differ from `expected`'s; all of them when not comparable.

    Bitwise, not by value: -0.0 where +0.0 is expected is wrong, and so is a NaN with another
    payload (`torch.ne` would pass the first and fail every NaN).
    """
    if not isinstance(got, torch.Tensor) or got.shape != expected.shape:
        return expected.numel()
    if got.dtype != expected.dtype:
        return expected.numel()
    differs = torch.ne(_bits(got), _bits(expected))
    return int(differs.any(dim=1).sum().item())


_SAME_WIDTH_INT = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _bits(tensor: torch.Tensor) -> torch.Tensor:
    """The bits of each element, one row per element (in row-major order), as integers.

    Elements wider than 8 bytes (complex128) span several int64 columns.
    """
    flat = tensor.detach().contiguous().reshape(-1)
    width = flat.element_size()
    column = min(width, 8)
    return flat.view(_SAME_WIDTH_INT[column]).reshape(flat.numel(), width // column)


def require(verdict: Verdict, where: str) -> None:
    """Raise `ContractBroken` naming `where`, the coordinates and the counts, unless exact."""
    if not verdict.ok:
        raise ContractBroken(f"{where} broke the snapshot contract: {verdict.describe()}")


def _as_tuple(result) -> tuple:
    if isinstance(result, torch.Tensor):
        return (result,)
    if isinstance(result, (tuple, list)):
        return tuple(result)
    return ()
