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
PULLS = "https://github.com/pytorch/pytorch/pull/"
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


def _custom_op(name: str, mutates_args: tuple[str, ...], fake=None):
    """Register `writeback::<name>`; None where this torch has no `torch.library.custom_op`."""
    if not hasattr(torch.library, "custom_op"):
        return lambda impl: None

    def register(impl):
        op = torch.library.custom_op(f"writeback::{name}", mutates_args=mutates_args)(impl)
        if fake is not None:
            op.register_fake(fake)
        return op

    return register


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


_REVERSE_INTO = _custom_op("reverse_into", ("dst",))(_reverse_into_impl)


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


# --- dtype_view_then_mutate (#198101) -----------------------------------------------------


def dtype_view_then_mutate(x):
    y = x.view(torch.int32) * 2
    y.sub_(-4)
    x[:, 2:5] = 2
    return y.view(torch.int64)


def _dtype_view_case(size):
    rows = 4 if size == "small" else 131072
    x = torch.arange(rows * 8, dtype=torch.int64).reshape(rows, 8) - rows * 4
    old = x.clone()
    doubled = old.view(torch.int32) * 2 + 4
    after = old.clone()
    after[:, 2:5] = 2
    return Case(inputs={"x": x}, after={"x": after}, returns={"y": doubled.view(torch.int64)})


# --- unfold_gap_add (#198102) --------------------------------------------------------------


def unfold_gap_add(x):
    v = x.unfold(1, 1, 5)  # windows of one column, step 5: columns 0 and 5 only
    v.add_(v)
    return x


def _unfold_gap_case(size):
    rows = 4 if size == "small" else 174763
    x = torch.arange(rows * 6, dtype=torch.int64).reshape(rows, 6) % 4093 + 1
    after = x.clone()
    after[:, 0] *= 2
    after[:, 5] *= 2
    return Case(inputs={"x": x}, after={"x": after}, returns={"x": after})


# --- aliased_input_view_return (#198095) ---------------------------------------------------


def aliased_input_view_return(t0, ta):
    t0.add_(100)
    return ta[0]


def aliased_input_view_return_control(t0, ta):
    t0.add_(100)
    return t0[1]


def _aliased_input_case(size):
    base = _values(*_rows_cols(size)).clone()  # a tensor of its own (not a view), as reported
    after = base.clone() + 100
    return Case(
        inputs={"t0": base, "ta": base[1:]},
        after={"t0": after, "ta": after[1:]},
        returns={"row": after[1]},
    )


# --- values right, aliasing wrong: #197893 and #195451 --------------------------------------


def add_zero_output(x):
    """#197893: `x + 0` as a graph output comes back as `x` itself, so a later in-place update
    of the result changes the input. The values are right: only an output alias probe (a write
    through the returned tensor, then the input compared) can see this fault."""
    return x + 0


def _add_zero_case(size):
    x = _values(_length(size))
    old = x.clone()
    return Case(inputs={"x": x}, after={"x": old}, returns={"y": old})


def scatter_copy_back_output(x, src):
    """#195451: the returned scatter result aliases `x` when compiled, a fresh tensor in eager.
    The values are right: only an output alias probe can see this fault."""
    updated = torch.slice_scatter(x, src, 0, 0, 1)
    x.copy_(updated)
    return updated


def _scatter_copy_back_case(size):
    x, src = _values(_length(size)), -_values(1)
    after = x.clone()
    after[0] = src[0]
    return Case(
        inputs={"x": x, "src": src},
        after={"x": after, "src": src.clone()},
        returns={"updated": after.clone()},
    )


# --- dropout_identity_add (#195422) --------------------------------------------------------


def dropout_identity_add(x):
    y = torch.nn.functional.dropout(x, 0.5, False)  # training=False: y is x itself
    y += y
    return y


def dropout_identity_add_control(x):
    y = x
    y += y
    return y


def _doubled_case(size):
    x = _values(_length(size))
    doubled = x.clone() * 2
    return Case(inputs={"x": x}, after={"x": doubled}, returns={"y": doubled})


# --- custom ops: #197489 and #153389 -------------------------------------------------------


@_custom_op("storage_offset_of", (), fake=lambda x: torch.empty((), dtype=torch.int64))
def _storage_offset_of(x: torch.Tensor) -> torch.Tensor:
    return torch.tensor(x.storage_offset(), dtype=torch.int64)


def clone_storage_offset(x):
    """#197489: the clone of an offset slice has storage offset 0; removed as a no-op, the op
    sees the slice's offset 1."""
    return _storage_offset_of(x[1:].clone())


