"""Shims for torch internals that moved between releases, each with the releases it serves.

Every shim either returns what the running torch provides or raises `Unsupported` with the
reason; none of them guesses silently. `Unsupported` is a `NotImplementedError`, which asv
records as a skip (n/a) when it is raised in a benchmark's setup, so a shim turns into it only
the exceptions by which a release says it lacks what was asked (an `ImportError` or a missing
attribute, each named in its docstring); any other exception propagates, a failure to look at.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.metadata
import json
import os
import platform
import re
import shutil
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import torch

from .machine import PATCH_RECORD, build_folder, release_numbers


class Unsupported(NotImplementedError):
    """This torch build cannot run what was asked; the message says what is missing."""


def torch_identity() -> dict[str, str]:
    """The installed build: `torch.__version__`, the upstream commit it was built from and,
    for a release a patch build patched (tools/patch.py), `torch_patch`: the diff's sha256.

    Every release; one without `torch.version.git_version` says `unknown`."""
    git_version = getattr(getattr(torch, "version", None), "git_version", None) or "unknown"
    identity = {"torch_version": str(torch.__version__), "torch_git_version": str(git_version)}
    if patch := applied_patch():
        identity["torch_patch"] = patch
    return identity


def applied_patch() -> str | None:
    """The sha256 of the diff tools/patch.py applied to the installed torch, or None."""
    try:
        recorded = importlib.metadata.distribution("torch").read_text(PATCH_RECORD)
    except importlib.metadata.PackageNotFoundError:
        return None
    return json.loads(recorded)["diff_sha256"] if recorded else None


def build_key() -> str:
    """A folder name for this build, e.g. `torch-2.15.0+cpu-d0f2af8b`: version and commit."""
    return build_folder(torch_identity())


FIRST_RELEASE = {
    # what a control or configuration requires (`Control.requires`, `Configuration.requires`)
    # and what else a skip names, with the first release of builds-long.txt that has it, read
    # in the release wheels (the release before it lacks it). "2.1.0", the long history's
    # first release: every release the suite serves has it (releases before were not read).
    "torch._foreach_copy_": "2.1.0",  # 2.0.1's wheel has none
    "torch._foreach_add_": "2.1.0",
    "torch._foreach_mul": "2.1.0",
    "torch.func.vmap": "2.1.0",
    "torch.func.grad_and_value": "2.1.0",
    "torch.library.custom_op": "2.4.0",
    "torch.export.export": "2.1.0",
    "torch.export.ExportedProgram.module": "2.1.0",
    "torch._inductor.aoti_compile_and_package": "2.6.0",
    "torch._inductor.aoti_load_package": "2.6.0",
    "torch._inductor.config.cpp_wrapper": "2.1.0",
    "torch._inductor.config.freezing": "2.1.0",
    "torch._inductor.list_mode_options": "2.1.0",
    "torch.compile mode 'max-autotune-no-cudagraphs'": "2.1.0",
    "torch._inductor.compiler_bisector": "2.6.0",
}
"""The one table the skip reasons read: `lacking` names each missing thing's first release."""


def release(version: str | None = None) -> tuple[int, ...]:
    """The release numbers of a torch version, the running torch's by default (`2.1.0+cu121`
    -> (2, 1, 0); `machine.release_numbers`)."""
    return release_numbers(str(version if version is not None else torch.__version__))


def older_than(first: str) -> bool:
    """Whether the running torch is a release before `first` (a version like 2.4.0)."""
    return release() < release(first)


def lacking(names: list[str]) -> str:
    """The skip reason for a build without `names`: each named with the first release that
    has it (`FIRST_RELEASE`)."""
    described = [
        f"{name} (first in torch {FIRST_RELEASE[name]})"
        if name in FIRST_RELEASE
        else f"{name} (its first release is not in benchmarks/compat.py FIRST_RELEASE)"
        for name in names
    ]
    return f"torch {torch.__version__} has no {', '.join(described)}"


