"""The upstream aliasing catalogue: reported writeback faults, one entry a pattern.

Each entry names its upstream PyTorch issue, builds inputs of exactly representable FP32
values, and computes what the call must leave behind with plain eager operations on clones
taken before the call - never with the code under test. The contract checks every returned
tensor and every input (mutated or not: an input that must not change is checked unchanged),
values and storage. Where an issue names a correct spelling of the same operation, it is an
entry too (`..._control`).

Two sizes per pattern: `small` (a few elements; some faults hide behind one masked vector
operation there) and `large` (about a million elements). The count of wrong elements depends
on the machine's vector width; the verdict (zero or not) is what to compare across machines.
"""

import torch

from . import asv_classes
from .contract import Case
from .scenario import Control, Scenario

ISSUES = "https://github.com/pytorch/pytorch/issues/"
SIZES = ("small", "large")


def _values(*shape) -> torch.Tensor:
    """Distinct exact FP32 integers (well below 2**24) in the given shape."""
    count = 1
    for dim in shape:
        count *= dim
    return (torch.arange(count, dtype=torch.float32) % 4093 + 1).reshape(shape)


def _rows_cols(size: str, rows: int = 4) -> tuple[int, int]:
    return (rows, 4) if size == "small" else (rows, 262144)


def _square(size: str) -> int:
    return 4 if size == "small" else 1024


def _length(size: str) -> int:
    return 8 if size == "small" else 1048576


# --- copy_of_mutated_input (#198131) ---------------------------------------------------------


def copy_of_mutated_input(dst, src):
    dst[0:, :] = src[0:, :]
    src.add_(1)
    return src


def copy_of_mutated_input_control(dst, src):
    dst.copy_(src)
    src.add_(1)
    return src


def _copy_case(size):
    dst = _values(*_rows_cols(size)) * 0 - 1
    src = _values(*_rows_cols(size))
    old = src.clone()
    return Case(
        inputs={"dst": dst, "src": src},
        after={"dst": old, "src": old + 1},
        returns={"src": old + 1},
    )


# --- foreach_add_flip (#198033) --------------------------------------------------------------


def foreach_add_flip(x):
    torch._foreach_add_([x], [x.flip(0)])
    return x


def foreach_add_flip_control(x):
    x.add_(x.flip(0))
    return x


def _add_flip_case(size):
    x = _values(_length(size))
    old = x.clone()
    expected = old + old.flip(0)
    return Case(inputs={"x": x}, after={"x": expected}, returns={"x": expected})


# --- shift_clone (#197829) -------------------------------------------------------------------


def shift_clone(x):
    x[1:] = x[:-1].clone()
    return x


def shift_clone_back(x):
    x[:-1] = x[1:].clone()
    return x


def _shift_case(forward: bool):
    def make(size):
        x = _values(_length(size))
        old = x.clone()
        parts = [old[:1], old[:-1]] if forward else [old[1:], old[-1:]]
        expected = torch.cat(parts)
        return Case(inputs={"x": x}, after={"x": expected}, returns={"x": expected})

    return make


# --- three shapes of #198094: a scatter reinplaced into an input later overwritten -----------


def slice_scatter_then_zero(x, src):
    y = torch.slice_scatter(x, src[1:3], dim=0, start=1, end=3)
    x.zero_()
    return y


def _slice_scatter_case(size):
    x, src = _values(*_rows_cols(size)), -_values(*_rows_cols(size))
    old_x, old_src = x.clone(), src.clone()
    y = old_x.clone()
    y[1:3] = old_src[1:3]
    return Case(
        inputs={"x": x, "src": src},
        after={"x": torch.zeros_like(old_x), "src": old_src},
        returns={"y": y},
    )


def diagonal_scatter_then_fill(x):
    y = torch.diagonal_scatter(x, x.diagonal())
    x.fill_(2)
    return y


def _diagonal_case(size):
    side = _square(size)
    x = _values(side, side)
    old = x.clone()
    return Case(inputs={"x": x}, after={"x": torch.full_like(old, 2.0)}, returns={"y": old})


def index_fill_clone_clamp(x):
    x.index_fill_(0, torch.tensor([0, 2]), -5.0)
    y = x.clone()
    x.clamp_(min=0, max=10)
    return y


def _index_fill_case(size):
    x = _values(*_rows_cols(size)) % 16  # values 0..15: the clamp at 10 bites
    y = x.clone()
    y[0] = -5.0
    y[2] = -5.0
    return Case(inputs={"x": x}, after={"x": y.clamp(0, 10)}, returns={"y": y})


# --- index_put_then_add_flip (#198270) -------------------------------------------------------


def index_put_then_add_flip(x):
    x.index_put_((torch.arange(x.size(0)),), x * 2.0)
    x.add_(x.flip(0))
    return x


