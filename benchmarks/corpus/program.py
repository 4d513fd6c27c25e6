"""A corpus program as data: inputs, statements over named tensors, returns.

A program renders to paste-ready Python (`source`, `repro`) and to a callable made from that
very text, so what is compiled is what is printed. `problem` says why a program's eager
meaning is undefined (or None): a write into a view whose elements share memory (expanded,
overlapping unfold), a write whose source partially overlaps its destination, values that
leave the exactly representable range. Which storage elements each tensor covers is read off
the tensors themselves (storage, offset, strides), by running the program eagerly.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

EXACT_LIMIT = 2**20
"""Every value a program computes stays within +-2**20: exact in FP32, far from int64 limits."""

VIEWS = {"slice", "select", "narrow", "transpose", "diagonal", "unfold", "expand", "view",
         "reshape"}  # fmt: skip
INPLACE = {"copy_", "add_", "mul_", "zero_", "fill_", "clamp_", "index_put_", "index_fill_",
           "index_copy_", "scatter_", "masked_fill_"}  # fmt: skip
FOREACH = {"_foreach_copy_", "_foreach_add_", "_foreach_mul_"}
INDEXED = {"index_put_", "index_copy_", "scatter_"}
"""In-place ops whose source must not overlap the destination at all (not even exactly)."""


@dataclass(frozen=True)
class Input:
    """An input tensor: `start`, `start + 1`, ... in `shape` (distinct per tensor)."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    start: int

    def expression(self) -> str:
        numel = 1
        for size in self.shape:
            numel *= size
        shape = ", ".join(str(s) for s in self.shape)
        return f"(torch.arange({numel}, dtype=torch.{self.dtype}) + {self.start}).reshape({shape})"

    def tensor(self) -> torch.Tensor:
        return eval(self.expression(), {"torch": torch})


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

    def function(self):
        namespace = {"torch": torch}
        exec(compile(self.source(), "<corpus program>", "exec"), namespace)
        return namespace["program"]

    def make_inputs(self) -> list[torch.Tensor]:
        return [i.tensor() for i in self.inputs]

    def repro(self, backend: str) -> str:
        """A script that prints where the compiled program differs from eager (paste-ready)."""
        inputs = ",\n        ".join(i.expression() for i in self.inputs)
        return (
            f"import torch\n\n\n{self.source()}\n\n"
            f"def inputs():\n    return [\n        {inputs},\n    ]\n\n\n"
            "eager_inputs, compiled_inputs = inputs(), inputs()\n"
            "expected = program(*eager_inputs)\n"
            f'compiled = torch.compile(program, backend="{backend}", fullgraph=True, '
            "dynamic=False)\n"
            "got = compiled(*compiled_inputs)\n"
            "for i, (e, g) in enumerate(zip(expected, got)):\n"
            '    print("return", i, "exact" if torch.equal(e, g) else f"{g} != {e}")\n'
            "for i, (e, g) in enumerate(zip(eager_inputs, compiled_inputs)):\n"
            '    print("input", i, "exact" if torch.equal(e, g) else f"{g} != {e}")\n'
        )


def environment(program: Program) -> dict[str, torch.Tensor]:
    """Every named tensor after running the statements eagerly (a program without problems)."""
    env, problem_text = _run(program)
    if problem_text:
        raise ValueError(f"not a well-defined program ({problem_text}):\n{program.source()}")
    return env


def problem(program: Program) -> str | None:
    """Why the program's eager meaning is undefined or inexact, or None when it is defined."""
    env, problem_text = _run(program)
    if problem_text:
        return problem_text
    if len(set(program.returns)) != len(program.returns):
        return "a tensor returned twice"
    for name in program.returns:
        if name not in env:
            return f"returns {name}, which is not defined"
        if _overlaps_itself(env[name]):
            return f"returns {name}, whose elements share memory"
    return None


def _run(program: Program) -> tuple[dict[str, torch.Tensor], str | None]:
    env = {i.name: i.tensor() for i in program.inputs}
    with torch.no_grad():
        for statement in program.statements:
            if missing := [a for a in statement.args if a not in env]:
                return env, f"{statement.source()!r} reads undefined {', '.join(missing)}"
            if reason := _write_problem(statement, env):
                return env, f"{statement.source()!r}: {reason}"
            namespace = {"torch": torch, **env}
            try:
                exec(statement.source(), namespace)
            except (RuntimeError, IndexError, TypeError, ValueError) as exc:
                return env, f"{statement.source()!r} raised {type(exc).__name__}: {exc}"
            if statement.out:
                env[statement.out] = namespace[statement.out]
            if any(t.abs().max().item() > EXACT_LIMIT for t in env.values() if t.numel()):
                return env, f"{statement.source()!r} leaves the exact range"
    return env, None


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


def _offsets(tensor: torch.Tensor, like: torch.Tensor | None = None) -> torch.Tensor:
    """The storage element each element of `tensor` (broadcast to `like`) reads or writes."""
    elements = tensor.untyped_storage().nbytes() // tensor.element_size()
    offsets = torch.arange(elements).as_strided(
        tensor.shape, tensor.stride(), tensor.storage_offset()
    )
    return (offsets.expand_as(like) if like is not None else offsets).reshape(-1)


def _same_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def _overlaps_itself(tensor: torch.Tensor) -> bool:
    offsets = _offsets(tensor)
    return offsets.unique().numel() != offsets.numel()


def _overlap(dest: torch.Tensor, source: torch.Tensor) -> str:
    """`disjoint`, `identical` (each element reads the one it writes) or `partial`."""
    if not _same_storage(dest, source) or dest.element_size() != source.element_size():
        return "disjoint"
    written = _offsets(dest)
    try:
        read = _offsets(source, like=dest)
    except RuntimeError:  # not broadcastable: compare the element sets only
        read = _offsets(source)
    if read.shape == written.shape and torch.equal(read, written):
        return "identical"
    if torch.isin(read, written).any():
        return "partial"
    return "disjoint"


def _slice(args, params) -> str:
    dim, start, stop = params
    return f"{args[0]}[{':, ' * dim}{start}:{stop}]"


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
    "expand": lambda a, p: f"{a[0]}.expand({p[0]}, -1)",
    "view": lambda a, p: f"{a[0]}.view({_sizes(p)})",
    "reshape": lambda a, p: f"{a[0]}.reshape({_sizes(p)})",
    "clone": lambda a, p: f"{a[0]}.clone()",
    "mul": lambda a, p: f"{a[0]} * {p[0]}",
    "add": lambda a, p: f"{a[0]} + {p[0]}",
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
