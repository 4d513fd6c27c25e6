"""A wrong program's repro: the complete script a person pastes into a fresh `python`.

The script holds the program, its inputs, the eager and the compiled call, and every probe of
the oracle that shows this program's fault (`benchmarks/corpus/oracle.py`), each printing one
line per coordinate, `exact` or `WRONG` with both values:

    return <i>          the value of each return (always)
    input <name>        each input after the call (always)
    alias <i>           a write through return i changes the same input elements as in eager
                        (when an `alias_` coordinate is wrong: a copy where eager returns the
                        input, or the input itself where eager returns a new tensor)
    second call ...     the returns and inputs after two calls in a row (when a `second_`
                        coordinate is wrong)
    returns alias       a write through each return changes the same elements of the returns
                        (when `alias_returns` is wrong)
    unaliased call ...  after the calls on inputs that overlap in memory, two calls on inputs
                        of the same layouts in storages of their own (when an `unaliased_`
                        coordinate is wrong: the graph compiled for the overlap reused)

Every probe runs on fresh inputs, like the oracle's, so one probe's writes cannot show up as
another's fault. `tests/test_corpus_repro.py` runs repros in a fresh interpreter and checks
that each prints WRONG where the oracle found the program wrong.
"""

from __future__ import annotations

from .program import Program

_HEADER = """import torch

MARK = -(2**23)  # a value no program computes, written through a return to see what it changes


def show(what, got, expected):
    same = isinstance(got, torch.Tensor) and got.shape == expected.shape and got.dtype == \\
        expected.dtype and torch.equal(got, expected)
    print(what, "exact" if same else f"WRONG: {got} != {expected}")


def as_tuple(result):
    return (result,) if isinstance(result, torch.Tensor) else tuple(result or ())
"""

_ONE_CALL = """
eager_inputs, compiled_inputs = inputs(), inputs()
expected = as_tuple(program(*eager_inputs))
got = as_tuple(compiled(*compiled_inputs))
for i, e in enumerate(expected):
    show(f"return {i}", got[i] if i < len(got) else None, e)
for name, e, g in zip(NAMES, eager_inputs, compiled_inputs):
    show(f"input {name}", g, e)
"""

_ALIAS = """
# alias probe: write MARK through each return; the inputs must change where they do in eager
for i in range(len(expected)):
    sides = []
    for fn in (program, compiled):
        ins = inputs()
        out = as_tuple(fn(*ins))
        before = [t.clone() for t in ins]
        if i < len(out):
            out[i].detach().fill_(MARK + i)
        sides.append([torch.ne(t, b) for t, b in zip(ins, before)])
    for name, e, g in zip(NAMES, *sides):
        show(f"alias {i}: input {name} elements a write through return {i} changes", g, e)
"""

_SECOND = """
# second call: two calls in a row on the same inputs
eager_inputs, compiled_inputs = inputs(), inputs()
program(*eager_inputs)
expected = as_tuple(program(*eager_inputs))
compiled(*compiled_inputs)
got = as_tuple(compiled(*compiled_inputs))
for i, e in enumerate(expected):
    show(f"second call: return {i}", got[i] if i < len(got) else None, e)
for name, e, g in zip(NAMES, eager_inputs, compiled_inputs):
    show(f"second call: input {name}", g, e)
"""

_UNALIASED = """
# unaliased calls: the same compiled function, now on inputs in storages of their own
eager_inputs, compiled_inputs = independent_inputs(), independent_inputs()
program(*eager_inputs)
expected = as_tuple(program(*eager_inputs))
compiled(*compiled_inputs)
got = as_tuple(compiled(*compiled_inputs))
for i, e in enumerate(expected):
    show(f"unaliased call: return {i}", got[i] if i < len(got) else None, e)
for name, e, g in zip(NAMES, eager_inputs, compiled_inputs):
    show(f"unaliased call: input {name}", g, e)
"""

_RETURNS_ALIAS = """
# returns alias: a write through each return must change the same elements of every return
eager_out, compiled_out = as_tuple(program(*inputs())), as_tuple(compiled(*inputs()))
for i in range(len(eager_out)):
    changed = []
    for out in (eager_out, compiled_out):
        before = [t.clone() for t in out]
        if i < len(out):
            out[i].detach().fill_(MARK + 100 + i)
        changed.append([torch.ne(t, b) for t, b in zip(out, before)])
    for j, (e, g) in enumerate(zip(*changed)):
        show(f"returns alias: return {j} elements a write through return {i} changes", g, e)
"""


def repro(program: Program, backend: str, coordinates=()) -> str:
    """The paste-ready script for `program` compiled for `backend`, with the probes that the
    wrong `coordinates` (oracle names) need."""
    names = ", ".join(repr(i.name) for i in program.inputs)
    keys = set(coordinates)
    unaliased = any(key.startswith("unaliased_") for key in keys)
    independent = (
        program.independent()
        .inputs_source()
        .replace("def inputs():", "def independent_inputs():", 1)
    )
    parts = [
        _HEADER,
        f"\n{program.source()}\n",
        f"{program.inputs_source()}\n",
        f"{independent}\n" if unaliased else "",
        f"NAMES = [{names}]\n",
        f'compiled = torch.compile(program, backend="{backend}", fullgraph=True, dynamic=False)\n',
        "torch.set_grad_enabled(False)\n",
        _ONE_CALL,
    ]
    if any(key.startswith("alias_") and key != "alias_returns" for key in keys):
        parts.append(_ALIAS)
    if any(key.startswith("second_") for key in keys):
        parts.append(_SECOND)
    if unaliased:
        parts.append(_UNALIASED)
    if "alias_returns" in keys:
        parts.append(_RETURNS_ALIAS)
    return "".join(parts)
