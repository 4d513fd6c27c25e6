"""What one warm call does at runtime: peak scratch bytes, compiled entrypoint calls, time,
and time over the physical floor (`floor.py`)."""

from __future__ import annotations

import statistics
import time

import torch

from ..compat import Unsupported, entrypoint_event, event_names, memory_events, profiled_call
from .floor import checked_operands, description, swap_kernel


def profile_warm_call(fn, inputs) -> dict[str, int]:
    """Profile one call of an already warm `fn` and read the scratch and entrypoint figures.

    `scratch_bytes`: the peak of the running sum of the profiler's `[memory]` events (allocs
    positive, frees negative) over the call: memory the call needed beyond its inputs.
    `entrypoint_calls`: how many compiled graphs the call entered (the profiler ranges
    `compat.entrypoint_event` names for this release).
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


FLOOR_ROUNDS = 41
SUB_BLOCKS = 10
SUB_BLOCK_SECONDS = 0.0002
FLOOR_DEFECT_BELOW = 0.95
"""A correct control measured this far under the floor means the floor is not the least
work a swap needs on this machine: the ratio would mean nothing, so it is an error. (The
fastest control, `select_swap`, measured 1.35-1.45 x the floor over five runs on 2.13.0 and
2.15.0: results/stability/.)"""


class FloorDefect(AssertionError):
    """A correct control ran faster than the physical floor; `figures` holds what was measured."""

    def __init__(self, message: str, figures: dict):
        super().__init__(message)
        self.figures = figures


def floor_figures(fn, next_inputs, operands_of) -> dict:
    """The row's floor figures: `ratio_to_floor`'s, or why there are none (`floor_note`), or
    the figures with the defect that makes them unusable (`floor_defect`)."""
    if operands_of is None:
        return {"floor_note": "the scenario defines no floor operands (which two tensors it swaps)"}
    try:
        return ratio_to_floor(fn, next_inputs, operands_of)
    except Unsupported as exc:
        return {"floor_note": str(exc)}
    except FloorDefect as exc:
        return {**exc.figures, "floor_defect": str(exc)}


def ratio_to_floor(fn, next_inputs, operands_of, rounds: int = FLOOR_ROUNDS) -> dict:
    """Warm-call time of `fn` as a multiple of the physical floor's, measured side by side.

    The floor (`floor.swap_kernel`) swaps `operands_of(inputs)`: the two tensors the control
    itself swaps, in the inputs the control gets. Each round times a block of control calls,
    then a block of floor calls (about 2 ms each, or 10 calls), each block in `SUB_BLOCKS`
    sub-blocks of >= 0.2 ms; the round's sample is the fastest control sub-block over the
    fastest floor sub-block (per call), so a sub-block the scheduler interrupted (another
    process on a shared core) drops out, and drift between rounds cancels. Floor sub-blocks
    make an even number of calls, so the inputs end each round as the floor found them.
    Returns the median of the rounds' ratios and every sample; raises `FloorDefect` when the
    median is below `FLOOR_DEFECT_BELOW`.
    """
    swap = swap_kernel()
    with torch.no_grad():
        control_call = warm_call_samples(fn, next_inputs, warmup=3, samples=5)
        operands = checked_operands(*operands_of(next_inputs()))
        floor_call = min(_block_seconds(swap, operands, 2) for _ in range(3)) or 1e-9
        control_reps = max(1, round(SUB_BLOCK_SECONDS / max(min(control_call), 1e-9)))
        floor_reps = 2 * max(1, round(SUB_BLOCK_SECONDS / (2 * floor_call)))
        ratios, control_times, floor_times = [], [], []
        for _ in range(rounds):
            inputs = next_inputs()
            operands = checked_operands(*operands_of(inputs))
            control = min(_block_seconds(fn, inputs, control_reps) for _ in range(SUB_BLOCKS))
            floor_time = min(_block_seconds(swap, operands, floor_reps) for _ in range(SUB_BLOCKS))
            ratios.append(control / floor_time)
            control_times.append(control)
            floor_times.append(floor_time)
    ratios_sorted = sorted(ratios)
    figures = {
        "time_over_floor": statistics.median(ratios),
        "floor_ratio_samples": ratios,
        "floor_ratio_iqr": [ratios_sorted[len(ratios) // 4], ratios_sorted[(3 * len(ratios)) // 4]],
        "floor_median_s": statistics.median(floor_times),
        "control_median_s": statistics.median(control_times),
        "floor_rounds": rounds,
        "floor_calls_per_sub_block": [control_reps, floor_reps],
        "floor_sub_blocks": SUB_BLOCKS,
        "floor_kernel": description(),
    }
    if figures["time_over_floor"] < FLOOR_DEFECT_BELOW:
        raise FloorDefect(_defect_message(figures), figures)
    return figures


def _defect_message(figures: dict) -> str:
    return (
        f"floor defect: the control took {figures['control_median_s'] * 1e3:.4f} ms a call, "
        f"the physical floor ({figures['floor_kernel']}) {figures['floor_median_s'] * 1e3:.4f} "
        f"ms on the same tensors: {figures['time_over_floor']:.3f} x, below "
        f"{FLOOR_DEFECT_BELOW} x (the median of {figures['floor_rounds']} interleaved rounds). "
        "A correct swap cannot need less than the floor: the floor is not the least work here."
    )


def _block_seconds(call, args, reps: int) -> float:
    start = time.perf_counter()
    for _ in range(reps):
        call(*args)
    return (time.perf_counter() - start) / reps
