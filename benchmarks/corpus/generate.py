"""The generator: program `index` of corpus `seed` is a pure function of (seed, index) and
`GRAMMAR_VERSION`, never of the installed torch.

Each program takes 2-3 inputs of small distinct exact integers (FP32, sometimes one int64),
then 3-8 statements drawn by kind (`KINDS`, weighted), and returns 1-3 of its tensors. A drawn
statement, or a drawn idiom of a few statements, is kept only when the rules of `program.py`
define it on every way the oracle calls the program (`program.Eager`): the rules read shapes,
strides, dtypes and overlap, never whether this build's eager raises, and a statement they
accept that eager rejects anyway raises `program.RuleGap` instead of being dropped.

Inputs (`_inputs`):

- layouts: most inputs are contiguous; some are transposed (`base.transpose(0, 1)`), strided
  (`base[:, 0:2w:2]`), offset (`base[1:h + 1]`) or an `as_strided` column-major or gapped view
  of a flat base, so ops meet non-contiguous inputs and raw strides and offsets;
- overlapping inputs (`OVERLAP` of the programs): the second input is a view of the first's
  base: the base itself (the very same tensor when the first input is its base), its
  transpose, rows shifted by one or two, the other half of a base split in two (same storage,
  no shared element), every other row, or (1-D) an `unfold` whose windows may overlap (read
  freely; the rules forbid writing a tensor whose elements share memory). The oracle then also
  calls the compiled function on independent inputs of the same layouts
  (`Program.independent`), so the rules must define the program both ways.

Kinds of drawn statements:

- `view`: slicing (every other element sometimes), `select`, `narrow`, `transpose`,
  `diagonal`, `unfold`, `expand`, `view`/`reshape`. `expand` makes new or size-1 dimensions 1,
  2 or 3 long: one long shares no element and may be written, longer ones only read;
- `strided`: `as_strided` of a tensor in an input's storage, rows or columns with gaps (may be
  written), sliding windows (elements shared: read only) or a flat stride, at an absolute
  storage offset, within the storage elements that tensor spans;
- `clone`; `computed` (`x * k`, `x + k`, `x - k`, `flip`); `noop`: `x + 0`, `x * 1`, `x - 0`
  (half of them of an input), whose eager result is a new tensor: a compiled call that returns
  the input itself is wrong in the output alias probe;
- `inplace`: `copy_`, `add_`, `mul_`, `zero_`, `fill_`, `clamp_`, `index_put_`, `index_fill_`,
  `index_copy_`, `scatter_`, `masked_fill_`, with sources that fit the destination;
- `scatter`: a functional `slice_scatter`, `select_scatter` or `diagonal_scatter`;
- `scatter_back`: the idiom `s = y[...]; t = torch.slice_scatter(x, s, ...); x.copy_(t)` (also
  `select` and `diagonal`), `y` of `x`'s shape (often `x` itself), sometimes with `s` scaled
  first: a scatter result written back into its source;
- `foreach`: `torch._foreach_copy_`, `_foreach_add_` (lists) and `_foreach_mul_` (a scalar)
  over tensors drawn from the program (a source may repeat), over the two halves of one tensor
  (views of one base in one list), or over tensors of one shape and dtype (mostly inputs
  only) with sources computed for the occasion: mostly a clone, `* 1` or `+ 0` of the
  next destination in the list (for two: the swap of the snapshot scenario), else a flip or
  `* 2` of the destination itself (`_foreach_add_([x], [x.flip(0)])`).
"""

from __future__ import annotations

import itertools
import random

import torch

from .program import Eager, Input, Program, RuleGap, Statement

GRAMMAR_VERSION = 2
"""The grammar's version: program `i` of corpus `seedS` is a function of (S, i) and it. Any change
to this module or to how `program.py` renders or judges programs that makes some (S, i) generate
another program must bump it (`tests/test_corpus_grammar.py` pins some programs' hashes per
version)."""

SHAPES = ((4, 4), (5, 5), (6, 6), (4, 6), (6, 4), (8, 8))
LENGTHS = (12, 20, 33)
KINDS = (("view", 5), ("strided", 1), ("clone", 3), ("computed", 2), ("noop", 2),
         ("inplace", 6), ("scatter", 1), ("scatter_back", 2), ("foreach", 5))  # fmt: skip
LAYOUTS = (("plain", 14), ("transposed", 2), ("strided", 2), ("offset", 1), ("as_strided", 1))
OVERLAP = 0.25
"""The share of programs whose second input is a view of the first input's base."""
TRIES = 200
MOST = 8
"""Statements a program has at most (it draws 3-8, an idiom counting all its statements)."""


