"""A corpus program as data: inputs, statements over named tensors, returns.

A program renders to paste-ready Python (`source`, `inputs_source`) and to a callable and
inputs made from that very text, so what is compiled is what is printed. An input is a fresh
tensor of small distinct exact integers (its base) or a view of one (transposed, strided,
`as_strided`), possibly of another input's base, so that inputs can overlap in memory
(`Program.independent` gives the same layouts in storages of their own).

Whether a program's eager meaning is defined is decided by explicit rules, never by whether
this build's eager raises, so that program `i` of a corpus is the same on every build
(`problem`, `Eager`). The rules read shapes, strides, dtypes, storage offsets and overlap off
the small tensors themselves (torch's view arithmetic, the same on every release); a statement
they accept whose eager call raises anyway is a gap in the rules and raises `RuleGap` (loud),
it is never dropped. The rules, per statement:

- every argument is defined; each op's own shape, dtype and index rules (`_RULES`): views
  within bounds (`view` only of a contiguous tensor), sources that broadcast to the destination
  without growing it, an in-place result type the destination holds (`add_` of a float into an
  int64 tensor is undefined), one dtype for indexed writes, scatters and foreach lists, index
  values in range and distinct where a duplicate would write one element twice (`index_put_`,
  `index_copy_`, `scatter_` per column), never an empty tensor;
- `as_strided` only of a tensor in an input's storage (the caller fixes that layout; an
  intermediate's storage layout is the compiler's choice), within the storage elements that
  tensor spans (eager reads the whole storage, but Inductor declines a view beyond the buffer
  it realizes for the tensor: `NotImplementedError`, a known limitation, not a fault);
- no write through a view of an `as_strided` view, nor into an `as_strided` view of a storage
  two inputs share (compile bans a mutation through a view chain with `as_strided` before its
  last view, pytorch #104505, and an input that overlaps another is a view of their common
  base there);
- no write into a tensor whose elements share memory (`expand` to more than one row, an
  overlapping `unfold` or `as_strided`); an `expand` that shares no element (size-1 dimensions
  expanded to 1) may be written, and any expanded tensor read;
- a source that overlaps its destination only exactly: the same elements in the same layout
  (offset, sizes, strides; eager itself rejects a dense source that shares the destination's
  elements in another layout), and not even so for indexed writes (`index_put_`,
  `index_copy_`, `scatter_`);
- foreach lists: destinations pairwise disjoint (views of one base allowed); sources may alias
  each other (the same tensor twice is a read twice); a source may overlap only its own
  destination, exactly: a source that another element writes would be read before or after
  that write depending on how the kernel runs the list (one element after another on the CPU,
  all at once in the fused kernels), which no eager build defines;
- every value stays within +-2**20 (exact in FP32 and int64).

A program's returns are defined tensors, each returned once, none whose elements share memory
(the oracle writes through every return). A program whose inputs overlap must be defined on
independent inputs of the same layouts too: the oracle calls it both ways.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

import torch

EXACT_LIMIT = 2**20
"""Every value a program computes stays within +-2**20: exact in FP32, far from int64 limits."""

VIEWS = {"slice", "select", "narrow", "transpose", "diagonal", "unfold", "expand", "view",
         "reshape", "as_strided"}  # fmt: skip
INPLACE = {"copy_", "add_", "mul_", "zero_", "fill_", "clamp_", "index_put_", "index_fill_",
           "index_copy_", "scatter_", "masked_fill_"}  # fmt: skip
FOREACH = {"_foreach_copy_", "_foreach_add_", "_foreach_mul_"}
INDEXED = {"index_put_", "index_copy_", "scatter_"}
"""In-place ops whose source must not overlap the destination at all (not even exactly)."""


class RuleGap(AssertionError):
    """The rules accept a statement whose eager call raised: a rule of this module is missing."""


@dataclass(frozen=True)
class Input:
    """An input tensor: a base of `start`, `start + 1`, ... in `shape`, seen through `view`.

    `view` is a chain of view ops as statements write them, `(op, params)`, applied to the
    base (empty: the input is its base). With `base`, the input is a view of that other
    input's base (which must have this `shape` and `dtype`): the inputs overlap in memory. Its
    own `start` then fills the storage it gets when the inputs are made independent.
    """

    name: str
    shape: tuple[int, ...]
    dtype: str
    start: int
    view: tuple[tuple[str, tuple], ...] = ()
    base: str | None = None

    def base_expression(self) -> str:
        numel = 1
        for size in self.shape:
            numel *= size
        shape = ", ".join(str(s) for s in self.shape)
        return f"(torch.arange({numel}, dtype=torch.{self.dtype}) + {self.start}).reshape({shape})"

    def expression(self) -> str:
        """This input in a storage of its own (for an input with `base`: its independent copy)."""
        return viewed(self.base_expression(), self.view)


def viewed(expression: str, chain: tuple[tuple[str, tuple], ...]) -> str:
    """`expression` seen through a chain of view ops (`Input.view`)."""
    for op, params in chain:
        expression = _RENDER[op]((expression,), params)
    return expression


@dataclass(frozen=True)
class Statement:
    """`out = <op>(args, params)` (views and fresh tensors) or `<op>(args, params)` in place.

    For in-place ops `args[0]` is written; foreach ops take destinations then sources.
    """

    op: str
    out: str | None
    args: tuple[str, ...]
    params: tuple = ()

    def source(self) -> str:
        expression = _RENDER[self.op](self.args, self.params)
        return f"{self.out} = {expression}" if self.out else expression

    def written(self) -> tuple[str, ...]:
        if self.op in INPLACE:
            return self.args[:1]
        if self.op == "_foreach_mul_":
            return self.args
        if self.op in FOREACH:
            return self.args[: len(self.args) // 2]
        return ()

    def sources(self) -> tuple[str, ...]:
        """Tensors read while the write happens (a masked_fill_'s mask is computed before)."""
        if self.op in INPLACE and self.op != "masked_fill_":
            return self.args[1:]
        if self.op in {"_foreach_copy_", "_foreach_add_"}:
            return self.args[len(self.args) // 2 :]
        return ()


@dataclass(frozen=True)
class Program:
    inputs: tuple[Input, ...]
    statements: tuple[Statement, ...]
    returns: tuple[str, ...]

    def source(self, name: str = "program") -> str:
        params = ", ".join(i.name for i in self.inputs)
        body = [f"    {s.source()}" for s in self.statements]
        returned = ", ".join(self.returns) + ("," if len(self.returns) == 1 else "")
        body.append(f"    return ({returned})")
        return f"def {name}({params}):\n" + "\n".join(body) + "\n"

    def inputs_source(self) -> str:
        """`def inputs():` returning fresh inputs, views of one base where `Input.base` says."""
        lines, bases = [], {}
        owners = {spec.base for spec in self.inputs if spec.base}
        for spec in self.inputs:
            if spec.base:
                lines.append(f"{spec.name} = {viewed(bases[spec.base], spec.view)}")
                continue
            if spec.name in owners and spec.view:
                bases[spec.name] = f"{spec.name}_base"
                lines.append(f"{spec.name}_base = {spec.base_expression()}")
                lines.append(f"{spec.name} = {viewed(bases[spec.name], spec.view)}")
            else:
                bases[spec.name] = spec.name
                lines.append(f"{spec.name} = {spec.expression()}")
        body = "".join(f"    {line}\n" for line in lines)
        return f"def inputs():\n{body}    return [{', '.join(i.name for i in self.inputs)}]\n"

    def function(self):
        namespace = {"torch": torch}
        exec(compile(self.source(), "<corpus program>", "exec"), namespace)
        return namespace["program"]

    def make_inputs(self) -> list[torch.Tensor]:
        namespace = {"torch": torch}
        exec(compile(self.inputs_source(), "<corpus inputs>", "exec"), namespace)
        return namespace["inputs"]()

    def overlapping_inputs(self) -> bool:
        """Whether some input is a view of another input's base."""
        return any(spec.base for spec in self.inputs)

    def independent(self) -> Program:
        """The same program on inputs of the same layouts, each in a storage of its own."""
        return replace(self, inputs=tuple(replace(spec, base=None) for spec in self.inputs))

    def hash(self) -> str:
        """The program's identity across builds: sha256 of its inputs' and its own source."""
        text = self.inputs_source() + self.source()
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def problem(program: Program) -> str | None:
    """Why the program's eager meaning is undefined or inexact, or None when it is defined."""
    if program.overlapping_inputs():
        run = Eager(program.independent().inputs)
        if reason := run.problem or run.run(program.statements):
            return f"on independent inputs: {reason}"
    run = Eager(program.inputs)
    if reason := run.problem or run.run(program.statements):
        return reason
    if len(set(program.returns)) != len(program.returns):
        return "a tensor returned twice"
    for name in program.returns:
        if reason := run.return_problem(name):
            return reason
    return None


class Eager:
    """A program's named tensors as eager leaves them, statement by statement, each checked by
    the rules before it runs. `problem` says why the inputs themselves are undefined (or None);
    `checkpoint` and `restore` take back statements the generator tries and drops."""

    def __init__(self, inputs: tuple[Input, ...]):
        self.env: dict[str, torch.Tensor] = {}
        self.problem = _inputs_problem(inputs)
        if self.problem is None:
            program = Program(inputs, (), ())
            made = _eager(program.make_inputs, program.inputs_source())
            self.env = {spec.name: tensor for spec, tensor in zip(inputs, made)}
        self.input_names = tuple(self.env)
        storages = [_storage(t) for t in self.env.values()]
        self.input_storages = set(storages)
        self.shared_storages = {s for s in storages if storages.count(s) > 1}
        self.strided: dict[str, bool] = {}
        """Tensors made by `as_strided` (False) or by views of those (True)."""

    def run(self, statements: tuple[Statement, ...] | list[Statement]) -> str | None:
        """Run each statement the rules define; stop at the first they do not, with the reason
        (that statement has not run)."""
        for statement in statements:
            if reason := self.statement_problem(statement):
                return f"{statement.source()!r}: {reason}"
            self._execute(statement)
            if any(t.abs().max().item() > EXACT_LIMIT for t in self.env.values()):
                return f"{statement.source()!r} leaves the exact range"
        return None

    def statement_problem(self, statement: Statement) -> str | None:
        """Why the rules leave `statement` undefined here, or None."""
        if missing := [a for a in statement.args if a not in self.env]:
            return f"reads undefined {', '.join(missing)}"
        tensors = [self.env[a] for a in statement.args]
        if reason := _RULES[statement.op](tensors, statement.params):
            return reason
        if statement.op == "as_strided" and _storage(tensors[0]) not in self.input_storages:
            return "as_strided of a tensor outside the inputs' storage"
        for name in statement.written():
            if reason := self._strided_write_problem(name):
                return reason
        return _write_problem(statement, self.env)

    def _strided_write_problem(self, name: str) -> str | None:
        """Why a write into `name` is outside what compile functionalizes (a mutation through a
        view chain with an `as_strided` before its last view is banned in compile, pytorch
        #104505; an input that overlaps another is regenerated from their common base, so an
        `as_strided` of it is such a chain), or None."""
        if name not in self.strided:
            return None
        if self.strided[name]:
            return f"writes {name}, a view of an as_strided view"
        if _storage(self.env[name]) in self.shared_storages:
            return f"writes {name}, an as_strided view in a storage two inputs share"
        return None

    def return_problem(self, name: str) -> str | None:
        if name not in self.env:
            return f"returns {name}, which is not defined"
        if _overlaps_itself(self.env[name]):
            return f"returns {name}, whose elements share memory"
        return None

    def in_inputs_storage(self, name: str) -> bool:
        return _storage(self.env[name]) in self.input_storages

    def span(self, name: str) -> tuple[int, int]:
        """The first and last storage element tensor `name` covers."""
        return _span(self.env[name])

    def checkpoint(self) -> tuple[set[str], list[tuple]]:
        storages = {_storage(t): t.untyped_storage() for t in self.env.values()}
        return set(self.env), [(s, s.clone()) for s in storages.values()]

    def restore(self, checkpoint: tuple[set[str], list[tuple]]) -> None:
        names, contents = checkpoint
        for storage, saved in contents:
            storage.copy_(saved)
        self.env = {name: t for name, t in self.env.items() if name in names}
        self.strided = {name: v for name, v in self.strided.items() if name in names}

    def _execute(self, statement: Statement) -> None:
        namespace = {"torch": torch, **self.env}
        _eager(lambda: exec(statement.source(), namespace), statement.source())
        if statement.out:
            self.env[statement.out] = namespace[statement.out]
        if statement.op == "as_strided":
            self.strided[statement.out] = False
        elif statement.op in VIEWS and statement.args[0] in self.strided:
            self.strided[statement.out] = True


def _eager(call, text: str):
    """`call()` (eager code the rules accept), or `RuleGap` naming `text` when it raises."""
    try:
        with torch.no_grad():
            return call()
    except Exception as exc:
        raise RuleGap(
            f"the rules accept {text!r} but eager raised {exc!r}: a rule of "
            "benchmarks/corpus/program.py is missing"
        ) from exc


def _inputs_problem(inputs: tuple[Input, ...]) -> str | None:
    """Why the inputs are undefined (a view chain the rules reject, a base that is not an
    earlier input's of the same shape and dtype), or None."""
    owners: dict[str, Input] = {}
    for spec in inputs:
        owner = owners.get(spec.base) if spec.base else spec
        if owner is None or (owner.shape, owner.dtype) != (spec.shape, spec.dtype):
            return f"input {spec.name} views {spec.base}, which is no earlier input's base like it"
        tensor = torch.zeros(spec.shape, dtype=getattr(torch, spec.dtype))
        for op, params in spec.view:
            if op not in VIEWS or (reason := _RULES[op]([tensor], params)):
                return f"input {spec.name}: {op} {params}: {reason or 'not a view'}"
            text = _RENDER[op](("tensor",), params)
            tensor = _eager(lambda: eval(text, {"torch": torch, "tensor": tensor}), text)  # noqa: B023
        if not spec.base:
            owners[spec.name] = spec
    return None


def _write_problem(statement: Statement, env: dict) -> str | None:
    written, sources = statement.written(), statement.sources()
    for name in written:
        if _overlaps_itself(env[name]):
            return f"writes into {name}, whose elements share memory"
    for position, dest in enumerate(written):
        for other in written[position + 1 :]:
            if _overlap(env[dest], env[other]) != "disjoint":
                return f"writes {dest} and {other}, which overlap"
        for index, source in enumerate(sources):
            own = statement.op in FOREACH and index == position or statement.op in INPLACE
            overlap = _overlap(env[dest], env[source])
            exact_allowed = own and statement.op not in INDEXED
            if overlap == "partial" or (overlap == "identical" and not exact_allowed):
                return f"{source} overlaps {dest}, which it is written into"
    return None


def _storage(tensor: torch.Tensor) -> int:
    return tensor.untyped_storage().data_ptr()


def _offsets(tensor: torch.Tensor) -> torch.Tensor:
    """The storage element each element of `tensor` reads or writes."""
    elements = tensor.untyped_storage().nbytes() // tensor.element_size()
    offsets = torch.arange(elements).as_strided(
        tensor.shape, tensor.stride(), tensor.storage_offset()
    )
    return offsets.reshape(-1)


def _overlaps_itself(tensor: torch.Tensor) -> bool:
    offsets = _offsets(tensor)
    return offsets.unique().numel() != offsets.numel()


def _overlap(dest: torch.Tensor, source: torch.Tensor) -> str:
    """`identical` (the same elements in the same layout: offset, sizes and strides), `partial`
    (some shared element otherwise, broadcast or not) or `disjoint`."""
    if _storage(dest) != _storage(source) or dest.element_size() != source.element_size():
        return "disjoint"
    if _layout(dest) == _layout(source):
        return "identical"
    return "partial" if torch.isin(_offsets(source), _offsets(dest)).any() else "disjoint"


def _layout(tensor: torch.Tensor) -> tuple:
    return tensor.storage_offset(), tuple(tensor.shape), tensor.stride()


# The rules of each op: (argument tensors, params) -> why undefined, or None.


def _broadcasts(source: tuple, target: tuple) -> bool:
    """`source` broadcasts to `target` without growing it (a source of an in-place op)."""
    return len(source) <= len(target) and all(
        s in (1, t) for s, t in zip(reversed(source), reversed(target))
    )


def _dim_problem(t: torch.Tensor, dim: int) -> str | None:
    return None if 0 <= dim < t.dim() else f"no dimension {dim} in {tuple(t.shape)}"


def _range_problem(t: torch.Tensor, dim: int, start: int, stop: int) -> str | None:
    if reason := _dim_problem(t, dim):
        return reason
    return None if 0 <= start < stop <= t.shape[dim] else f"[{start}:{stop}] leaves dim {dim}"


def _sizes_problem(sizes: tuple, numel: int) -> str | None:
    """Why `sizes` (one -1 allowed) cannot hold `numel` elements, or None."""
    known = 1
    for size in sizes:
        known *= size if size != -1 else 1
    if sizes.count(-1) > 1 or any(s == 0 or s < -1 for s in sizes):
        return f"sizes {sizes}"
    fits = numel % known == 0 if -1 in sizes else known == numel
    return None if fits else f"sizes {sizes} do not hold {numel} elements"


def _contiguous(t: torch.Tensor) -> bool:
    expected = 1
    for size, stride in reversed(list(zip(t.shape, t.stride()))):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def _slice_rule(ts, p):
    dim, start, stop, *step = p
    return _range_problem(ts[0], dim, start, stop) or (
        "step below 1" if step and step[0] < 1 else None
    )


def _select_rule(ts, p):
    return _range_problem(ts[0], p[0], p[1], p[1] + 1)


def _narrow_rule(ts, p):
    return _range_problem(ts[0], p[0], p[1], p[1] + p[2])


def _two_dims_rule(ts, p):
    return None if ts[0].dim() >= 2 else f"{ts[0].dim()} dimensions, not 2"


def _unfold_rule(ts, p):
    dim, size, step = p
    return _range_problem(ts[0], dim, 0, size) or ("step below 1" if step < 1 else None)


def _expand_rule(ts, p):
    shape = tuple(ts[0].shape)
    new = len(p) - len(shape)
    if new < 0 or any(s < 1 for s in p[:new]):
        return f"expand{p} of {shape}"
    if any(s != -1 and s != size and (size != 1 or s < 1) for s, size in zip(p[new:], shape)):
        return f"expand{p} of {shape}"
    return None


def _view_rule(ts, p):
    if not _contiguous(ts[0]):
        return "view of a non-contiguous tensor"
    return _sizes_problem(p, ts[0].numel())


def _reshape_rule(ts, p):
    return _sizes_problem(p, ts[0].numel())


def _as_strided_rule(ts, p):
    sizes, strides, offset = p
    if len(sizes) != len(strides) or min(sizes, default=1) < 1 or min(strides, default=0) < 0:
        return f"as_strided{p}"
    last = offset + sum((size - 1) * stride for size, stride in zip(sizes, strides))
    first, end = _span(ts[0])
    return None if first <= offset and last <= end else f"as_strided{p} leaves {first}..{end}"


def _span(tensor: torch.Tensor) -> tuple[int, int]:
    """The first and last storage element `tensor` covers."""
    last = sum((size - 1) * stride for size, stride in zip(tensor.shape, tensor.stride()))
    return tensor.storage_offset(), tensor.storage_offset() + last


def _flip_rule(ts, p):
    return _dim_problem(ts[0], p[0])


def _always(ts, p):
    return None


def _same_dtype(ts) -> str | None:
    dtypes = {t.dtype for t in ts}
    return None if len(dtypes) == 1 else f"dtypes {sorted(str(d) for d in dtypes)}"


def _broadcast_problem(source: tuple, dest: tuple) -> str | None:
    return None if _broadcasts(source, dest) else f"{source} does not broadcast to {dest}"


def _copy_rule(ts, p):
    return _broadcast_problem(tuple(ts[1].shape), tuple(ts[0].shape))


def _add_rule(ts, p):
    if len(ts) == 1:
        return None
    if not ts[0].is_floating_point() and ts[1].is_floating_point():
        return "adds a float tensor into an integer one"
    return _broadcast_problem(tuple(ts[1].shape), tuple(ts[0].shape))


def _rows_problem(dest: torch.Tensor, rows, distinct: bool) -> str | None:
    if dest.dim() == 0:
        return "indexes a 0-dim tensor"
    if not rows or not all(0 <= r < dest.shape[0] for r in rows):
        return f"rows {rows} outside {dest.shape[0]}"
    return "a row twice" if distinct and len(set(rows)) != len(rows) else None


def _index_put_rule(ts, p):
    dest, source = ts
    rows = _rows_problem(dest, p[0], distinct=True)
    target = (len(p[0]), *dest.shape[1:])
    return rows or _same_dtype(ts) or _broadcast_problem(tuple(source.shape), target)


def _index_fill_rule(ts, p):
    return _rows_problem(ts[0], p[0], distinct=False)


def _index_copy_rule(ts, p):
    dest, source = ts
    rows = _rows_problem(dest, p[0], distinct=True)
    fits = tuple(source.shape) == (len(p[0]), *dest.shape[1:])
    return rows or _same_dtype(ts) or (None if fits else "source rows do not fit")


def _scatter_rule(ts, p):
    dest, source = ts
    index = torch.tensor(p[0])
    if not index.dim() == dest.dim() == source.dim() or index.numel() == 0:
        return "index, source and destination differ in dimensions"
    if any(i > s for i, s in zip(index.shape, source.shape)):
        return "index larger than the source"
    if any(i > d for i, d in zip(index.shape[1:], dest.shape[1:])):
        return "index larger than the destination"
    if index.min() < 0 or index.max() >= dest.shape[0]:
        return "index values outside the destination"
    columns = index.reshape(index.shape[0], -1).t().tolist()
    if any(len(set(column)) != len(column) for column in columns):
        return "one destination element written twice"
    return _same_dtype(ts)


def _masked_fill_rule(ts, p):
    return _broadcast_problem(tuple(ts[1].shape), tuple(ts[0].shape))


def _slice_scatter_rule(ts, p):
    x, source = ts
    if reason := _range_problem(x, *p) or _same_dtype(ts):
        return reason
    dim, start, stop = p
    fits = tuple(source.shape) == (*x.shape[:dim], stop - start, *x.shape[dim + 1 :])
    return None if fits else "source does not fit the slice"


def _select_scatter_rule(ts, p):
    x, source = ts
    if reason := _select_rule(ts, p) or _same_dtype(ts):
        return reason
    fits = tuple(source.shape) == tuple(s for k, s in enumerate(x.shape) if k != p[0])
    return None if fits else "source does not fit the selection"


def _diagonal_scatter_rule(ts, p):
    x, source = ts
    if reason := _two_dims_rule(ts, p) or _same_dtype(ts):
        return reason
    fits = tuple(source.shape) == (*x.shape[2:], min(x.shape[:2]))
    return None if fits else "source does not fit the diagonal"


def _foreach_pairs_rule(ts, p):
    half = len(ts) // 2
    if len(ts) % 2 or not ts:
        return "unpaired foreach lists"
    for dest, source in zip(ts[:half], ts[half:]):
        if dest.shape != source.shape or dest.dtype != source.dtype:
            return "a foreach pair of different shapes or dtypes"
    return None


def _foreach_mul_rule(ts, p):
    return None if ts else "an empty foreach list"


_RULES = {
    "slice": _slice_rule,
    "select": _select_rule,
    "narrow": _narrow_rule,
    "transpose": _two_dims_rule,
    "diagonal": _two_dims_rule,
    "unfold": _unfold_rule,
    "expand": _expand_rule,
    "view": _view_rule,
    "reshape": _reshape_rule,
    "as_strided": _as_strided_rule,
    "clone": _always,
    "mul": _always,
    "add": _always,
    "sub": _always,
    "flip": _flip_rule,
    "slice_scatter": _slice_scatter_rule,
    "select_scatter": _select_scatter_rule,
    "diagonal_scatter": _diagonal_scatter_rule,
    "copy_": _copy_rule,
    "add_": _add_rule,
    "mul_": _always,
    "zero_": _always,
    "fill_": _always,
    "clamp_": _always,
    "index_put_": _index_put_rule,
    "index_fill_": _index_fill_rule,
    "index_copy_": _index_copy_rule,
    "scatter_": _scatter_rule,
    "masked_fill_": _masked_fill_rule,
    "_foreach_copy_": _foreach_pairs_rule,
    "_foreach_add_": _foreach_pairs_rule,
    "_foreach_mul_": _foreach_mul_rule,
}


def _slice(args, params) -> str:
    dim, start, stop, *step = params
    return f"{args[0]}[{':, ' * dim}{start}:{stop}{''.join(f':{s}' for s in step)}]"


def _foreach(op):
    def render(args, params) -> str:
        half = len(args) // 2
        return f"torch.{op}([{', '.join(args[:half])}], [{', '.join(args[half:])}])"

    return render


def _sizes(params) -> str:
    return ", ".join(str(p) for p in params)


_RENDER = {
    "slice": _slice,
    "select": lambda a, p: f"{a[0]}.select({p[0]}, {p[1]})",
    "narrow": lambda a, p: f"{a[0]}.narrow({p[0]}, {p[1]}, {p[2]})",
    "transpose": lambda a, p: f"{a[0]}.transpose(0, 1)",
    "diagonal": lambda a, p: f"{a[0]}.diagonal()",
    "unfold": lambda a, p: f"{a[0]}.unfold({p[0]}, {p[1]}, {p[2]})",
    "expand": lambda a, p: f"{a[0]}.expand({_sizes(p)})",
    "view": lambda a, p: f"{a[0]}.view({_sizes(p)})",
    "reshape": lambda a, p: f"{a[0]}.reshape({_sizes(p)})",
    "as_strided": lambda a, p: f"{a[0]}.as_strided({p[0]}, {p[1]}, {p[2]})",
    "clone": lambda a, p: f"{a[0]}.clone()",
    "mul": lambda a, p: f"{a[0]} * {p[0]}",
    "add": lambda a, p: f"{a[0]} + {p[0]}",
    "sub": lambda a, p: f"{a[0]} - {p[0]}",
    "flip": lambda a, p: f"{a[0]}.flip({p[0]})",
    "slice_scatter": lambda a, p: (
        f"torch.slice_scatter({a[0]}, {a[1]}, dim={p[0]}, start={p[1]}, end={p[2]})"
    ),
    "select_scatter": lambda a, p: f"torch.select_scatter({a[0]}, {a[1]}, {p[0]}, {p[1]})",
    "diagonal_scatter": lambda a, p: f"torch.diagonal_scatter({a[0]}, {a[1]})",
    "copy_": lambda a, p: f"{a[0]}.copy_({a[1]})",
    "add_": lambda a, p: f"{a[0]}.add_({a[1] if len(a) > 1 else p[0]})",
    "mul_": lambda a, p: f"{a[0]}.mul_({p[0]})",
    "zero_": lambda a, p: f"{a[0]}.zero_()",
    "fill_": lambda a, p: f"{a[0]}.fill_({p[0]})",
    "clamp_": lambda a, p: f"{a[0]}.clamp_({p[0]}, {p[1]})",
    "index_put_": lambda a, p: f"{a[0]}.index_put_((torch.tensor({list(p[0])}),), {a[1]})",
    "index_fill_": lambda a, p: f"{a[0]}.index_fill_(0, torch.tensor({list(p[0])}), {p[1]})",
    "index_copy_": lambda a, p: f"{a[0]}.index_copy_(0, torch.tensor({list(p[0])}), {a[1]})",
    "scatter_": lambda a, p: f"{a[0]}.scatter_(0, torch.tensor({p[0]}), {a[1]})",
    "masked_fill_": lambda a, p: f"{a[0]}.masked_fill_({a[1]} > {p[0]}, {p[1]})",
    "_foreach_copy_": _foreach("_foreach_copy_"),
    "_foreach_add_": _foreach("_foreach_add_"),
    "_foreach_mul_": lambda a, p: f"torch._foreach_mul_([{', '.join(a)}], {p[0]})",
}