@dataclass(frozen=True)
class Limitation:
    """What releases before `first` cannot do, and the error by which they say so: an
    exception of the class named `raises` (its qualified name, Python's own unqualified)
    whose message contains one of `says`, raised itself or behind the one caught."""

    cannot: str
    raises: str
    says: tuple[str, ...]
    first: str

    def said_in(self, exc: BaseException) -> BaseException | None:
        """The exception in `exc`'s chain (`exception_chain`) that says it, or None."""
        return next((e for e in exception_chain(exc) if exception_name(e) == self.raises
                     and any(words in str(e) for words in self.says)), None)  # fmt: skip


LIMITATIONS = (
    Limitation(
        "lower a dtype view to a dtype of another bit width (Inductor's to_dtype_bitcast)",
        "torch._inductor.exc.LoweringException",  # its message starts with the NotImplementedError
        ("to different bitwidth type",),
        first="2.4.0",  # the NotImplementedError is in 2.3.1's lowering.py, not in 2.4.0's
    ),
    Limitation(
        "trace torch.func.vmap of a function transform into one graph (dynamo's "
        "capture_func_transforms is off by default before 2.4.0)",
        "torch._dynamo.exc.Unsupported",
        # the first measured on 2.1.0 and 2.2.0, the second on 2.3.1 (2.1.2-2.3.1's dynamo
        # refuses a vmap or grad it reaches with it)
        ("call_function args: NestedUserFunctionVariable()", "capture is disabled"),
        first="2.4.0",  # capture_func_transforms = False in 2.3.1's dynamo config, True in 2.4.0
    ),
    Limitation(
        "export a program that mutates its inputs (torch.export's aot_export bans it)",
        "RuntimeError",
        ("are mutated. This is currently banned in the aot_export workflow",),
        # 2.2.0's export turns user inputs into buffers around aot_export and records their
        # mutations (`user_inputs_to_mutate`); 2.1.2's has neither
        first="2.2.0",
    ),
)
"""Capabilities the old releases lack, as a compile on them fails: a skip there
(`limitation`), a failure on the releases that have the capability."""


def limitation(exc: BaseException) -> str | None:
    """The skip reason when `exc` is how this release says it lacks a capability a later
    release has (`LIMITATIONS`); None for any other exception, and for the same exception on
    a release that has the capability (a failure to look at)."""
    for known in LIMITATIONS:
        if older_than(known.first) and (said := known.said_in(exc)) is not None:
            return (
                f"torch {torch.__version__} cannot {known.cannot} (first in torch "
                f"{known.first}): {exception_name(said)}: {first_line(said)[:300]}"
            )
    return None


def exception_chain(exc: BaseException) -> list[BaseException]:
    """`exc` and the exceptions behind it: dynamo's `inner_exception` (the exception a
    backend raised inside `BackendCompilerFailed`), else `__cause__`."""
    chain = [exc]
    while len(chain) < 8:
        behind = getattr(chain[-1], "inner_exception", None) or chain[-1].__cause__
        if behind is None or behind in chain:
            break
        chain.append(behind)
    return chain


def exception_name(exc: BaseException) -> str:
    """The exception's class by its qualified name, Python's own by its bare name."""
    kind = type(exc)
    if kind.__module__ == "builtins":
        return kind.__qualname__
    return f"{kind.__module__}.{kind.__qualname__}"


def raised_at(exc: BaseException) -> str:
    """Where `exc` was raised, as ` (at torch/_inductor/scheduler.py:1234)`: the innermost
    frame of its traceback (as last raised) in a file that is not generated code, from
    `torch/` on where the file is torch's, else its name; "" without a traceback. Generated
    code is left out because its names differ from one compile to the next, so one failure
    would get many texts: FX's `<eval_with_key>.588`, and the modules Inductor writes into
    its cache (`cr7ctbq5....py`, a hash of their source). An old release's bare `assert`
    raises `AssertionError` with no message at all: the place is all that tells one such
    failure from another. The corpus's errors and the probes' both end with it."""
    frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ else []
    frames = [f for f in frames if not _generated(f.filename)]
    if not frames:
        return ""
    parts = Path(frames[-1].filename).parts
    shown = "/".join(parts[len(parts) - parts[::-1].index("torch") - 1 :]) if "torch" in parts \
        else parts[-1]  # fmt: skip
    return f" (at {shown}:{frames[-1].lineno})"