def generate(seed: int, index: int) -> Program:
    rng = random.Random(f"{seed}:{index}")
    inputs = _inputs(rng)
    program = Program(inputs, (), ())
    variants = [program, program.independent()] if program.overlapping_inputs() else [program]
    runs = [Eager(variant.inputs) for variant in variants]
    if problems := [run.problem for run in runs if run.problem]:
        raise RuleGap(f"the generator drew inputs the rules reject: {problems[0]}")
    statements: list[Statement] = []
    wanted = rng.randint(3, 8)
    for _ in range(TRIES):
        if len(statements) >= wanted:
            break
        names = (f"t{k}" for k in itertools.count(len(statements)))
        drawn = _draw(rng, runs[0], names)
        if drawn and len(statements) + len(drawn) <= MOST and _kept(runs, drawn):
            statements += drawn
    return Program(inputs, tuple(statements), _returns(rng, runs[0]))


def _kept(runs: list[Eager], drawn: list[Statement]) -> bool:
    """Whether every run defines the drawn statements (then they have run), else none ran."""
    checkpoints = [run.checkpoint() for run in runs]
    if all(run.run(drawn) is None for run in runs):
        return True
    for run, checkpoint in zip(runs, checkpoints):
        run.restore(checkpoint)
    return False


def _draw(rng, run: Eager, names) -> list[Statement]:
    kind = rng.choices([k for k, _ in KINDS], weights=[w for _, w in KINDS])[0]
    return _MAKERS[kind](rng, run.env, names, run)


def _inputs(rng: random.Random) -> tuple[Input, ...]:
    count = rng.choice((2, 2, 3))
    one_d = rng.random() < 0.2
    shared = (rng.choice(LENGTHS),) if one_d else rng.choice(SHAPES)
    inputs = []
    for position, name in enumerate("abc"[:count]):
        same = rng.random() < 0.8
        shape = shared if same else ((rng.choice(LENGTHS),) if one_d else rng.choice(SHAPES))
        dtype = "int64" if position and rng.random() < 0.3 else "float32"
        inputs.append(_laid_out(rng, Input(name, shape, dtype, start=1 + 200 * position)))
    if rng.random() < OVERLAP:
        inputs[0], inputs[1] = _overlapping(rng, inputs[0], inputs[1])
    return tuple(inputs)


def _laid_out(rng, spec: Input) -> Input:
    """`spec` (a contiguous tensor of its shape), or a tensor of that shape in another layout:
    a view of a base made for it."""
    layout = rng.choices([k for k, _ in LAYOUTS], weights=[w for _, w in LAYOUTS])[0]
    shape = spec.shape
    if layout == "transposed" and len(shape) == 2:
        return Input(spec.name, shape[::-1], spec.dtype, spec.start, (("transpose", ()),))
    if layout == "strided":
        base = (*shape[:-1], 2 * shape[-1])
        step = (len(shape) - 1, 0, base[-1], 2)
        return Input(spec.name, base, spec.dtype, spec.start, (("slice", step),))
    if layout == "offset":
        base = (shape[0] + 1, *shape[1:])
        return Input(spec.name, base, spec.dtype, spec.start, (("slice", (0, 1, base[0])),))
    if layout == "as_strided":
        strides = rng.choice(((1, shape[0]), (shape[1] + 1, 1))) if len(shape) == 2 else (2,)
        offset = 1
        flat = (offset + 1 + sum((s - 1) * st for s, st in zip(shape, strides)),)
        view = (("as_strided", (shape, strides, offset)),)
        return Input(spec.name, flat, spec.dtype, spec.start, view)
    return spec


def _overlapping(rng, first: Input, second: Input) -> tuple[Input, Input]:
    """`first` and, in place of `second`, a view of `first`'s base (its dtype and base shape;
    `second`'s name and start): `first` is rebuilt on a larger base when the overlap needs one."""
    base = first.shape
    options = ["same", "strided"]
    if len(base) == 2 and base[0] == base[1]:
        options.append("transpose")
    if not first.view:
        options += ["shifted", "halves"] + (["unfold"] if len(base) == 1 else [])
    overlap = rng.choice(options)
    view: tuple = ()
    if overlap == "strided":
        view = (("slice", (0, 0, base[0], 2)),)
    elif overlap == "transpose":
        view = (("transpose", ()),)
    elif overlap == "unfold":
        size = rng.choice((2, 3))
        view = (("unfold", (0, size, rng.randint(1, size + 1))),)
    elif overlap in ("shifted", "halves"):
        rows = first.shape[0]
        shift = rng.choice((1, 2)) if overlap == "shifted" else rows
        base = (rows + shift, *first.shape[1:])
        first = Input(first.name, base, first.dtype, first.start, (("slice", (0, 0, rows)),))
        view = (("slice", (0, shift, rows + shift)),)
    return first, Input(second.name, base, first.dtype, second.start, view, base=first.name)


