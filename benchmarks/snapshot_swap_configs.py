"""The snapshot swap's five controls under every way users compile, and on other inputs.

Eleven (configuration, input) variants, not the full cross product (an AOTInductor package
alone takes tens of seconds to build): every configuration of `probes/configs.py` on `fp32`
inputs, and the `inductor` configuration on every kind of input:

    fp32          a = arange(3), b = a + 2**21 in FP32, as the swap's small gate
    bf16          a = arange(3), b = -1 - a in BF16 (integers of at most 8 bits: exact)
    int64         a = arange(3), b = a + 2**21 in INT64 (exact in FP32 too: `foreach_computed`
                  multiplies by 1.0, which promotes INT64 to FP32 even in eager)
    fp32_strided  a and b are every other element of a buffer of their own (stride 2); the
                  contract reads a, b and views of them, and checks the storage as it is
    fp32_n17      17 elements: no vector width divides it, so a vector body and a tail

In each, every element of a differs from every element of b, so any element that took the
wrong source is wrong. The expected results are clones taken before the call.
"""

import os

import torch

from . import metrics, pool
from .artifacts import root as artifacts_root
from .asv_classes import inductor_cache
from .compat import set_single_thread
from .contract import Case
from .probes.variants import Variant, probe_variants, usable_variant_row
from .snapshot_swap import SWAP

SCENARIO = "snapshot_swap_configs"
GATE_N = SWAP.gate_size


def swap_case(a: torch.Tensor, b: torch.Tensor) -> Case:
    """Inputs a and b; afterwards a holds old b and b holds old a, and so do the returns."""
    old_a, old_b = a.clone(), b.clone()
    return Case(
        inputs={"a": a, "b": b}, after={"a": old_b, "b": old_a}, returns={"a": old_b, "b": old_a}
    )


def fp32_case(n: int = GATE_N) -> Case:
    a = torch.arange(n, dtype=torch.float32)
    return swap_case(a, a + 2**21)


def bf16_case() -> Case:
    a = torch.arange(GATE_N, dtype=torch.bfloat16)
    return swap_case(a, -1 - a)


def int64_case() -> Case:
    a = torch.arange(GATE_N, dtype=torch.int64)
    return swap_case(a, a + 2**21)


def fp32_strided_case() -> Case:
    a_buffer = torch.arange(2 * GATE_N, dtype=torch.float32)
    b_buffer = a_buffer + 2**21
    return swap_case(a_buffer[::2], b_buffer[::2])


def fp32_n17_case() -> Case:
    return fp32_case(17)


INPUTS = {
    "fp32": fp32_case,
    "bf16": bf16_case,
    "int64": int64_case,
    "fp32_strided": fp32_strided_case,
    "fp32_n17": fp32_n17_case,
}

# Compiled variants first (asv's graphs open on the first value); the uncompiled reference last.
VARIANTS = tuple(
    Variant(config, kind, INPUTS[kind])
    for config, kind in (
        ("inductor", "fp32"),
        ("cpp_wrapper", "fp32"),
        ("dynamic", "fp32"),
        ("freezing", "fp32"),
        ("max_autotune", "fp32"),
        ("aoti", "fp32"),
        ("inductor", "bf16"),
        ("inductor", "int64"),
        ("inductor", "fp32_strided"),
        ("inductor", "fp32_n17"),
        ("export", "fp32"),
    )
)


def chosen_variants() -> tuple[Variant, ...]:
    """`VARIANTS`, or those named in `$WRITEBACK_VARIANTS` (comma-separated, for quick runs)."""
    text = os.environ.get("WRITEBACK_VARIANTS", "").strip()
    if not text:
        return VARIANTS
    names = [part.strip() for part in text.split(",") if part.strip()]
    by_name = {v.name: v for v in VARIANTS}
    if unknown := [name for name in names if name not in by_name]:
        raise ValueError(
            f"WRITEBACK_VARIANTS names unknown variants {unknown} (known: {list(by_name)})"
        )
    return tuple(v for v in VARIANTS if v.name in names)


def probe(
    variants: tuple[Variant, ...] = VARIANTS,
    controls=SWAP.controls,
    root=None,
    caches=None,
    workers: int = 1,
) -> dict:
    """The record for this build: every (control, variant), saved under `root` when given;
    `caches(config)` names each configuration's Inductor cache (emptied first); `workers`
    processes probe the controls side by side."""
    set_single_thread()
    return probe_variants(
        SCENARIO,
        tuple(controls),
        variants,
        artifacts_root=root,
        inductor_cache=caches,
        workers=workers,
    )


def _config_cache(config: str):
    return inductor_cache(f"configs-{config}")


@metrics.asv_benchmarks(metrics.CONTRACT)
class Correctness:
    """Does each swap control keep the snapshot contract under each (configuration, input)?
    A number, never a raise for a wrong result, so `asv find` can bisect it."""

    params = [[c.name for c in SWAP.controls], [v.name for v in VARIANTS]]
    param_names = ["control", "variant"]
    # setup_cache builds five AOTInductor packages and attributes every wrong (control,
    # configuration) pair: tens of recompiles each
    timeout = 3600
    # explicit, so that editing this file does not hide the history (see asv_classes.py)
    version = "writeback-configs-2"  # every row now carries the alias coordinates

    def setup_cache(self):
        return probe(
            chosen_variants(),
            root=artifacts_root(),
            caches=_config_cache,
            workers=pool.workers_wanted(),
        )

    def setup(self, record, control, variant):
        knob = os.environ.get("WRITEBACK_VARIANTS", "")
        left_out = f"WRITEBACK_VARIANTS={knob}" if knob.strip() else ""
        self.row = usable_variant_row(record, control, variant, left_out)