def _generated(filename: str) -> bool:
    """Whether `filename` is generated code: FX's (`<eval_with_key>.N`) or a module Inductor
    wrote into its cache (`$TORCHINDUCTOR_CACHE_DIR`, by default `torchinductor_<user>` in
    the temporary folder)."""
    cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    return (
        filename.startswith("<")
        or bool(cache and filename.startswith(os.path.join(cache, "")))
        or any(part.startswith("torchinductor_") for part in Path(filename).parts)
    )


def exception_summary(exc: BaseException, limit: int = 400) -> str:
    """`Class: first line` (at most `limit` characters of the line), and the exception behind
    it where there is one (`exception_chain`): `BackendCompilerFailed`'s first line is only
    `backend='inductor' raised:`, its cause says what failed."""
    head = first_line(exc)
    chain = exception_chain(exc)
    if len(chain) > 1 and not (first_line(chain[1]) and first_line(chain[1]) in head):
        head = f"{head} {type(chain[1]).__name__}: {first_line(chain[1])}".rstrip(": ")
    return f"{type(exc).__name__}: {head[:limit]}"


def first_line(exc: BaseException) -> str:
    """The first non-blank line of the exception's message."""
    lines = [line for line in str(exc).strip().splitlines() if line.strip()]
    return lines[0].strip() if lines else ""


def missing_attributes(dotted_names: tuple[str, ...]) -> list[str]:
    """The names in `dotted_names` (such as `torch._foreach_copy_`) this torch does not have.

    Every release (a name is missing where `getattr` finds none)."""
    missing = []
    for dotted in dotted_names:
        head, *rest = dotted.split(".")
        if head != "torch":
            raise ValueError(f"only torch attributes can be required, not {dotted!r}")
        obj = torch
        for part in rest:
            obj = getattr(obj, part, None)
            if obj is None:
                missing.append(dotted)
                break
    return missing


def import_problem(module: str) -> str | None:
    """Why `module` cannot be used next to this torch, or None when it can.

    Every release. A client library declares the torch releases it supports
    (`declared_torch_problem`): on any other it is not used, whether or not it would import.
    On a supported one, a client that fails to import with an `ImportError` (a module it
    imports is missing, or a name in one: a dependency left out, an API of a later torch) or
    an `AttributeError` (an attribute of torch it reads at import is missing) gives that as
    the reason. Any other exception propagates: the client is broken in a way no release
    explains.
    """
    if not module:
        return None
    if problem := declared_torch_problem(module):
        return problem
    try:
        importlib.import_module(module)
    except (ImportError, AttributeError) as exc:
        first = (str(exc).strip().splitlines() or [""])[0]
        return f"{module} cannot be imported with torch {torch.__version__}: {first[:300]}"
    return None


def declared_torch_problem(module: str) -> str | None:
    """Why this torch is not one the installed distribution of `module` supports, as its
    unconditional `Requires-Dist: torch...` says (tensordict 0.15.3: `torch>=2.11.0a0`); None
    where it is, or where nothing installed provides `module`. Release numbers are compared
    (`release`): a pre-release or nightly counts as its release."""
    top = module.split(".")[0]
    for name in importlib.metadata.packages_distributions().get(top, []):
        dist = importlib.metadata.distribution(name)
        for requirement in dist.requires or []:
            clauses = torch_clauses(requirement)
            if clauses is None or all(_satisfies(release(), c) for c in clauses):
                continue
            lowest = [".".join(map(str, release(v))) for op, v in clauses if op == ">="]
            where = f"torch {lowest[0]} and later" if lowest else "the torch releases it supports"
            return (
                f"{name} {dist.version} requires torch{','.join(o + v for o, v in clauses)} "
                f"(its package metadata), not torch {torch.__version__}: the suite measures "
                f"{name} {dist.version} on {where} (tools/install_build.py CLIENTS pins it)"
            )
    return None