def _storage_offset_case(size):
    x = _values(_length(size))
    return Case(
        inputs={"x": x},
        after={"x": x.clone()},
        returns={"offset": torch.tensor(0, dtype=torch.int64)},
    )


@_custom_op("add_one_add_two", ("x1", "x2"))
def _add_one_add_two(x1: torch.Tensor, x2: torch.Tensor) -> None:
    x1.add_(1)
    x2.add_(2)


@_custom_op("sum_plus_two_into", ("out",))
def _sum_plus_two_into(x1_0: torch.Tensor, x2_0: torch.Tensor, out: torch.Tensor) -> None:
    out.copy_(x1_0 + x2_0 + 2)


def custom_ops_on_rows_of_one_base(x1, x2, out):
    """#153389: two mutable custom ops on inputs that are rows of one tensor."""
    _add_one_add_two(x1, x2)
    _sum_plus_two_into(x1[0], x2[0], out)
    return out


def _custom_rows_case(size):
    base = _values(*_rows_cols(size, rows=3))
    out = torch.zeros_like(base)
    new_x1, new_x2 = base[0].clone() + 1, base[1].clone() + 2
    expected_out = torch.full_like(out, float(new_x1[0] + new_x2[0] + 2))
    return Case(
        inputs={"x1": base[0], "x2": base[1], "out": out},
        after={"x1": new_x1, "x2": new_x2, "out": expected_out},
        returns={"out": expected_out},
    )


# --- index_add_on_expand (#183986, reported on CUDA) ---------------------------------------


def index_add_on_expand(src, idx):
    """#183986 (reported on CUDA, run here on the CPU): a functional `index_add` on an expanded
    (stride-0) tensor, reinplaced into the shared row."""
    x = torch.zeros(1, src.size(1)).expand(4, -1)
    return x.index_add(0, idx, src)


def _index_add_expand_case(size):
    src = _values(*_rows_cols(size, rows=3))
    idx = torch.tensor([0, 1, 0])
    expected = torch.zeros(4, src.size(1))
    expected[0] = src[0] + src[2]
    expected[1] = src[1]
    return Case(
        inputs={"src": src, "idx": idx},
        after={"src": src.clone(), "idx": idx.clone()},
        returns={"out": expected},
    )


# --- size-1 scatter then gather: #191571 and #171493 (both reported on CUDA) ---------------


def scatter_add_then_gather(x, idx):
    """#191571 (reported on CUDA, exact on the CPU there): a size-1 `scatter_add_` target
    gathered from in the same graph."""
    res = torch.zeros(1, x.shape[1], dtype=x.dtype)
    res.scatter_add_(0, idx.unsqueeze(-1).expand(-1, x.shape[1]), x)
    return torch.index_select(res, 0, idx)


def _scatter_gather_case(size):
    rows = 8 if size == "small" else 262144
    x = torch.arange(rows * 4, dtype=torch.float32).reshape(rows, 4) % 31  # sums stay exact
    idx = torch.zeros(rows, dtype=torch.int64)
    total = x.clone().sum(0, keepdim=True)
    return Case(
        inputs={"x": x, "idx": idx},
        after={"x": x.clone(), "idx": idx.clone()},
        returns={"gathered": total.expand(rows, -1).clone()},
    )


def index_add_then_gather(f, batch):
    """#171493 (reported on CUDA), with exact constants: `f ** 2 + 1` for `f ** 2 + 0.0098...`,
    `+ 2` for `+ 1e-6`, and one batch row for `batch.max() + 1` (the report's batch is all
    zeros; a data-dependent size cannot compile with fullgraph=True)."""
    f_u = f**2 + 1
    per_batch = torch.zeros((1, f.shape[1]), dtype=f.dtype)
    per_batch.index_add_(0, batch, f_u)
    per_node = per_batch[batch] + 2
    return f_u / per_node


def _index_add_gather_case(size):
    nodes = 7 if size == "small" else 1048575  # nodes + 1 a power of two: 1 / (nodes + 1) exact
    f = torch.ones(nodes, 1)
    batch = torch.zeros(nodes, dtype=torch.int64)
    return Case(
        inputs={"f": f, "batch": batch},
        after={"f": f.clone(), "batch": batch.clone()},
        returns={"scaled": torch.full((nodes, 1), 1.0 / (nodes + 1))},
    )


# --- vmap_grad_index_put_expand (#188084) --------------------------------------------------


