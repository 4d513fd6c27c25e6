"""What a scenario module provides: named controls, a case builder, sizes.

A scenario is one mutation/aliasing pattern (the snapshot swap is the first). Adding another
means one new module, named as the scenario, that builds a `Scenario` and two asv classes from
`asv_classes`; `registry.py` finds it there, and the contract, the probes and the asv plumbing
stay as they are.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from .contract import Case

BACKENDS = ("eager", "aot_eager", "inductor")
"""Where a control runs: the plain call, torch.compile without and with Inductor's codegen."""

ASV_BACKENDS = ("inductor", "aot_eager", "eager")
"""`BACKENDS` as asv's parameter values: the compiled one first, because asv's graphs open on
a parameter's first value (an `eager` line is all zeros). The probes still run in `BACKENDS`
order."""

COST_BACKEND = "inductor"


@dataclass(frozen=True)
class Control:
    """One way to write the operation. `requires` names torch attributes it cannot run without,
    `requires_module` a package it imports (a client library such as tensordict);
    `make_case` overrides the scenario's case builder (catalogue patterns have their own
    inputs); `issue` links the upstream report it reproduces, `fix` the pull request that fixes
    it; `floor_operands` overrides the scenario's (its inputs differ). `fullgraph=False` lets
    dynamo split the control at a graph break (a report whose fault lives between two compiled
    graphs); every other control compiles as one graph, and a graph break is an error."""

    name: str
    fn: Callable
    requires: tuple[str, ...] = ()
    make_case: Callable | None = None
    issue: str = ""
    requires_module: str = ""
    floor_operands: Callable | None = None
    fix: str = ""
    fullgraph: bool = True


@dataclass(frozen=True)
class Scenario:
    """A pattern, its controls, and `make_case(n)`: fresh inputs and their expected results.

    The first size is the small correctness gate: a control that is wrong there is not
    compiled at larger sizes for cost, nor timed. `calls_need_fresh_inputs` says whether
    repeated timed calls must get new inputs (made outside the timed interval). Sizes are
    element counts, or labels (`small`, `large`) that each control's `make_case` reads;
    `measure_cost` is off for scenarios that only ask for a verdict (the catalogue).
    `floor_operands(inputs) -> (a, b)` names the two tensors a correct call swaps, in the
    positional inputs of a call: the physical floor swaps them beside the control (see
    `probes/floor.py`). Without it, time over floor is a skip that says so.
    """

    name: str
    controls: tuple[Control, ...]
    sizes: tuple
    make_case: Callable[[int], Case] | None = None
    calls_need_fresh_inputs: bool = False
    param_names: tuple[str, str, str] = ("control", "backend", "n")
    measure_cost: bool = True
    floor_operands: Callable | None = None

    @property
    def gate_size(self) -> int:
        return self.sizes[0]

    @property
    def asv_sizes(self) -> tuple:
        """`sizes` as asv's parameter values: the largest first, because asv's graphs open on
        a parameter's first value and the question is the large size's (4 MiB of scratch
        against 8 MiB, not 24 bytes). The probes still run the gate size first."""
        return tuple(reversed(self.sizes))

    def chosen_sizes(self) -> tuple[int, ...]:
        """`sizes`, or those in `$WRITEBACK_SIZES` (comma-separated, e.g. `3` for a quick run).

        The gate size always comes first, so a cost is never measured without the gate.
        """
        text = os.environ.get("WRITEBACK_SIZES", "").strip()
        if not text:
            return self.sizes
        parts = [part.strip() for part in text.split(",") if part.strip()]
        if not all(isinstance(size, int) for size in self.sizes):
            # labelled sizes: keep the labels named, the gate always
            return tuple(dict.fromkeys([self.gate_size, *(p for p in parts if p in self.sizes)]))
        try:
            chosen = [int(part) for part in parts]
        except ValueError:
            raise ValueError(
                f"WRITEBACK_SIZES must be element counts like 3,1048576, not {text!r}"
            ) from None
        if any(n <= 0 for n in chosen):
            raise ValueError(f"WRITEBACK_SIZES must be positive element counts: {text!r}")
        return tuple(dict.fromkeys([self.gate_size, *chosen]))

    def left_out(self, size) -> str | None:
        """Why a knob leaves `size` out of this run (a skip's reason), or None when it runs."""
        if size in self.chosen_sizes():
            return None
        knob = os.environ.get("WRITEBACK_SIZES", "")
        return f"not run: WRITEBACK_SIZES={knob} leaves size {size} out of this run"

    def case(self, control: Control, size) -> Case:
        """Fresh inputs and expectations for one call of `control` at `size`."""
        return (control.make_case or self.make_case)(size)

    def floor_operands_of(self, control: Control) -> Callable | None:
        """`floor_operands` for `control`: its own, else the scenario's, else None."""
        return control.floor_operands or self.floor_operands

    def control(self, name: str) -> Control:
        for control in self.controls:
            if control.name == name:
                return control
        known = ", ".join(c.name for c in self.controls)
        raise KeyError(f"{self.name} has no control {name!r} (known: {known})")
