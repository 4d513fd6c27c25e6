"""Compile a control the way each user configuration does, and say when a build lacks one.

    inductor      torch.compile(backend="inductor", fullgraph=True, dynamic=False), the suite's
    cpp_wrapper   the same with torch._inductor.config.cpp_wrapper=True (a C++ wrapper)
    dynamic       the same with dynamic=True (symbolic sizes)
    freezing      the same with torch._inductor.config.freezing=True
    max_autotune  the same with mode="max-autotune-no-cudagraphs"
    aoti          torch.export.export, torch._inductor.aoti_compile_and_package, then the package
                  loaded with torch._inductor.aoti_load_package and called on the inputs
    export        the exported program's .module(), not compiled: the reference for aoti

Every builder returns a callable that takes the inputs positionally, already compiled (the
first call, on inputs of the same kind, has been made), so the call that is checked is a warm
one as in the suite's `inductor` rows. An AOTInductor package is built afresh on every call
and loaded from the file that build wrote: given a folder, the package is kept there for
inspection (named by the control and a digest of its source and of the inputs' dtypes, shapes
and strides), replacing the one an earlier run kept; a kept package is never loaded, so no
verdict comes from a package built from another graph, configuration or torch build.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib
import inspect
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from ..compat import Unsupported, cxx_compiler_problem, lacking, missing_attributes

EXPORT_API = ("torch.export.export", "torch.export.ExportedProgram.module")
AOTI_API = (
    *EXPORT_API,
    "torch._inductor.aoti_compile_and_package",
    "torch._inductor.aoti_load_package",
)


@dataclass(frozen=True)
class Configuration:
    """One way users compile: `options` patch torch._inductor.config, `compile_kwargs` go to
    torch.compile; `route` is `compile`, `aoti` or `export`; `requires` the torch attributes
    it cannot run without; `attribution_problem` why `benchmarks/attribution.py` cannot name
    the pass behind a wrong call compiled this way (empty where it can)."""

    name: str
    route: str = "compile"
    options: dict = field(default_factory=dict)
    compile_kwargs: dict = field(default_factory=dict)
    requires: tuple[str, ...] = ()
    attribution_problem: str = ""

    def options_patched(self):
        """A context in which torch._inductor.config holds `options`."""
        return torch._inductor.config.patch(self.options)


AOTI_NOT_ATTRIBUTED = (
    "AOTInductor builds its package through torch.export and aoti_compile_and_package, not "
    "torch.compile, so the compiler bisector cannot swap its backend, and ablation would "
    "rebuild the whole package once for each of the tens of passes it tries"
)
EXPORT_NOT_ATTRIBUTED = "the exported program runs uncompiled: no Inductor pass to name"


CONFIGURATIONS = {
    c.name: c
    for c in (
        Configuration("inductor"),
        Configuration(
            "cpp_wrapper",
            options={"cpp_wrapper": True},
            requires=("torch._inductor.config.cpp_wrapper",),
        ),
        Configuration("dynamic", compile_kwargs={"dynamic": True}),
        Configuration(
            "freezing",
            options={"freezing": True},
            requires=("torch._inductor.config.freezing",),
        ),
        Configuration(
            "max_autotune",
            compile_kwargs={"mode": "max-autotune-no-cudagraphs"},
            requires=("torch._inductor.list_mode_options",),
        ),
        Configuration(
            "aoti", route="aoti", requires=AOTI_API, attribution_problem=AOTI_NOT_ATTRIBUTED
        ),
        Configuration(
            "export", route="export", requires=EXPORT_API, attribution_problem=EXPORT_NOT_ATTRIBUTED
        ),
    )
}


def configuration_problem(config: Configuration) -> str | None:
    """Why this torch build cannot compile the way `config` does, or None when it can."""
    for module in ("torch._inductor.config", "torch.export"):
        try:
            importlib.import_module(module)
        except ImportError as exc:
            return f"torch {torch.__version__} cannot import {module}: {exc}"
    if missing := missing_attributes(config.requires):
        return lacking(missing)
    mode = config.compile_kwargs.get("mode")
    if mode and mode not in torch._inductor.list_mode_options():
        return lacking([mode_name(mode)])
    if config.route != "export" and (problem := cxx_compiler_problem()):
        return problem
    return None


def mode_name(mode: str) -> str:
    """How a skip (and `compat.FIRST_RELEASE`) names a `torch.compile` mode."""
    return f"torch.compile mode {mode!r}"


@dataclass
class Built:
    """A ready callable; for `aoti`, the package it runs (built by this call)."""

    call: Callable
    package: str | None = None


def build_for(config: Configuration, fn, example_inputs, package_dir: Path | None) -> Built:
    """`fn` compiled the way `config` does (first call made on `example_inputs`, consumed).

    Raises `Unsupported` where the build lacks the configuration; a crash while compiling
    propagates with its cause.
    """
    if problem := configuration_problem(config):
        raise Unsupported(problem)
    if config.route == "export":
        return Built(_exported(fn, example_inputs).module())
    if config.route == "aoti":
        return _aoti(fn, example_inputs, package_dir)
    return Built(_compiled(config, fn, example_inputs))


def _compiled(config: Configuration, fn, example_inputs) -> Callable:
    torch._dynamo.reset()
    kwargs = {"fullgraph": True, "dynamic": False, **config.compile_kwargs}
    compiled = torch.compile(fn, backend="inductor", **kwargs)

    def call(*inputs):
        # the options must hold whenever dynamo may compile, and dynamo does not guard on them
        with config.options_patched():
            return compiled(*inputs)

    call(*example_inputs)
    return call


class _Calls(torch.nn.Module):
    """A module whose forward is the control: what torch.export takes."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, a, b):
        return self.fn(a, b)


def _exported(fn, example_inputs):
    return torch.export.export(_Calls(fn), tuple(example_inputs))


def _aoti(fn, example_inputs, package_dir: Path | None) -> Built:
    """A package built now from `fn` and loaded from the file this build wrote (see the module:
    one kept from an earlier run is removed first, never loaded). Without `package_dir` it is
    not kept: `Built.package` is None and its folder goes when the process exits."""
    example_inputs = tuple(example_inputs)
    kept = package_dir is not None
    if not kept:  # nowhere to keep it: a folder of this process's, gone at its exit
        package_dir = Path(tempfile.mkdtemp(prefix="writeback-aoti-"))
        atexit.register(shutil.rmtree, package_dir, ignore_errors=True)
    package_dir.mkdir(parents=True, exist_ok=True)
    package = package_dir / f"{package_name(fn, example_inputs)}.pt2"
    partial = package.with_suffix(".partial.pt2")
    for earlier in (package, partial):
        with contextlib.suppress(FileNotFoundError):
            earlier.unlink()
    built = torch._inductor.aoti_compile_and_package(
        _exported(fn, example_inputs), package_path=str(partial)
    )
    Path(built).replace(package)
    loaded = torch._inductor.aoti_load_package(str(package))
    return Built(loaded, package=str(package) if kept else None)  # never a path soon gone


def package_name(fn, inputs) -> str:
    """The control's name and a digest of its source and of every input's dtype, shape and
    stride: the file a package of this program is kept in."""
    spec = [(str(t.dtype), tuple(t.shape), tuple(t.stride())) for t in inputs]
    text = f"{inspect.getsource(fn)}\n{spec}"
    return f"{fn.__name__}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"