def vmap_grad_index_put_expand(X):
    """#188084: the backward of `index_select` over a stacked row is an `index_put` with
    accumulate into an expanded view; reinplaced, every gradient row collects the batch."""
    idx = torch.tensor([0, 2])
    w = torch.tensor([1.0, -1.0])

    def row(x):
        stacked = torch.stack([x[..., k] for k in range(4)], dim=-1)
        return (torch.index_select(stacked, -1, idx) * w).sum(-1).reshape(())

    return torch.func.vmap(torch.func.grad_and_value(row))(X)


def _vmap_grad_case(size):
    X = _values(*_rows_cols(size, rows=4)).t().contiguous()  # rows x 4
    gradient = torch.tensor([1.0, 0.0, -1.0, 0.0]).expand(X.size(0), -1).clone()
    return Case(
        inputs={"X": X},
        after={"X": X.clone()},
        returns={"grad": gradient, "value": X[:, 0] - X[:, 2]},
    )


# --- dtype_view_custom_op_diagonal_scatter (#197408) ----------------------------------------


@_custom_op("copy_into", ("dst",))
def _copy_into(dst: torch.Tensor, src: torch.Tensor) -> None:
    dst.copy_(src)


def dtype_view_custom_op_diagonal_scatter(cache, data, diag):
    """#197408: a mutable custom op writes through a float32 view of an int32 input; the
    diagonal scatter of that view is copied back into the input and returned. Eager returns a
    fresh tensor; compiled, the scatter is reinplaced into the input."""
    view = cache.view(torch.float32)
    _copy_into(view, data)
    updated = torch.diagonal_scatter(view, diag)
    cache.copy_(updated.view(torch.int32))
    return updated


def _dtype_view_scatter_case(size):
    side = _square(size)
    cache = torch.zeros(side, side, dtype=torch.int32)
    data, diag = _values(side, side), -_values(side)
    updated = data.clone()
    updated.diagonal().copy_(diag)
    return Case(
        inputs={"cache": cache, "data": data, "diag": diag},
        after={"cache": updated.clone().view(torch.int32), "data": data.clone(),
               "diag": diag.clone()},
        returns={"updated": updated},
    )  # fmt: skip


# --- custom_op_same_tensor_twice (#196657, a CPU analogue) ---------------------------------


@_custom_op("one_then_add_two", ("out0", "out1"))
def _one_then_add_two(out0: torch.Tensor, out1: torch.Tensor) -> None:
    out0.fill_(1.0)
    out1.add_(2.0)


def custom_op_same_tensor_twice(x):
    """#196657 (reported for a user Triton kernel on a GPU): one tensor passed as two mutated
    arguments must stay one tensor, so the second write sees the first. The report's fault is
    in the Triton kernel wrapper's functionalization, which clones each mutated argument on its
    own; a Triton kernel needs a GPU, so this entry passes the tensor twice to a mutable
    `torch.library` op instead (functionalized by `auto_functionalized`, another path)."""
    _one_then_add_two(x, x)
    return x


def _same_tensor_twice_case(size):
    x = _values(_length(size))
    expected = torch.full_like(x, 3.0)
    return Case(inputs={"x": x}, after={"x": expected}, returns={"x": expected})


# --- noop_view_resize_across_break (#191449) -----------------------------------------------


def noop_view_resize_across_break(x):
    """#191449: a no-op view returned from a graph beside its base must stay its own tensor;
    `resize_` on it graph-breaks, runs in eager between two compiled graphs, and must leave the
    base's shape alone. Compiled without fullgraph (`Control.fullgraph`): the fault is at the
    boundary between the graphs. The view shrinks, so no element is left uninitialized."""
    base = x + 1
    alias = base.view(-1)
    alias.resize_(1)
    return base + 1


def _noop_view_resize_case(size):
    x = _values(_length(size))
    return Case(inputs={"x": x}, after={"x": x.clone()}, returns={"out": x.clone() + 2})


