"""The generator: program `index` of corpus `seed` is a pure function of (seed, index).

Each program takes 2-3 inputs of small distinct exact integers (FP32, sometimes one int64),
then 3-8 statements drawn from views, clones, computed tensors, in-place ops, functional
scatters and foreach ops, and returns 1-3 of its tensors (inputs, views, computed). A drawn
statement is kept only when the program stays well-defined in eager (`program.problem`), so no
program with an undefined meaning is ever generated.
"""

from __future__ import annotations

import random

import torch

from .program import Input, Program, Statement, environment, problem

SHAPES = ((4, 4), (5, 5), (6, 6), (4, 6), (6, 4), (8, 8))
LENGTHS = (12, 20, 33)
KINDS = (("view", 6), ("clone", 3), ("computed", 2), ("inplace", 6), ("scatter", 2),
         ("foreach", 3))  # fmt: skip
TRIES = 200


def generate(seed: int, index: int) -> Program:
    rng = random.Random(f"{seed}:{index}")
    inputs = _inputs(rng)
    statements: list[Statement] = []
    wanted = rng.randint(3, 8)
    for _ in range(TRIES):
        if len(statements) == wanted:
            break
        env = environment(Program(inputs, tuple(statements), ()))
        statement = _statement(rng, env, f"t{len(statements)}")
        if statement is None:
            continue
        candidate = Program(inputs, (*statements, statement), ())
        if problem(candidate) is None:
            statements.append(statement)
    env = environment(Program(inputs, tuple(statements), ()))
    return Program(inputs, tuple(statements), _returns(rng, inputs, statements, env))


def _inputs(rng: random.Random) -> tuple[Input, ...]:
    count = rng.choice((2, 2, 3))
    one_d = rng.random() < 0.2
    shared = (rng.choice(LENGTHS),) if one_d else rng.choice(SHAPES)
    inputs = []
    for position, name in enumerate("abc"[:count]):
        same = rng.random() < 0.8
        shape = shared if same else ((rng.choice(LENGTHS),) if one_d else rng.choice(SHAPES))
        dtype = "int64" if position and rng.random() < 0.3 else "float32"
        inputs.append(Input(name, shape, dtype, start=1 + 100 * position))
    return tuple(inputs)


def _returns(rng, inputs, statements, env) -> tuple[str, ...]:
    names = [i.name for i in inputs] + [s.out for s in statements if s.out]
    candidates = []
    for name in names:
        if problem(Program(inputs, tuple(statements), (name,))) is None:
            candidates.append(name)
    count = min(len(candidates), rng.randint(1, 3))
    return tuple(rng.sample(candidates, count))


def _statement(rng, env: dict[str, torch.Tensor], out: str) -> Statement | None:
    kind = rng.choices([k for k, _ in KINDS], weights=[w for _, w in KINDS])[0]
    return _MAKERS[kind](rng, env, out)


def _view(rng, env, out):
    x = rng.choice(sorted(env))
    t = env[x]
    op = rng.choice(("slice", "select", "narrow", "transpose", "diagonal", "unfold", "expand",
                     "view", "reshape"))  # fmt: skip
    dims = min(t.dim(), 2)
    if op in ("slice", "narrow"):
        dim = rng.randrange(dims)
        start = rng.randrange(t.shape[dim])
        stop = rng.randint(start + 1, t.shape[dim])
        params = (dim, start, stop) if op == "slice" else (dim, start, stop - start)
        return Statement(op, out, (x,), params)
    if op == "select" and t.dim() >= 2:
        dim = rng.randrange(2)
        return Statement(op, out, (x,), (dim, rng.randrange(t.shape[dim])))
    if op == "transpose" and t.dim() >= 2 or op == "diagonal" and t.dim() == 2:
        return Statement(op, out, (x,))
    if op == "unfold" and t.dim() in (1, 2) and t.shape[-1] >= 2:
        dim = t.dim() - 1
        size = rng.randint(2, min(3, t.shape[dim]))
        return Statement(op, out, (x,), (dim, size, rng.randint(1, size + 1)))
    if op == "expand" and t.dim() == 1:
        return Statement(op, out, (x,), (rng.choice((2, 3)),))
    if op == "view" and t.is_contiguous() and t.dim() >= 1:
        shape = (-1,) if t.dim() > 1 or t.numel() % 2 else (2, -1)
        return Statement(op, out, (x,), shape)
    if op == "reshape" and t.dim() > 1:
        return Statement(op, out, (x,), (-1,))
    return None


def _clone(rng, env, out):
    return Statement("clone", out, (rng.choice(sorted(env)),))


