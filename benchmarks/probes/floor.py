"""The physical floor: the least work any correct swap needs, on the very tensors it swaps.

A fused in-place swap (`t = a[i]; a[i] = b[i]; b[i] = t`) reads both tensors once and writes
both once, in one pass, with no scratch. It is compiled once per machine and torch build by
`torch.utils.cpp_extension.load`, with the C++ compiler Inductor uses, optimised for
this host (`-O3 -march=native`) and without threads, into
`.asv/floor/<machine>/<torch build>/` of the project: two builds or machines never share an
extension binary. Where it cannot be built (no compiler,
no ninja, no headers in the build, a compile error) `swap_kernel` raises `Unsupported` with
the reason; there is no fallback.
"""

from __future__ import annotations

import functools
import inspect
import os
from pathlib import Path

import torch

from ..compat import Unsupported, build_key, inductor_cxx
from ..machine import machine_name

FLAGS = ("-O3", "-march=native")

# The headers the swap needs, not <torch/extension.h> (the whole C++ frontend), which
# `load_inline` would include: the same kernel with the binding `load_inline` writes
# (`_binding`) builds in a third of the time (7 s instead of 19 s here), and its calls take
# the same time (measured side by side: results/logs/floor-headers-torch-2.13.0.txt).
HEADERS = (
    "ATen/core/Tensor.h",
    "c10/util/Exception.h",
    "torch/csrc/utils/pybind.h",
    "torch/csrc/Exceptions.h",
)

SOURCE = (
    "".join(f"#include <{header}>\n" for header in HEADERS)
    + r"""
void swap_(at::Tensor a, at::Tensor b) {
  TORCH_CHECK(a.device().is_cpu() && b.device().is_cpu(), "the floor swaps CPU tensors");
  TORCH_CHECK(a.scalar_type() == at::kFloat && b.scalar_type() == at::kFloat,
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
)


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


def _binding(cpp_extension) -> str:
    """The module definition `load_inline(functions=["swap_"])` of this build writes: through
    `torch::wrap_pybind_function` (torch's error handling, some nanoseconds a call) where its
    `with_pytorch_error_handling` exists (on by default), else the plain function."""
    wrapped = (
        "with_pytorch_error_handling" in inspect.signature(cpp_extension.load_inline).parameters
    )
    function = "torch::wrap_pybind_function(swap_)" if wrapped else "swap_"
    return (
        f'PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {{\n  m.def("swap_", {function}, "swap_");\n}}\n'
    )


@functools.cache
def _built():
    """The compiled `swap_`, or why it cannot be built (cached either way: one try a process)."""
    try:
        cxx = inductor_cxx()
    except Unsupported as exc:
        return f"the floor cannot be built: {exc}"
    from torch.utils import cpp_extension

    if not cpp_extension.is_ninja_available():
        return "the floor cannot be built: cpp_extension needs ninja (pip install ninja)"
    roots = [Path(path) for path in cpp_extension.include_paths()]
    for header in HEADERS:
        if not any((root / header).is_file() for root in roots):
            return (f"the floor cannot be built: torch {torch.__version__} ships no {header} "
                    f"(looked in {', '.join(map(str, roots))})")  # fmt: skip
    folder = build_dir()
    folder.mkdir(parents=True, exist_ok=True)
    source, text = folder / "writeback_floor.cpp", SOURCE + _binding(cpp_extension)
    if not source.is_file() or source.read_text() != text:
        source.write_text(text)  # rewritten only when it changes: ninja rebuilds on its time
    previous = os.environ.get("CXX")
    os.environ["CXX"] = cxx  # cpp_extension compiles with $CXX
    try:
        module = cpp_extension.load(
            name="writeback_floor",
            sources=[str(source)],
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