def _returns(rng, run: Eager) -> tuple[str, ...]:
    candidates = [name for name in run.env if run.return_problem(name) is None]
    count = min(len(candidates), rng.randint(1, 3))
    return tuple(rng.sample(candidates, count))


def _view(rng, env, names, run):
    x = rng.choice(sorted(env))
    t = env[x]
    op = rng.choice(("slice", "select", "narrow", "transpose", "diagonal", "unfold", "expand",
                     "view", "reshape"))  # fmt: skip
    dims = min(t.dim(), 2)
    if op in ("slice", "narrow") and dims:
        dim = rng.randrange(dims)
        start = rng.randrange(t.shape[dim])
        stop = rng.randint(start + 1, t.shape[dim])
        if op == "narrow":
            return [Statement(op, next(names), (x,), (dim, start, stop - start))]
        step = (2,) if stop - start >= 3 and rng.random() < 0.25 else ()
        return [Statement(op, next(names), (x,), (dim, start, stop, *step))]
    if op == "select" and t.dim() >= 2:
        dim = rng.randrange(2)
        return [Statement(op, next(names), (x,), (dim, rng.randrange(t.shape[dim])))]
    if op == "transpose" and t.dim() >= 2 or op == "diagonal" and t.dim() == 2:
        return [Statement(op, next(names), (x,))]
    if op == "unfold" and t.dim() in (1, 2) and t.shape[-1] >= 2:
        dim = t.dim() - 1
        size = rng.randint(2, min(3, t.shape[dim]))
        return [Statement(op, next(names), (x,), (dim, size, rng.randint(1, size + 1)))]
    if op == "expand" and (sizes := _expansion(rng, tuple(t.shape))):
        return [Statement(op, next(names), (x,), sizes)]
    if op == "view" and t.is_contiguous() and t.dim() >= 1:
        shape = (-1,) if t.dim() > 1 or t.numel() % 2 else (2, -1)
        return [Statement(op, next(names), (x,), shape)]
    if op == "reshape" and t.dim() > 1:
        return [Statement(op, next(names), (x,), (-1,))]
    return []


def _expansion(rng, shape: tuple) -> tuple | None:
    """`expand` sizes: a new leading dimension of a 1-D tensor, or a 2-D tensor's size-1
    dimension, made 1, 2 or 3 long (None for other shapes)."""
    length = rng.choice((1, 2, 3))
    if len(shape) == 1:
        return (length, -1)
    if len(shape) == 2 and 1 in shape:
        return tuple(length if size == 1 else -1 for size in shape)
    return None


def _strided(rng, env, names, run):
    """An `as_strided` view of a tensor in an input's storage, within the elements it spans."""
    on_inputs = [n for n in sorted(env) if run.in_inputs_storage(n)]
    x = rng.choice(on_inputs)
    rows, columns = rng.randint(2, 4), rng.randint(2, 4)
    layout = rng.choice(("rows", "columns", "windows", "flat"))
    sizes = (rows, columns)
    strides = {
        "rows": (columns + rng.randint(0, 2), 1),
        "columns": (1, rows + rng.randint(0, 2)),
        "windows": (rng.randint(1, columns - 1), 1),
        "flat": (rng.choice((1, 2)),),
    }[layout]
    if layout == "flat":
        sizes = (rows * columns,)
    extent = 1 + sum((s - 1) * st for s, st in zip(sizes, strides))
    first, last = run.span(x)
    if extent > last - first + 1:
        return []
    offset = first + rng.randrange(last - first + 2 - extent)
    return [Statement("as_strided", next(names), (x,), (sizes, strides, offset))]


def _clone(rng, env, names, run):
    return [Statement("clone", next(names), (rng.choice(sorted(env)),))]


def _computed(rng, env, names, run):
    x = rng.choice(sorted(env))
    op = rng.choice(("mul", "add", "sub", "flip"))
    if op == "mul":
        return [Statement(op, next(names), (x,), (rng.choice((2, -1, 3)),))]
    if op in ("add", "sub"):
        return [Statement(op, next(names), (x,), (rng.choice((1, 7, -3)),))]
    return [Statement(op, next(names), (x,), (rng.randrange(max(1, min(env[x].dim(), 2))),))]


