"""What one warm call does at runtime: peak scratch bytes, compiled entrypoint calls, time."""

from __future__ import annotations

import time

import torch

from ..compat import event_names, memory_events, profiled_call

GRAPH_EVENT = "## Call CompiledFxGraph"
"""The range Inductor opens around every call of a compiled graph (seen on 2.13 and 2.15)."""

REGION_EVENT = "Torch-Compiled Region"
"""The range dynamo opens around every compiled frame it enters (2.4 on). Builds whose
profiler marks no graph call (2.4 and 2.7 were seen so) are counted by it: with
fullgraph=True a compiled frame runs exactly one graph."""


def profile_warm_call(fn, inputs) -> dict[str, int]:
    """Profile one call of an already warm `fn` and read the scratch and entrypoint figures.

    `scratch_bytes`: the peak of the running sum of the profiler's `[memory]` events (allocs
    positive, frees negative) over the call: memory the call needed beyond its inputs.
    `entrypoint_calls`: how many compiled graphs the call entered; `entrypoint_event` says
    which profiler range counted them.
    """
    with torch.no_grad():
        prof = profiled_call(fn, *inputs)
    live = peak = 0
    for _, nbytes in memory_events(prof):
        live += nbytes
        peak = max(peak, live)
    names = event_names(prof)
    event = GRAPH_EVENT if any(name.startswith(GRAPH_EVENT) for name in names) else REGION_EVENT
    return {
        "scratch_bytes": peak,
        "entrypoint_calls": sum(name.startswith(event) for name in names),
        "entrypoint_event": event,
    }


def warm_call_samples(fn, next_inputs, warmup: int, samples: int) -> list[float]:
    """Seconds per call of `fn(*next_inputs())`, one sample per call, after `warmup` calls.

    `next_inputs()` is called outside the timed interval: it returns fresh inputs where a
    call needs them, or the same ones where it does not (a swap just swaps back).
    """
    timings = []
    with torch.no_grad():
        for _ in range(warmup):
            fn(*next_inputs())
        for _ in range(samples):
            inputs = next_inputs()
            start = time.perf_counter()
            fn(*inputs)
            timings.append(time.perf_counter() - start)
    return timings