_TORCH_REQUIREMENT = re.compile(r"torch(?![\w.-])\s*\(?([^;()]*)\)?\s*(;.*)?$")
_CLAUSE = re.compile(r"(>=|<=|==|!=|>|<)\s*([0-9][\w.]*)")


def torch_clauses(requirement: str) -> list[tuple[str, str]] | None:
    """The (operator, version) clauses of an unconditional requirement on torch (`torch>=2.3`,
    `torch (==2.2.2)`); None for a requirement on another package, or one with a marker
    (`; extra == "tests"`). A clause this cannot read raises ValueError naming it."""
    found = _TORCH_REQUIREMENT.match(requirement.strip())
    if found is None or found.group(2):
        return None
    clauses = []
    for text in filter(None, (part.strip() for part in found.group(1).split(","))):
        clause = _CLAUSE.fullmatch(text)
        if clause is None:
            raise ValueError(f"cannot read the torch requirement {requirement!r} (clause {text!r})")
        clauses.append((clause.group(1), clause.group(2)))
    return clauses


def _satisfies(numbers: tuple[int, ...], clause: tuple[str, str]) -> bool:
    """Whether release `numbers` satisfies one (operator, version) clause (`2.11` is 2.11.0)."""
    op, version = clause
    wanted = release(version)
    width = max(len(numbers), len(wanted))
    have = numbers + (0,) * (width - len(numbers))
    want = wanted + (0,) * (width - len(wanted))
    return {">=": have >= want, "<=": have <= want, "==": have == want, "!=": have != want,
            ">": have > want, "<": have < want}[op]  # fmt: skip


def set_single_thread() -> None:
    """One runtime thread, one inter-op thread, one compile thread (the write-up's settings).

    `set_num_interop_threads` raises once inter-op work has started (by then the count is
    whatever OMP/ATen chose at start-up, which `benchmarks/__init__.py` fixes to 1), and on
    older releases (2.1.0 measured; pytorch/pytorch#87960) a second call aborts the process
    from C++, which no handler can catch: it is called only while the count is not 1 already
    (reading it does not lock it). Every release; Inductor's `compile_threads` is set where the
    release has it.
    """
    torch.set_num_threads(1)
    if torch.get_num_interop_threads() != 1:
        with contextlib.suppress(RuntimeError):
            torch.set_num_interop_threads(1)
    inductor_config = _inductor_config()
    if hasattr(inductor_config, "compile_threads"):
        inductor_config.compile_threads = 1


def _inductor_config():
    from torch._inductor import config

    return config


@contextlib.contextmanager
def bisector_state_in(bisector, folder: str):
    """`torch._inductor.compiler_bisector.CompilerBisector` (`bisector`) keeping its progress
    files in `folder` for the duration (it deletes them when a bisection ends).

    Its `in_process_cache` names that folder from 2.7.0 on (read in the 2.7.0-2.9.0 wheels,
    used on 2.13.0); in 2.6.x, the bisector's first releases, `get_dir()` is the only place,
    under Inductor's cache directory, and is pointed at `folder` instead (2.6.0 measured).
    """
    if hasattr(bisector, "in_process_cache"):
        saved = bisector.in_process_cache
        bisector.in_process_cache = folder
        try:
            yield
        finally:
            bisector.in_process_cache = saved
        return
    with mock.patch.object(bisector, "get_dir", classmethod(lambda cls: folder)):
        yield


SHARED_HEADER_BUILD = "use_pch=True"
"""What torch 2.1 and 2.2's Inductor passes to `cpp_extension.load_inline` for a C++ wrapper
(torch/_inductor/codecache.py; 2.3 builds without it, read in its source): the precompiled
header `torch/include/torch/extension.h.gch` inside the installed torch is then built, or
rebuilt when its flags differ, by whichever compile finds it missing, with no lock and no
rename into place. Two processes compiling C++ wrappers at once in a fresh environment both
write it, and one compile reads it half written: `Error building extension ... [1/2] c++`
(measured: 2.2.0's `foreach_clones` under cpp_wrapper in the long history, twice; run alone it
builds and matches eager; a PCH cut short or rewritten mid-compile gives the same failure)."""


