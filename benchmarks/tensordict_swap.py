"""A real client: the swaps TensorDict users write, through `update_` (one
`torch._foreach_copy_` per call inside TensorDict).

Each control takes the leaf tensors, builds the TensorDicts inside the compiled function, and
returns the leaves afterwards; the contract covers every leaf's values and storage. Inputs
are exact FP32 integers as in the snapshot swap (a = arange(n), b = a + 2**21).

tensordict is installed into each build's environment without its dependencies, so it never
replaces the torch under test (tools/install_build.py); where it cannot be installed or
imported on a build, every row is a skip that says why.
"""

import torch

from . import asv_classes
from .contract import Case
from .scenario import Control, Scenario

# imported lazily: the module must import (and skip) where tensordict is missing


def _tensordict():
    from tensordict import TensorDict

    return TensorDict


def update_with_own_clones(x, y):
    TensorDict = _tensordict()
    td = TensorDict({"x": x, "y": y}, [])
    td.update_(TensorDict({"x": td["y"].clone(), "y": td["x"].clone()}, []))
    return td["x"], td["y"]


def two_updates_clones_first(a_x, b_x):
    TensorDict = _tensordict()
    a, b = TensorDict({"x": a_x}, []), TensorDict({"x": b_x}, [])
    ca, cb = a.clone(), b.clone()
    a.update_(cb)
    b.update_(ca)
    return a["x"], b["x"]


def row_swap_update(x):
    TensorDict = _tensordict()
    td = TensorDict({"x": x}, [2])
    td.update_(td[torch.tensor([1, 0])])
    return td["x"]


def _pair_case(first: str, second: str):
    def make(n: int) -> Case:
        a = torch.arange(n, dtype=torch.float32)
        b = a + 2**21
        old_a, old_b = a.clone(), b.clone()
        return Case(
            inputs={first: a, second: b},
            after={first: old_b, second: old_a},
            returns={first: old_b, second: old_a},
        )

    return make


def _rows_case(n: int) -> Case:
    x = torch.arange(2 * n, dtype=torch.float32).reshape(2, n)
    swapped = x.clone().flip(0)
    return Case(inputs={"x": x}, after={"x": swapped}, returns={"x": swapped})


def _two_leaves(inputs):
    return inputs[0], inputs[1]


def _two_rows(inputs):
    return inputs[0][0], inputs[0][1]


_CLIENT = {"requires_module": "tensordict", "requires": ("torch._foreach_copy_",)}
TENSORDICT = Scenario(
    name="tensordict_swap",
    controls=(
        Control("update_with_own_clones", update_with_own_clones,
                make_case=_pair_case("x", "y"), **_CLIENT),
        Control("two_updates_clones_first", two_updates_clones_first,
                make_case=_pair_case("a_x", "b_x"), **_CLIENT),
        Control("row_swap_update", row_swap_update, make_case=_rows_case,
                floor_operands=_two_rows, **_CLIENT),
    ),
    sizes=(3, 1048576),
    floor_operands=_two_leaves,
)  # fmt: skip


class _Probed:
    scenario = TENSORDICT

    def setup_cache(self):
        # Here, not in asv_classes: asv keys setup_cache by the module and line defining it.
        return asv_classes.probe_for_asv(self.scenario)


class Correctness(_Probed, asv_classes.Correctness):
    pass


class Cost(_Probed, asv_classes.Cost):
    pass
