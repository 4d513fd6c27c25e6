"""The snapshot swap: exchange the values of two independent contiguous FP32 CPU tensors.

Every control captures both old values before the first write, then writes them back
crosswise, and returns (a, b). Inputs are exact FP32 integers: a = arange(N), b = a + 2**21,
so any element that took the wrong source differs exactly. The expected results (old b for
a, old a for b) are plain clones taken before the call, independent of the code under test.
"""

import torch

from . import asv_classes
from .contract import Case
from .scenario import Control, Scenario


def foreach_clones(a, b):
    """The reported fault's shape: upfront clones, one foreach copy."""
    sources = (b.clone(), a.clone())
    torch._foreach_copy_([a, b], list(sources))
    return a, b


def explicit_copies(a, b):
    """Upfront clones, then one explicit copy per destination."""
    sources = (b.clone(), a.clone())
    for dest, source in zip((a, b), sources):
        dest.copy_(source)
    return a, b


def stack_buffer(a, b):
    """A materialized stacked snapshot, then one foreach copy from its halves."""
    sources = torch.stack((b, a))
    torch._foreach_copy_([a, b], list(sources.unbind()))
    return a, b


def select_swap(a, b):
    """Both new values selected before either store: a kernel can load both inputs first.

    The shape of a correct swap with the floor's structure (one pass, no scratch), when
    Inductor emits it so.
    """
    keep = torch.ones((), dtype=torch.bool)
    a_new = torch.where(keep, b, a)
    b_new = torch.where(keep, a, b)
    a.copy_(a_new)
    b.copy_(b_new)
    return a, b


def foreach_computed(a, b):
    """Sources computed from the destinations, with no clone: is the foreach fault about
    clones, or about any source computed from a destination?"""
    sources = torch._foreach_mul([b, a], 1.0)
    torch._foreach_copy_([a, b], sources)
    return a, b


def make_case(n: int) -> Case:
    a = torch.arange(n, dtype=torch.float32)
    b = a + 2**21
    old_a, old_b = a.clone(), b.clone()
    return Case(
        inputs={"a": a, "b": b},
        after={"a": old_b, "b": old_a},
        returns={"a": old_b, "b": old_a},
    )


SWAP = Scenario(
    name="snapshot_swap",
    controls=(
        Control("foreach_clones", foreach_clones, requires=("torch._foreach_copy_",)),
        Control("explicit_copies", explicit_copies),
        Control("stack_buffer", stack_buffer, requires=("torch._foreach_copy_",)),
        Control("select_swap", select_swap),
        Control(
            "foreach_computed",
            foreach_computed,
            requires=("torch._foreach_copy_", "torch._foreach_mul"),
        ),
    ),
    sizes=(3, 1048576),
    make_case=make_case,
    floor_operands=lambda inputs: (inputs[0], inputs[1]),
)


class _Probed:
    scenario = SWAP

    def setup_cache(self):
        # Defined here, not in asv_classes, so that both classes below share one probe run
        # (asv keys setup_cache by the module and line that define it).
        return asv_classes.probe_for_asv(self.scenario)


class Correctness(_Probed, asv_classes.Correctness):
    pass


class Cost(_Probed, asv_classes.Cost):
    pass
