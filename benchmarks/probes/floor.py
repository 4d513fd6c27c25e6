"""The physical floor: the least work any correct swap needs, on the very tensors it swaps.

A fused in-place swap (`t = a[i]; a[i] = b[i]; b[i] = t`) reads both tensors once and writes
both once, in one pass, with no scratch. It is compiled once per machine and torch build by
`torch.utils.cpp_extension.load_inline`, with the C++ compiler Inductor uses, optimised for
this host (`-O3 -march=native`) and without threads, into
`.asv/floor/<machine>/<torch build>/` of the project: two builds or machines never share an
extension binary. Where it cannot be built (no compiler,
no ninja, no headers in the build, a compile error) `swap_kernel` raises `Unsupported` with
the reason; there is no fallback.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import torch

from ..compat import Unsupported, build_key, inductor_cxx
from ..machine import machine_name

FLAGS = ("-O3", "-march=native")

SOURCE = r"""
#include <torch/extension.h>

void swap_(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.device().is_cpu() && b.device().is_cpu(), "the floor swaps CPU tensors");
  TORCH_CHECK(a.scalar_type() == torch::kFloat && b.scalar_type() == torch::kFloat,
              "the floor swaps FP32 tensors");
  TORCH_CHECK(a.is_contiguous() && b.is_contiguous(), "the floor swaps contiguous tensors");
  TORCH_CHECK(a.numel() == b.numel(), "the floor swaps tensors of one length");
  float* __restrict__ x = a.data_ptr<float>();
  float* __restrict__ y = b.data_ptr<float>();
  const int64_t n = a.numel();
  for (int64_t i = 0; i < n; ++i) {
    const float t = x[i];
    x[i] = y[i];
    y[i] = t;
  }
}
"""


def build_dir() -> Path:
    """`.asv/floor/<machine>/<torch build>/` of the project that holds `benchmarks/` (asv
    imports the suite from there for every build; -march=native makes the binary the
    machine's own, so each build's binary is made once per machine)."""
    return Path(__file__).resolve().parents[2] / ".asv" / "floor" / machine_name() / build_key()


def swap_kernel():
    """`swap_(a, b)`: exchange two independent contiguous FP32 CPU tensors of one length."""
    kernel = _built()
    if isinstance(kernel, str):
        raise Unsupported(kernel)
    return kernel


def prepare() -> None:
    """Build (or load) the floor now, so that a later `swap_kernel` finds it; a floor that
    cannot be built is left for `swap_kernel` to report."""
    _built()


def description() -> str:
    """What the floor is on this build: the compiler and flags it was built with."""
    return f"fused in-place swap, {inductor_cxx()} {' '.join(FLAGS)}, one thread"


def checked_operands(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """`(a, b)`, or a ValueError saying why the floor cannot swap them."""
    for tensor in (a, b):
        if tensor.dtype != torch.float32 or tensor.device.type != "cpu":
            raise ValueError(
                f"the floor swaps FP32 CPU tensors, not {tensor.dtype} on {tensor.device}"
            )
        if not tensor.is_contiguous():
            raise ValueError("the floor swaps contiguous tensors")
    if a.shape != b.shape:
        raise ValueError(
            f"the floor swaps tensors of one shape, not {list(a.shape)} and {list(b.shape)}"
        )
    if _overlap(a, b):
        raise ValueError("the floor swaps independent tensors; these overlap in memory")
    return a, b


def _overlap(a: torch.Tensor, b: torch.Tensor) -> bool:
    a_end = a.data_ptr() + a.numel() * a.element_size()
    b_end = b.data_ptr() + b.numel() * b.element_size()
    return a.data_ptr() < b_end and b.data_ptr() < a_end


@functools.cache
def _built():
    """The compiled `swap_`, or why it cannot be built (cached either way: one try a process)."""
    try:
        cxx = inductor_cxx()
    except Unsupported as exc:
        return f"the floor cannot be built: {exc}"
    from torch.utils import cpp_extension

    if not cpp_extension.is_ninja_available():
        return "the floor cannot be built: load_inline needs ninja (pip install ninja)"
    header = Path(cpp_extension.include_paths()[0]) / "torch" / "extension.h"
    if not header.is_file():
        return (
            f"the floor cannot be built: torch {torch.__version__} ships no C++ headers ({header})"
        )
    folder = build_dir()
    folder.mkdir(parents=True, exist_ok=True)
    previous = os.environ.get("CXX")
    os.environ["CXX"] = cxx  # load_inline compiles with $CXX
    try:
        module = cpp_extension.load_inline(
            name="writeback_floor",
            cpp_sources=SOURCE,
            functions=["swap_"],
            extra_cflags=list(FLAGS),
            build_directory=str(folder),
        )
    except Exception as exc:  # a compile or link error: the build's headers or the compiler
        lines = [line for line in str(exc).splitlines() if line.strip()]
        return f"the floor cannot be built with {cxx}: {' / '.join(lines[-3:])[:600]}"
    finally:
        if previous is None:
            os.environ.pop("CXX", None)
        else:
            os.environ["CXX"] = previous
    return module.swap_
