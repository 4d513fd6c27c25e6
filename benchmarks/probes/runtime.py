"""What one warm call does at runtime: peak scratch bytes, compiled entrypoint calls, time."""

from __future__ import annotations

import statistics
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
    event = entrypoint_event(names)
    return {
        "scratch_bytes": peak,
        "entrypoint_calls": sum(name.startswith(event) for name in names),
        "entrypoint_event": event,
    }


def entrypoint_event(names: list[str]) -> str:
    """The profiler range that marks compiled-graph calls among `names`.

    Raises RuntimeError listing the names seen when neither range is there: the call entered
    no compiled code this module recognises, and 0 would be a count of nothing.
    """
    for event in (GRAPH_EVENT, REGION_EVENT):
        if any(name.startswith(event) for name in names):
            return event
    seen = ", ".join(dict.fromkeys(names)) or "no events"
    raise RuntimeError(
        f"the profiled call shows neither {GRAPH_EVENT!r} nor {REGION_EVENT!r}; "
        f"events seen: {seen[:600]}"
    )


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


FLOOR_ROUNDS = 41
BLOCK_SECONDS = 0.002


def floor_reference(n: int):
    """The least data movement any correct swap of two n-element FP32 tensors needs - read
    2n elements, write 2n, no scratch - as one contiguous copy of 2n elements into a
    preallocated buffer (ATen's copy kernel, one thread)."""
    source = torch.arange(2 * n, dtype=torch.float32)
    target = torch.empty_like(source)
    return lambda: target.copy_(source)


def ratio_to_floor(fn, next_inputs, n: int, rounds: int = FLOOR_ROUNDS) -> dict:
    """Warm-call time of `fn` as a multiple of the floor's, measured side by side.

    Each round times a block of control calls, then a block of floor calls of about the
    same length (>= 2 ms each); the ratio of the two is one sample, so drift between rounds
    cancels. Returns the median ratio and every sample.
    """
    floor = floor_reference(n)
    with torch.no_grad():
        control_call = warm_call_samples(fn, next_inputs, warmup=3, samples=5)
        floor_call = _block_seconds(floor, 1) or 1e-9
        control_reps = max(1, round(BLOCK_SECONDS / max(min(control_call), 1e-9)))
        floor_reps = max(1, round(BLOCK_SECONDS / floor_call))
        ratios, control_times, floor_times = [], [], []
        for _ in range(rounds):
            inputs = next_inputs()
            start = time.perf_counter()
            for _ in range(control_reps):
                fn(*inputs)
            control = (time.perf_counter() - start) / control_reps
            floor_time = _block_seconds(floor, floor_reps)
            ratios.append(control / floor_time)
            control_times.append(control)
            floor_times.append(floor_time)
    ratios_sorted = sorted(ratios)
    return {
        "time_over_floor": statistics.median(ratios),
        "floor_ratio_samples": ratios,
        "floor_ratio_iqr": [ratios_sorted[len(ratios) // 4], ratios_sorted[(3 * len(ratios)) // 4]],
        "floor_median_s": statistics.median(floor_times),
        "floor_rounds": rounds,
        "floor_calls_per_round": [control_reps, floor_reps],
    }


def _block_seconds(call, reps: int) -> float:
    start = time.perf_counter()
    for _ in range(reps):
        call()
    return (time.perf_counter() - start) / reps
