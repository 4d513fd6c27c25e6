"""Build a control for one backend, and capture the code Inductor generates for it."""

from __future__ import annotations

import torch

from .compat import Unsupported, cxx_compiler_problem, run_and_get_code


def build(fn, backend: str, fullgraph: bool = True):
    """`fn` itself for `eager`, else a fresh `torch.compile` of it with the write-up's settings
    (`fullgraph=False` only for a control that says so: `Control.fullgraph`).

    Dynamo is reset first, so one compile never inherits another's cache entries (a
    recompile limit reached across backends and sizes would fall back to eager silently).
    """
    if backend == "eager":
        return fn
    if backend == "inductor" and (problem := cxx_compiler_problem()):
        raise Unsupported(problem)
    torch._dynamo.reset()
    return torch.compile(fn, backend=backend, fullgraph=fullgraph, dynamic=False)


def compile_and_capture(fn, inputs, fullgraph: bool = True) -> tuple[object, list[str]]:
    """Compile `fn` for Inductor by calling it once on `inputs` (consumed); return the compiled
    callable, now warm, and the generated wrapper source(s). The list is empty where Inductor
    generated no code (2.15.0 compiles `x + 0` to returning its input): the verdict is still
    measured; a cost cannot be. A control compiled with `fullgraph=False` may yield one
    wrapper per graph."""
    compiled = build(fn, "inductor", fullgraph)
    with torch.no_grad():
        _, wrappers = run_and_get_code(compiled, *inputs)
    return compiled, wrappers


def graph_input_order(fn, inputs: dict) -> list[str]:
    """The names of `inputs` in the order the compiled graph (and Inductor's wrapper) takes
    them. Dynamo orders graph inputs by first use, not by position: `b.clone()` before
    `a.clone()` makes b the first. Traced once with a backend that only records (inputs are
    consumed); an input the graph does not take is left out."""
    taken = []

    def record(graph_module, example_inputs):
        taken.extend(example_inputs)
        return graph_module.forward

    torch._dynamo.reset()
    traced = torch.compile(fn, backend=record, fullgraph=True, dynamic=False)
    with torch.no_grad():
        traced(*inputs.values())
    by_address = {tensor.data_ptr(): name for name, tensor in inputs.items()}
    if len(by_address) != len(inputs):
        raise RuntimeError(f"inputs share data, their graph order is ambiguous: {list(inputs)}")
    unknown = [tuple(t.shape) for t in taken if t.data_ptr() not in by_address]
    if unknown:
        raise RuntimeError(f"the graph takes tensors that are not the case's inputs: {unknown}")
    return [by_address[tensor.data_ptr()] for tensor in taken]