_FOREACH = ("torch._foreach_copy_",)
_CUSTOM_OP = ("torch.library.custom_op",)
CATALOGUE = Scenario(
    name="aliasing",
    controls=(
        Control("copy_of_mutated_input", copy_of_mutated_input,
                make_case=_copy_case, issue=ISSUES + "198131",
                fix=PULLS + "198132"),
        Control("copy_of_mutated_input_control", copy_of_mutated_input_control,
                make_case=_copy_case, issue=ISSUES + "198131",
                fix=PULLS + "198132"),
        Control("foreach_add_flip", foreach_add_flip, requires=("torch._foreach_add_",),
                make_case=_add_flip_case, issue=ISSUES + "198033",
                fix=PULLS + "198242"),
        Control("foreach_add_flip_control", foreach_add_flip_control,
                make_case=_add_flip_case, issue=ISSUES + "198033",
                fix=PULLS + "198242"),
        Control("shift_clone", shift_clone, make_case=_shift_case(True),
                issue=ISSUES + "197829"),
        Control("shift_clone_back", shift_clone_back, make_case=_shift_case(False),
                issue=ISSUES + "197829"),
        Control("slice_scatter_then_zero", slice_scatter_then_zero,
                make_case=_slice_scatter_case, issue=ISSUES + "198094",
                fix=PULLS + "198096"),
        Control("diagonal_scatter_then_fill", diagonal_scatter_then_fill,
                make_case=_diagonal_case, issue=ISSUES + "198094",
                fix=PULLS + "198096"),
        Control("index_fill_clone_clamp", index_fill_clone_clamp,
                make_case=_index_fill_case, issue=ISSUES + "198094",
                fix=PULLS + "198096"),
        Control("index_put_then_add_flip", index_put_then_add_flip,
                make_case=_index_put_case, issue=ISSUES + "198270"),
        Control("custom_op_into_clone", custom_op_into_clone,
                requires=_CUSTOM_OP, make_case=_custom_op_case,
                issue=ISSUES + "198031"),
        Control("transpose_copy", transpose_copy, make_case=_transpose_case,
                issue=ISSUES + "198280"),
        Control("rotate3_foreach", rotate3_foreach, requires=_FOREACH,
                make_case=_rotate3_case),
        Control("dtype_view_then_mutate", dtype_view_then_mutate, make_case=_dtype_view_case,
                issue=ISSUES + "198101", fix=PULLS + "198104"),
        Control("unfold_gap_add", unfold_gap_add, make_case=_unfold_gap_case,
                issue=ISSUES + "198102", fix=PULLS + "198105"),
        Control("aliased_input_view_return", aliased_input_view_return,
                make_case=_aliased_input_case, issue=ISSUES + "198095", fix=PULLS + "198097"),
        Control("aliased_input_view_return_control", aliased_input_view_return_control,
                make_case=_aliased_input_case, issue=ISSUES + "198095", fix=PULLS + "198097"),
        Control("add_zero_output", add_zero_output, make_case=_add_zero_case,
                issue=ISSUES + "197893"),
        Control("scatter_copy_back_output", scatter_copy_back_output,
                make_case=_scatter_copy_back_case, issue=ISSUES + "195451",
                fix=PULLS + "195484"),
        Control("dropout_identity_add", dropout_identity_add, make_case=_doubled_case,
                issue=ISSUES + "195422"),
        Control("dropout_identity_add_control", dropout_identity_add_control,
                make_case=_doubled_case, issue=ISSUES + "195422"),
        Control("clone_storage_offset", clone_storage_offset, requires=_CUSTOM_OP,
                make_case=_storage_offset_case, issue=ISSUES + "197489"),
        Control("custom_ops_on_rows_of_one_base", custom_ops_on_rows_of_one_base,
                requires=_CUSTOM_OP, make_case=_custom_rows_case, issue=ISSUES + "153389"),
        Control("index_add_on_expand", index_add_on_expand, make_case=_index_add_expand_case,
                issue=ISSUES + "183986", fix=PULLS + "184488"),
        Control("scatter_add_then_gather", scatter_add_then_gather,
                make_case=_scatter_gather_case, issue=ISSUES + "191571"),
        Control("index_add_then_gather", index_add_then_gather,
                make_case=_index_add_gather_case, issue=ISSUES + "171493"),
        Control("vmap_grad_index_put_expand", vmap_grad_index_put_expand,
                requires=("torch.func.vmap", "torch.func.grad_and_value"),
                make_case=_vmap_grad_case, issue=ISSUES + "188084"),
        Control("dtype_view_custom_op_diagonal_scatter", dtype_view_custom_op_diagonal_scatter,
                requires=_CUSTOM_OP, make_case=_dtype_view_scatter_case,
                issue=ISSUES + "197408"),
        Control("custom_op_same_tensor_twice", custom_op_same_tensor_twice,
                requires=_CUSTOM_OP, make_case=_same_tensor_twice_case,
                issue=ISSUES + "196657"),
        Control("noop_view_resize_across_break", noop_view_resize_across_break,
                make_case=_noop_view_resize_case, issue=ISSUES + "191449",
                fix=PULLS + "191844", fullgraph=False),
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