def _computed(rng, env, out):
    x = rng.choice(sorted(env))
    op = rng.choice(("mul", "add", "flip"))
    if op == "mul":
        return Statement(op, out, (x,), (rng.choice((2, -1, 3)),))
    if op == "add":
        return Statement(op, out, (x,), (rng.choice((1, 7, -3)),))
    return Statement(op, out, (x,), (rng.randrange(min(env[x].dim(), 2)),))


def _inplace(rng, env, out):
    dest = rng.choice(sorted(env))
    d = env[dest]
    op = rng.choice(("copy_", "add_", "mul_", "zero_", "fill_", "clamp_", "index_put_",
                     "index_fill_", "index_copy_", "scatter_", "masked_fill_"))  # fmt: skip
    if op in ("copy_", "add_"):
        sources = _like(env, d, broadcast=True, exclude=dest)
        if op == "add_" and (not sources or rng.random() < 0.3):
            return Statement(op, None, (dest,), (rng.choice((1, 5, -2)),))
        return Statement(op, None, (dest, rng.choice(sources))) if sources else None
    if op == "mul_":
        return Statement(op, None, (dest,), (rng.choice((2, -1, 3)),))
    if op == "zero_":
        return Statement(op, None, (dest,))
    if op == "fill_":
        return Statement(op, None, (dest,), (rng.choice((-7, 5, 11)),))
    if op == "clamp_":
        low = rng.randint(0, 120)
        return Statement(op, None, (dest,), (low, low + rng.randint(5, 200)))
    if op == "masked_fill_":
        masks = [n for n in sorted(env) if env[n].shape == d.shape]
        return Statement(op, None, (dest, rng.choice(masks)), (rng.randint(0, 300), -5))
    if d.dim() == 0:
        return None
    if op == "index_fill_":
        rows = rng.sample(range(d.shape[0]), rng.randint(1, d.shape[0]))
        return Statement(op, None, (dest,), (tuple(rows), rng.choice((-9, 0, 13))))
    sources = [
        n
        for n in _like(env, d, broadcast=False, exclude=dest, rows=True)
        if env[n].shape[0] <= d.shape[0]
    ]
    if not sources:
        return None
    source = rng.choice(sources)
    count = env[source].shape[0]
    if op == "scatter_":
        return Statement(op, None, (dest, source), (_scatter_index(rng, env[source], d),))
    return Statement(op, None, (dest, source), (tuple(rng.sample(range(d.shape[0]), count)),))


def _scatter_index(rng, source: torch.Tensor, dest: torch.Tensor) -> tuple:
    """Distinct destination rows within each column: scatter_ without duplicates is defined."""
    columns = [rng.sample(range(dest.shape[0]), source.shape[0]) for _ in range(source[0].numel())]
    return _tuples(torch.tensor(columns).t().reshape(source.shape).tolist())


def _tuples(nested):
    return tuple(_tuples(x) for x in nested) if isinstance(nested, list) else nested


def _scatter(rng, env, out):
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
            return None
        source = rng.choice(fits)
        length = env[source].shape[dim]
        start = rng.randint(0, t.shape[dim] - length)
        return Statement(op, out, (x, source), (dim, start, start + length))
    if op == "select_scatter" and t.dim() == 2:
        dim = rng.randrange(2)
        fits = [n for n in same if tuple(env[n].shape) == (t.shape[1 - dim],)]
        if fits:
            return Statement(op, out, (x, rng.choice(fits)), (dim, rng.randrange(t.shape[dim])))
    if op == "diagonal_scatter" and t.dim() == 2:
        fits = [n for n in same if tuple(env[n].shape) == (min(t.shape),)]
        if fits:
            return Statement(op, out, (x, rng.choice(fits)))
    return None


def _foreach(rng, env, out):
    op = rng.choice(("_foreach_copy_", "_foreach_add_", "_foreach_mul_"))
    dests = rng.sample(sorted(env), min(len(env), rng.randint(1, 3)))
    if op == "_foreach_mul_":
        return Statement(op, None, tuple(dests), (rng.choice((2, -1, 3)),))
    sources = []
    for dest in dests:
        fits = [
            n
            for n in sorted(env)
            if n != dest and env[n].shape == env[dest].shape and env[n].dtype == env[dest].dtype
        ]
        if not fits:
            return None
        sources.append(rng.choice(fits))
    return Statement(op, None, (*dests, *sources))


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
    "clone": _clone,
    "computed": _computed,
    "inplace": _inplace,
    "scatter": _scatter,
    "foreach": _foreach,
}
