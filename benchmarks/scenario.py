"""What a scenario module provides: named controls, a case builder, sizes.

A scenario is one mutation/aliasing pattern (the snapshot swap is the first). Adding another
means one new module that builds a `Scenario` and two asv classes from `asv_classes`; the
contract, the probes and the asv plumbing stay as they are.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from .contract import Case

BACKENDS = ("eager", "aot_eager", "inductor")
"""Where a control runs: the plain call, torch.compile without and with Inductor's codegen."""

COST_BACKEND = "inductor"


@dataclass(frozen=True)
class Control:
    """One way to write the operation. `requires` names torch attributes it cannot run without."""

    name: str
    fn: Callable
    requires: tuple[str, ...] = ()


@dataclass(frozen=True)
class Scenario:
    """A pattern, its controls, and `make_case(n)`: fresh inputs and their expected results.

    The first size is the small correctness gate: a control that is wrong there is not
    compiled at larger sizes for cost, nor timed. `calls_need_fresh_inputs` says whether
    repeated timed calls must get new inputs (made outside the timed interval).
    """

    name: str
    controls: tuple[Control, ...]
    sizes: tuple[int, ...]
    make_case: Callable[[int], Case]
    calls_need_fresh_inputs: bool = False

    @property
    def gate_size(self) -> int:
        return self.sizes[0]

    def chosen_sizes(self) -> tuple[int, ...]:
        """`sizes`, or those in `$WRITEBACK_SIZES` (comma-separated, e.g. `3` for a quick run).

        The gate size always comes first, so a cost is never measured without the gate.
        """
        text = os.environ.get("WRITEBACK_SIZES", "").strip()
        if not text:
            return self.sizes
        try:
            chosen = [int(part) for part in text.split(",") if part.strip()]
        except ValueError:
            raise ValueError(
                f"WRITEBACK_SIZES must be element counts like 3,1048576, not {text!r}"
            ) from None
        if any(n <= 0 for n in chosen):
            raise ValueError(f"WRITEBACK_SIZES must be positive element counts: {text!r}")
        return tuple(dict.fromkeys([self.gate_size, *chosen]))

    def control(self, name: str) -> Control:
        for control in self.controls:
            if control.name == name:
                return control
        known = ", ".join(c.name for c in self.controls)
        raise KeyError(f"{self.name} has no control {name!r} (known: {known})")
