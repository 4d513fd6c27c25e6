"""The snapshot contract: what one call of a control must leave behind, checked exactly.

A call has two outputs: the values it returns and the storage it changes. Before the call we
keep the expected values (computed independently of the code under test, by the scenario),
a view of every input, and every input's storage address. After the call every coordinate
must be exact:

    ret_<name>   each returned tensor
    in_<name>    each input, read through the tensor object that was passed in
    view_<name>  each input, read through the view taken before the call

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


def check(call, case: Case) -> Verdict:
    """Call `call(*case.inputs)` once and check every coordinate of the contract."""
    views = {name: tensor.view(tensor.shape) for name, tensor in case.inputs.items()}
    addresses = {name: storage_address(tensor) for name, tensor in case.inputs.items()}
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
    return Verdict(wrong=wrong, moved=moved)


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