def _noop(rng, env, names, run):
    """`x + 0`, `x * 1` or `x - 0`: a new tensor in eager, equal to `x`."""
    inputs = sorted(run.input_names)
    x = rng.choice(inputs if rng.random() < 0.5 else sorted(env))
    op, value = rng.choice((("add", 0), ("mul", 1), ("sub", 0)))
    return [Statement(op, next(names), (x,), (value,))]


def _inplace(rng, env, names, run):
    dest = rng.choice(sorted(env))
    d = env[dest]
    op = rng.choice(("copy_", "add_", "mul_", "zero_", "fill_", "clamp_", "index_put_",
                     "index_fill_", "index_copy_", "scatter_", "masked_fill_"))  # fmt: skip
    if op in ("copy_", "add_"):
        sources = _like(env, d, broadcast=True, exclude=dest)
        if op == "add_" and (not sources or rng.random() < 0.3):
            return [Statement(op, None, (dest,), (rng.choice((1, 5, -2)),))]
        return [Statement(op, None, (dest, rng.choice(sources)))] if sources else []
    if op == "mul_":
        return [Statement(op, None, (dest,), (rng.choice((2, -1, 3)),))]
    if op == "zero_":
        return [Statement(op, None, (dest,))]
    if op == "fill_":
        return [Statement(op, None, (dest,), (rng.choice((-7, 5, 11)),))]
    if op == "clamp_":
        low = rng.randint(0, 120)
        return [Statement(op, None, (dest,), (low, low + rng.randint(5, 200)))]
    if op == "masked_fill_":
        masks = [n for n in sorted(env) if env[n].shape == d.shape]
        return [Statement(op, None, (dest, rng.choice(masks)), (rng.randint(0, 300), -5))]
    if d.dim() == 0:
        return []
    if op == "index_fill_":
        rows = rng.sample(range(d.shape[0]), rng.randint(1, d.shape[0]))
        return [Statement(op, None, (dest,), (tuple(rows), rng.choice((-9, 0, 13))))]
    sources = [
        n
        for n in _like(env, d, broadcast=False, exclude=dest, rows=True)
        if env[n].shape[0] <= d.shape[0]
    ]
    if not sources:
        return []
    source = rng.choice(sources)
    count = env[source].shape[0]
    if op == "scatter_":
        return [Statement(op, None, (dest, source), (_scatter_index(rng, env[source], d),))]
    return [Statement(op, None, (dest, source), (tuple(rng.sample(range(d.shape[0]), count)),))]


def _scatter_index(rng, source: torch.Tensor, dest: torch.Tensor) -> tuple:
    """Distinct destination rows within each column: scatter_ without duplicates is defined."""
    columns = [rng.sample(range(dest.shape[0]), source.shape[0]) for _ in range(source[0].numel())]
    return _tuples(torch.tensor(columns).t().reshape(source.shape).tolist())


def _tuples(nested):
    return tuple(_tuples(x) for x in nested) if isinstance(nested, list) else nested


def _scatter(rng, env, names, run):
    x = rng.choice(sorted(env))
    t = env[x]
    op = rng.choice(("slice_scatter", "select_scatter", "diagonal_scatter"))
    same = [n for n in sorted(env) if env[n].dtype == t.dtype]
    if op == "slice_scatter" and t.dim() >= 1:
        dim = rng.randrange(min(t.dim(), 2))
        fits = [
            n for n in same
            if env[n].dim() == t.dim() and env[n].shape[dim] <= t.shape[dim]
            and all(env[n].shape[k] == t.shape[k] for k in range(t.dim()) if k != dim)
        ]  # fmt: skip
        if not fits:
            return []
        source = rng.choice(fits)
        length = env[source].shape[dim]
        start = rng.randint(0, t.shape[dim] - length)
        return [Statement(op, next(names), (x, source), (dim, start, start + length))]
    if op == "select_scatter" and t.dim() == 2:
        dim = rng.randrange(2)
        fits = [n for n in same if tuple(env[n].shape) == (t.shape[1 - dim],)]
        if fits:
            params = (dim, rng.randrange(t.shape[dim]))
            return [Statement(op, next(names), (x, rng.choice(fits)), params)]
    if op == "diagonal_scatter" and t.dim() == 2:
        fits = [n for n in same if tuple(env[n].shape) == (min(t.shape),)]
        if fits:
            return [Statement(op, next(names), (x, rng.choice(fits)))]
    return []