def _index_put_case(size):
    x = _values(_length(size))
    doubled = x.clone() * 2.0
    expected = doubled + doubled.flip(0)
    return Case(inputs={"x": x}, after={"x": expected}, returns={"x": expected})


# --- custom_op_into_clone (#198031) ----------------------------------------------------------


def _reverse_into_impl(src: torch.Tensor, dst: torch.Tensor) -> None:
    """Write src reversed into dst, one half after the other: correct only when src and dst
    do not alias (the second half reads what the first half may have overwritten)."""
    n = src.numel()
    half = n // 2
    dst[:half] = src[n - half :].flip(0)
    dst[n - half :] = src[:half].flip(0)
    if n % 2:
        dst[half] = src[half]


def _register_reverse_into():
    if not hasattr(torch.library, "custom_op"):
        return None
    return torch.library.custom_op("writeback::reverse_into", mutates_args=("dst",))(
        _reverse_into_impl
    )


_REVERSE_INTO = _register_reverse_into()


def custom_op_into_clone(x):
    y = x.clone()
    _REVERSE_INTO(y, x)
    return x * 2.0


def _custom_op_case(size):
    x = _values(_length(size))
    reversed_ = x.clone().flip(0)
    return Case(inputs={"x": x}, after={"x": reversed_}, returns={"out": reversed_ * 2.0})


# --- transpose_copy (#198280, reported on CUDA) ----------------------------------------------


def transpose_copy(x):
    x.copy_(x.transpose(-1, -2) * 1.0)
    return x


def _transpose_case(size):
    side = _square(size)
    x = _values(side, side)
    expected = x.clone().t().contiguous()
    return Case(inputs={"x": x}, after={"x": expected}, returns={"x": expected})


# --- rotate3_foreach -------------------------------------------------------------------------


def rotate3_foreach(a, b, c):
    sources = (c.clone(), a.clone(), b.clone())
    torch._foreach_copy_([a, b, c], list(sources))
    return a, b, c


def _rotate3_case(size):
    n = _length(size)
    a = _values(n)
    b, c = a + 2**21, a + 2**22
    old_a, old_b, old_c = a.clone(), b.clone(), c.clone()
    return Case(
        inputs={"a": a, "b": b, "c": c},
        after={"a": old_c, "b": old_a, "c": old_b},
        returns={"a": old_c, "b": old_a, "c": old_b},
    )


_FOREACH = ("torch._foreach_copy_",)
CATALOGUE = Scenario(
    name="aliasing",
    controls=(
        Control("copy_of_mutated_input", copy_of_mutated_input,
                make_case=_copy_case, issue=ISSUES + "198131"),
        Control("copy_of_mutated_input_control", copy_of_mutated_input_control,
                make_case=_copy_case, issue=ISSUES + "198131"),
        Control("foreach_add_flip", foreach_add_flip, requires=("torch._foreach_add_",),
                make_case=_add_flip_case, issue=ISSUES + "198033"),
        Control("foreach_add_flip_control", foreach_add_flip_control,
                make_case=_add_flip_case, issue=ISSUES + "198033"),
        Control("shift_clone", shift_clone, make_case=_shift_case(True),
                issue=ISSUES + "197829"),
        Control("shift_clone_back", shift_clone_back, make_case=_shift_case(False),
                issue=ISSUES + "197829"),
        Control("slice_scatter_then_zero", slice_scatter_then_zero,
                make_case=_slice_scatter_case, issue=ISSUES + "198094"),
        Control("diagonal_scatter_then_fill", diagonal_scatter_then_fill,
                make_case=_diagonal_case, issue=ISSUES + "198094"),
        Control("index_fill_clone_clamp", index_fill_clone_clamp,
                make_case=_index_fill_case, issue=ISSUES + "198094"),
        Control("index_put_then_add_flip", index_put_then_add_flip,
                make_case=_index_put_case, issue=ISSUES + "198270"),
        Control("custom_op_into_clone", custom_op_into_clone,
                requires=("torch.library.custom_op",), make_case=_custom_op_case,
                issue=ISSUES + "198031"),
        Control("transpose_copy", transpose_copy, make_case=_transpose_case,
                issue=ISSUES + "198280"),
        Control("rotate3_foreach", rotate3_foreach, requires=_FOREACH,
                make_case=_rotate3_case),
    ),
    sizes=SIZES,
    param_names=("pattern", "backend", "size"),
    measure_cost=False,
)  # fmt: skip


class _Probed:
    scenario = CATALOGUE

    def setup_cache(self):
        # Here, not in asv_classes: asv keys setup_cache by the module and line defining it.
        return asv_classes.probe_for_asv(self.scenario)


class Correctness(_Probed, asv_classes.Correctness):
    pass