@functools.lru_cache(maxsize=1)
def cpp_wrapper_shares_a_header_build() -> bool:
    """Whether this build's C++ wrapper compiles through the shared precompiled header
    (`SHARED_HEADER_BUILD` in its Inductor's codecache.py): torch 2.1 and 2.2."""
    import inspect

    import torch._inductor.codecache as codecache

    return SHARED_HEADER_BUILD in inspect.getsource(codecache)


@contextlib.contextmanager
def one_cpp_wrapper_build_at_a_time(cpp_wrapper: bool):
    """Inside the block, no other process compiles a C++ wrapper with this installed torch, on
    builds whose C++ wrappers share one precompiled header (`cpp_wrapper_shares_a_header_build`):
    an exclusive `fcntl.flock` on the folder that holds the header (`torch/include/torch`), so
    no lock file is made anywhere (none in a temporary folder another user could prepare).
    Elsewhere, or for a compile that is not a C++ wrapper, the block runs at once."""
    if not cpp_wrapper or not cpp_wrapper_shares_a_header_build():
        yield
        return
    import fcntl

    headers = Path(torch.__file__).parent / "include" / "torch"
    folder = os.open(headers, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(folder, fcntl.LOCK_EX)
        yield
    finally:
        os.close(folder)  # releases the lock


def fake_cuda_guard_on_this_thread() -> None:
    """Register the fake CUDA device guard from this (the main) thread, before another thread
    compiles: what `FakeTensorMode.__enter__` does at its first entry on a machine without a
    CUDA device (`torch._C._ensureCUDADeviceGuardSet`), done early and from a thread that
    lives as long as the process. Torch 2.10.0 and 2.11.0 (CUDA builds, no GPU): libc10's
    `ensureCUDADeviceGuardSet` keeps the fake guard in a `thread_local` and stores its
    address in the process-wide device guard registry, so the first thread to enter fake mode
    leaves a dangling pointer when it exits, and a later compile in that process or a fork of
    it calls through freed memory (SIGSEGV). The corpus judges its catalogue in a thread
    beside its workers (`pool.run`'s `beside`); 2.10.0 and 2.11.0 died so on the AMD avx512
    machine (read in a core dump: the registry's entry was heap memory, its vtable freed).
    2.13.0 and 2.15.0's libc10 keep a function-local static instead (2.12 was not read;
    `tests/fake_cuda_guard_probe.py` shows either). Once registered, later calls
    from other threads leave it in place (the fake guard reports devices). Builds without
    the function, or with a CUDA device, are left alone."""
    ensure = getattr(torch._C, "_ensureCUDADeviceGuardSet", None)
    if ensure is not None and not torch.cuda.is_available():
        ensure()


def storage_address(tensor: torch.Tensor) -> int:
    """Address of the storage behind `tensor` (`untyped_storage` from 2.0, `storage` before)."""
    if hasattr(tensor, "untyped_storage"):
        return tensor.untyped_storage().data_ptr()
    return tensor.storage().data_ptr()


def run_and_get_code(fn, *args):
    """Run `fn` once and return (result, [generated wrapper source, ...]).

    `torch._inductor.utils.run_and_get_code` exists from 2.0 on; it resets dynamo first, so
    the call it makes is a cold one and its inputs are consumed.
    """
    try:
        from torch._inductor.utils import run_and_get_code as capture
    except ImportError as exc:
        raise Unsupported(f"torch {torch.__version__} has no run_and_get_code: {exc}") from exc
    return capture(fn, *args)


def fresh_inductor_cache():
    """Inductor's own context for a private, temporary cache directory: it also clears the
    in-process caches that remember paths inside it, on entry and on exit.

    `torch._inductor.utils.fresh_cache` in the releases that have that name (2.13 and 2.15 keep
    the older one too); `fresh_inductor_cache` in the releases before the rename. A release
    with neither raises `Unsupported`.
    """
    from torch._inductor import utils

    fresh = getattr(utils, "fresh_cache", None) or getattr(utils, "fresh_inductor_cache", None)
    if fresh is None:
        raise Unsupported(f"torch {torch.__version__} has no fresh_cache in torch._inductor.utils")
    return fresh()


@functools.lru_cache(maxsize=1)
def vector_isa() -> str:
    """The vector ISA Inductor generates CPU code for (`avx512`, `avx2`, ... or `scalar`).

    `torch._inductor.cpu_vec_isa.pick_vec_isa` from 2.5 on; `torch._inductor.codecache` before.
    Later releases append extensions (`avx512 avx512_vnni amx_tile`); the first word is the
    vector width that shapes the loops.
    """
    try:
        from torch._inductor import cpu_vec_isa as where
    except ImportError:
        from torch._inductor import codecache as where
    pick_vec_isa = getattr(where, "pick_vec_isa", None)
    if pick_vec_isa is None:
        raise Unsupported(f"torch {torch.__version__} has no pick_vec_isa")
    with _isa_check_cache():
        _check_candidates_side_by_side(where)
        isa = pick_vec_isa()
    return str(isa).split()[0] if isa and str(isa).strip() else "scalar"


def _check_candidates_side_by_side(where) -> None:
    """Inductor checks the candidate ISAs one after another (each a compile, then a Python
    process that loads the result); check the ones this CPU claims side by side first, so that
    its own check finds each answer made (`VecISA.__bool__` is cached per candidate). The
    answers are Inductor's own. A build without these internals checks them in turn."""
    candidates = getattr(where, "supported_vec_isa_list", None)
    claimed = getattr(where, "x86_isa_checker", None)
    if not candidates or claimed is None or platform.machine() not in ("x86_64", "AMD64"):
        return
    flags = claimed()
    chosen = [isa for isa in candidates if all(flag in flags for flag in str(isa).split())]
    if len(chosen) > 1:
        with ThreadPoolExecutor(len(chosen), thread_name_prefix="writeback-isa") as threads:
            list(threads.map(bool, chosen))


@contextlib.contextmanager
def _isa_check_cache():
    """Inductor decides the ISA by compiling and loading a test library per candidate ISA into
    its cache (10-12 s cold, 1-2 s when they are there). Each process asks once; the compile
    caches are emptied before every probe, so without a folder of its own every probe process
    (and every pool worker) would build them again. The folder is this machine's and build's
    (`<cache root>/isa-check/<machine>/<build>`): the libraries only say whether this
    compiler and CPU can build and load code for an ISA with this build's headers; no compiled
    control is kept there."""
    from . import artifacts
    from .machine import machine_name

    with artifacts.inductor_cache_within(
        artifacts.cache_root() / "isa-check" / machine_name() / build_key()
    ):
        yield


def cxx_compiler_problem() -> str | None:
    """Why Inductor cannot build CPU kernels here, or None when a C++ compiler is found.

    Every release: `torch._inductor.config.cpp.cxx` names the compilers Inductor searches
    (`g++` where a release lacks it)."""
    inductor_config = _inductor_config()
    cxx = getattr(getattr(inductor_config, "cpp", None), "cxx", (None, "g++"))
    names = [name for name in cxx if name] if isinstance(cxx, tuple) else [cxx]
    if any(shutil.which(name) for name in names):
        return None
    return (
        f"no C++ compiler found (looked for {', '.join(names)}): Inductor builds CPU kernels "
        "with one. Install g++ (Debian/Ubuntu: apt-get install g++) or set CXX."
    )


def inductor_cxx() -> str:
    """The C++ compiler Inductor builds its CPU kernels with (a path or a command name).

    `torch._inductor.cpp_builder.get_cpp_compiler` from 2.5 on, `codecache.cpp_compiler` from
    2.0 to 2.4; both search `config.cpp.cxx` and honour `$CXX`, and where none of them runs
    raise `torch._inductor.exc.InvalidCxxCompiler` (every 2.x release): that, and only that,
    is `Unsupported` here.
    """
    from torch._inductor.exc import InvalidCxxCompiler

    try:
        from torch._inductor.cpp_builder import get_cpp_compiler
    except ImportError:
        try:
            from torch._inductor.codecache import cpp_compiler as get_cpp_compiler
        except ImportError as exc:
            raise Unsupported(f"torch {torch.__version__} names no Inductor C++ compiler") from exc
    try:
        return get_cpp_compiler()
    except InvalidCxxCompiler as exc:
        raise Unsupported(cxx_compiler_problem() or f"no C++ compiler for Inductor: {exc}") from exc


def profiled_call(fn, *args):
    """Call `fn(*args)` once under the CPU profiler with memory events, return the profile.

    Every 2.x release (`torch.profiler.profile` with `profile_memory`)."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=activities, profile_memory=True) as prof:
        fn(*args)
    return prof


def memory_events(prof) -> list[tuple[int, int]]:
    """(start time in ns, signed bytes) of every `[memory]` event, in time order.

    Read from the raw kineto events (`prof.profiler.kineto_results`, 1.9 on): the aggregated
    views (`key_averages`) fold an allocation and its free into one row and show 0.
    """
    events = []
    for event in prof.profiler.kineto_results.events():
        if event.name() == "[memory]":
            events.append((_start_ns(event), int(event.nbytes())))
    return sorted(events, key=lambda item: item[0])


def _start_ns(event) -> int:
    """A kineto event's start: `start_ns` where the release has it, else `start_us`."""
    if hasattr(event, "start_ns"):
        return int(event.start_ns())
    return int(event.start_us()) * 1000


GRAPH_EVENT = "## Call CompiledFxGraph"
"""The range Inductor opens around every call of a compiled graph (in its output_code.py from
2.9.0 on: not in 2.8.0's wheel; seen on 2.13 and 2.15)."""

REGION_EVENT = "Torch-Compiled Region"
"""The range dynamo opens around every compiled frame it runs: in libtorch_python's frame
evaluation from 2.2.0 to 2.5.1, in convert_frame.py from 2.6.0 (read in the wheels of 2.1.0 to
2.10.0; 2.1.0's and 2.1.2's have none). Builds whose profiler marks no graph call (2.4 and 2.7
were seen so) are counted by it: with fullgraph=True a compiled frame runs exactly one graph."""

LOOKUP_EVENT = "TorchDynamo Cache Lookup"
"""The range dynamo opens around its cache lookup for a frame, where a warm call finds its
compiled code: on 2.1.x, which mark no compiled region, the one range every compiled call
opens, exactly once a call (2.1.0 measured: one range for one warm call, three for three, in
each of three controls)."""

REGION_FIRST = "2.2.0"


def entrypoint_event(names: list[str]) -> str:
    """The profiler range that marks each compiled-graph call among `names` (a profiled call's
    event names): `GRAPH_EVENT`, else `REGION_EVENT`, from 2.2.0 on; `LOOKUP_EVENT` before.

    Raises RuntimeError listing the names seen when none of this release's ranges is there:
    the call entered no compiled code this module recognises, and 0 would be a count of nothing.
    """
    markers = (LOOKUP_EVENT,) if older_than(REGION_FIRST) else (GRAPH_EVENT, REGION_EVENT)
    for event in markers:
        if any(name.startswith(event) for name in names):
            return event
    seen = ", ".join(dict.fromkeys(names)) or "no events"
    raise RuntimeError(
        f"the profiled call shows no {' nor '.join(map(repr, markers))}, the compiled-call "
        f"ranges of torch {torch.__version__}; events seen: {seen[:600]}"
    )


def event_names(prof) -> list[str]:
    """Names of every raw profiler event, in time order (`kineto_results`, 1.9 on)."""
    events = sorted(prof.profiler.kineto_results.events(), key=_start_ns)
    return [event.name() for event in events]