def _scatter_back(rng, env, names, run):
    """`s = y[...]` (sometimes scaled), `t = <op>_scatter(x, s, ...)`, `x.copy_(t)`."""
    op = rng.choice(("slice_scatter", "select_scatter", "diagonal_scatter"))
    least = 1 if op == "slice_scatter" else 2
    fits = [n for n in sorted(env) if env[n].dim() >= least]
    if not fits:
        return []
    x = rng.choice(fits)
    t = env[x]
    donors = [n for n in sorted(env) if env[n].shape == t.shape and env[n].dtype == t.dtype]
    y = rng.choice([x, rng.choice(donors)])
    if op == "slice_scatter":
        dim = rng.randrange(min(t.dim(), 2))
        start = rng.randrange(t.shape[dim])
        where = (dim, start, rng.randint(start + 1, t.shape[dim]))
        part = Statement("slice", next(names), (y,), where)
    elif op == "select_scatter":
        dim = rng.randrange(2)
        where = (dim, rng.randrange(t.shape[dim]))
        part = Statement("select", next(names), (y,), where)
    else:
        where = ()
        part = Statement("diagonal", next(names), (y,))
    drawn = [part]
    if rng.random() < 0.3:
        drawn.append(Statement("mul", next(names), (part.out,), (rng.choice((2, -1)),)))
    scattered = Statement(op, next(names), (x, drawn[-1].out), where)
    return [*drawn, scattered, Statement("copy_", None, (x, scattered.out))]


def _foreach(rng, env, names, run):
    """A foreach op over drawn tensors, over the two halves of one tensor, or over tensors of
    one shape and dtype whose sources are computed for the occasion, mostly from the next
    destination in the list (for two: the swap), else each from its own destination."""
    op = rng.choice(("_foreach_copy_", "_foreach_add_", "_foreach_mul_"))
    mode = rng.choice(("drawn", "computed", "computed", "computed", "halves"))
    drawn: list[Statement] = []
    if mode == "halves":
        fits = [n for n in sorted(env) if env[n].dim() >= 1 and env[n].shape[0] >= 2]
        if not fits:
            return []
        x = rng.choice(fits)
        half = env[x].shape[0] // 2
        drawn = [Statement("slice", next(names), (x,), (0, start, start + half))
                 for start in (0, half)]  # fmt: skip
        dests = [s.out for s in drawn]
    elif mode == "computed":
        pool = sorted(run.input_names) if rng.random() < 0.75 else sorted(env)
        first = rng.choice(pool)
        kin = [n for n in pool if n != first and _kind(env[n]) == _kind(env[first])]
        dests = [first, *rng.sample(kin, min(len(kin), rng.randint(1, 2)))]
    else:
        dests = rng.sample(sorted(env), min(len(env), rng.randint(1, 3)))
    if op == "_foreach_mul_":
        return [*drawn, Statement(op, None, tuple(dests), (rng.choice((2, -1, 3)),))]
    if mode == "drawn":
        sources = []
        for dest in dests:
            fits = [n for n in sorted(env) if n != dest and _kind(env[n]) == _kind(env[dest])]
            if not fits:
                return []
            sources.append(rng.choice(fits))
        return [Statement(op, None, (*dests, *sources))]
    shift = 1 if rng.random() < 0.7 else 0
    ways = (("clone", ()), ("clone", ()), ("mul", (1,)), ("add", (0,)))
    for k in range(len(dests)):
        how, params = rng.choice(ways if shift else (("flip", (0,)), ("mul", (2,))))
        other = dests[(k + shift) % len(dests)]
        drawn.append(Statement(how, next(names), (other,), params))
    sources = [s.out for s in drawn[-len(dests) :]]
    return [*drawn, Statement(op, None, (*dests, *sources))]


def _kind(t: torch.Tensor) -> tuple:
    return tuple(t.shape), t.dtype


def _like(env, d, *, broadcast, exclude, rows=False) -> list[str]:
    """Names of tensors of `d`'s dtype that fit it as a source: its shape (or, `broadcast`,
    its last dimension; `rows`, any number of rows of its row shape)."""
    found = []
    for name in sorted(env):
        t = env[name]
        if name == exclude or t.dtype != d.dtype:
            continue
        same_last = t.dim() == 1 and d.dim() >= 1 and t.shape[0] == d.shape[-1]
        same_rows = t.dim() == d.dim() >= 1 and t.shape[1:] == d.shape[1:]
        if t.shape == d.shape or broadcast and same_last or rows and same_rows:
            found.append(name)
    return found


_MAKERS = {
    "view": _view,
    "strided": _strided,
    "clone": _clone,
    "computed": _computed,
    "noop": _noop,
    "inplace": _inplace,
    "scatter": _scatter,
    "scatter_back": _scatter_back,
    "foreach": _foreach,
}
