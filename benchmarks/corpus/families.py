"""The grouping: shrunk programs into families by their normalized statement shape.

A shape is the op sequence with names canonicalised (inputs `i0, i1, ...` and other tensors
`t0, t1, ...`, in order of first use) and literals dropped: `t0=clone(i0); t1=clone(i1);
_foreach_copy_(i1,i0,t0,t1)`. `group` takes the key function as a parameter: grouping by the
pass an attribution blames (issue 12) is another key function.

`CATALOGUE_SHAPES` writes the entries of `aliasing.py` and the swap controls that the grammar
can express as corpus programs, so a family can say which reported pattern it is. Literals do
not count, so `shift_clone`'s shape is `shift_clone_back`'s too; `scatter_copy_back_output`
takes its one-row source as a slice (corpus inputs share one shape). Not expressible: dtype
views (`dtype_view_then_mutate`, `dtype_view_custom_op_diagonal_scatter`), inputs that are
views of each other (`aliased_input_view_return`), `resize_` (`noop_view_resize_across_break`),
dropout, custom ops, `index_add`/`scatter_add`, vmap.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .program import Input, Program, Statement


def shape(program: Program) -> str:
    inputs = {spec.name for spec in program.inputs}
    names: dict[str, str] = {}

    def canonical(name: str) -> str:
        if name not in names:
            prefix = "i" if name in inputs else "t"
            names[name] = f"{prefix}{sum(1 for v in names.values() if v[0] == prefix)}"
        return names[name]

    parts = []
    for statement in program.statements:
        args = ",".join(canonical(a) for a in statement.args)
        out = f"{canonical(statement.out)}=" if statement.out else ""
        parts.append(f"{out}{statement.op}({args})")
    return "; ".join(parts)


def group(items: Iterable, key: Callable) -> dict:
    """Items by `key(item)`, in order of first appearance."""
    groups: dict = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return groups


def catalogue_match(family: str) -> str:
    """The catalogue entries (or swap controls) with this shape, or `new`."""
    matches = [name for name, program in CATALOGUE_SHAPES.items() if shape(program) == family]
    return ", ".join(matches) or "new"


def _program(inputs: str, statements: list[tuple], returns: str) -> Program:
    specs = tuple(Input(name, (4, 4), "float32", 1 + 100 * k) for k, name in enumerate(inputs))
    made = tuple(Statement(op, out or None, tuple(args.split()), params)
                 for op, out, args, params in statements)  # fmt: skip
    return Program(specs, made, tuple(returns.split()))


CATALOGUE_SHAPES = {
    "snapshot_swap.foreach_clones": _program("ab", [
        ("clone", "t0", "b", ()), ("clone", "t1", "a", ()),
        ("_foreach_copy_", "", "a b t0 t1", ()),
    ], "a b"),
    "snapshot_swap.explicit_copies": _program("ab", [
        ("clone", "t0", "b", ()), ("clone", "t1", "a", ()),
        ("copy_", "", "a t0", ()), ("copy_", "", "b t1", ()),
    ], "a b"),
    "aliasing.copy_of_mutated_input": _program("ab", [
        ("slice", "t0", "b", (0, 0, 4)), ("slice", "t1", "a", (0, 0, 4)),
        ("copy_", "", "t1 t0", ()), ("add_", "", "b", (1,)),
    ], "b"),
    "aliasing.copy_of_mutated_input_control": _program("ab", [
        ("copy_", "", "a b", ()), ("add_", "", "b", (1,)),
    ], "b"),
    "aliasing.foreach_add_flip": _program("a", [
        ("flip", "t0", "a", (0,)), ("_foreach_add_", "", "a t0", ()),
    ], "a"),
    "aliasing.foreach_add_flip_control": _program("a", [
        ("flip", "t0", "a", (0,)), ("add_", "", "a t0", ()),
    ], "a"),
    "aliasing.shift_clone": _program("a", [
        ("slice", "t0", "a", (0, 0, 3)), ("clone", "t1", "t0", ()),
        ("slice", "t2", "a", (0, 1, 4)), ("copy_", "", "t2 t1", ()),
    ], "a"),
    "aliasing.slice_scatter_then_zero": _program("ab", [
        ("slice", "t0", "b", (0, 1, 3)), ("slice_scatter", "t1", "a t0", (0, 1, 3)),
        ("zero_", "", "a", ()),
    ], "t1"),
    "aliasing.diagonal_scatter_then_fill": _program("a", [
        ("diagonal", "t0", "a", ()), ("diagonal_scatter", "t1", "a t0", ()),
        ("fill_", "", "a", (2,)),
    ], "t1"),
    "aliasing.index_fill_clone_clamp": _program("a", [
        ("index_fill_", "", "a", ((0, 2), -5)), ("clone", "t1", "a", ()),
        ("clamp_", "", "a", (0, 10)),
    ], "t1"),
    "aliasing.index_put_then_add_flip": _program("a", [
        ("mul", "t0", "a", (2,)), ("index_put_", "", "a t0", ((0, 1, 2, 3),)),
        ("flip", "t2", "a", (0,)), ("add_", "", "a t2", ()),
    ], "a"),
    "aliasing.transpose_copy": _program("a", [
        ("transpose", "t0", "a", ()), ("mul", "t1", "t0", (1,)), ("copy_", "", "a t1", ()),
    ], "a"),
    "aliasing.unfold_gap_add": _program("a", [
        ("unfold", "t0", "a", (1, 1, 3)), ("add_", "", "t0 t0", ()),
    ], "a"),
    "aliasing.add_zero_output": _program("a", [("add", "t0", "a", (0,))], "t0"),
    "aliasing.scatter_copy_back_output": _program("ab", [
        ("slice", "t0", "b", (0, 0, 1)), ("slice_scatter", "t1", "a t0", (0, 0, 1)),
        ("copy_", "", "a t1", ()),
    ], "t1"),
    "aliasing.dropout_identity_add_control": _program("a", [("add_", "", "a a", ())], "a"),
    "aliasing.rotate3_foreach": _program("abc", [
        ("clone", "t0", "c", ()), ("clone", "t1", "a", ()), ("clone", "t2", "b", ()),
        ("_foreach_copy_", "", "a b c t0 t1 t2", ()),
    ], "a b c"),
}  # fmt: skip
