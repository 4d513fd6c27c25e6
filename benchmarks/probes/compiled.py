"""Build a control for one backend, and capture the code Inductor generates for it."""

from __future__ import annotations

import torch

from ..compat import Unsupported, cxx_compiler_problem, run_and_get_code


def build(fn, backend: str):
    """`fn` itself for `eager`, else a fresh `torch.compile` of it with the write-up's settings.

    Dynamo is reset first, so one compile never inherits another's cache entries (a
    recompile limit reached across backends and sizes would fall back to eager silently).
    """
    if backend == "eager":
        return fn
    if backend == "inductor" and (problem := cxx_compiler_problem()):
        raise Unsupported(problem)
    torch._dynamo.reset()
    return torch.compile(fn, backend=backend, fullgraph=True, dynamic=False)


def compile_and_capture(fn, inputs) -> tuple[object, list[str]]:
    """Compile `fn` for Inductor by calling it once on `inputs` (consumed); return the compiled
    callable, now warm, and the generated wrapper source(s)."""
    compiled = build(fn, "inductor")
    with torch.no_grad():
        _, wrappers = run_and_get_code(compiled, *inputs)
    if not wrappers:
        raise RuntimeError(
            f"torch {torch.__version__} compiled the control but reported no generated code"
        )
    return compiled, wrappers
