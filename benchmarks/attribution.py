"""Name the Inductor pass behind a wrong verdict: PyTorch's compiler bisector first, then ablation.

`attribute(scenario, control, size)` returns one JSON-ready dict:

    {"method": "compiler_bisector" | "ablation" | None, "backend", "subsystem",
     "bisect_number", "pass", "passes", "note", "seconds"}

`passes` lists every pass named, each as {"subsystem", "pass"} (ablation may name several);
`subsystem` and `pass` are the first of them.

1. `torch._inductor.compiler_bisector.CompilerBisector.do_bisect` where the build has it: it
   recompiles the control with whole backends, then subsystems, then single applications
   switched off, and names the first that makes the call exact.
   Where it finds the call already wrong with `eager` or `aot_eager` (dynamo, AOTAutograd),
   that is the answer: the fault is before Inductor, so no Inductor pass is named.
2. Where it names no subsystem otherwise (or the build has no bisector): ablation. The
   candidate passes are read from the installed build: every module-level function,
   `PatternMatcherPass` and custom-pass setting that Inductor's three graph pipelines
   (`pre_grad_passes`, `joint_graph_passes`, `post_grad_passes`) refer to, kept when a
   compile of this control actually calls it on a graph. Each is replaced by a no-op alone,
   the control recompiled and the contract re-checked; every pass whose removal alone makes
   the call exact is named. A pass that left every graph it was called on as it was (the same
   nodes, targets, arguments, metadata and tensor layouts: `graph_state`) is not recompiled:
   without it the compile is the same one, so the call stays wrong.
3. Otherwise `method` and `pass` are None and `note` says why.

Every compile here starts from a reset dynamo, with the FX graph and AOTAutograd caches off,
so no compile reuses a graph compiled with other passes. The C++ kernels are built into the
run's own Inductor cache when the compile runs in one (a probe's, emptied for the run), where a
kernel is found by a hash of its source and build command: the kernel the probe built for
this control is loaded, not built again (0.5-1.3 s a control); anywhere else, into a private
temporary cache.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import shutil
import sys
import tempfile
import time
import types
from collections.abc import Callable
from dataclasses import dataclass
from unittest import mock

import torch

from . import artifacts
from .compat import bisector_state_in, exception_summary, lacking
from .compat import fresh_inductor_cache as fresh_cache
from .compiled import build
from .contract import check
from .scenario import Control, Scenario

KNOB = "WRITEBACK_ATTRIBUTION"
PIPELINES = (
    ("pre_grad_passes", "torch._inductor.fx_passes.pre_grad", "pre_grad_passes"),
    ("joint_graph_passes", "torch._inductor.fx_passes.joint_graph", "joint_graph_passes"),
    ("post_grad_passes", "torch._inductor.fx_passes.post_grad", "post_grad_passes"),
)
"""(subsystem as the bisector names it, module, pipeline function) of Inductor's graph passes."""

GRAPH_PASS_SUBSYSTEMS = {subsystem for subsystem, _, _ in PIPELINES}

BEFORE_INDUCTOR = {"eager": "dynamo alone", "aot_eager": "dynamo and AOTAutograd"}
"""The bisector's backends that run none of Inductor (its decomposition backends may use
Inductor's decompositions, so they are ablated like Inductor itself)."""


def empty_result(note: str) -> dict:
    """A result that attributes nothing, with the reason."""
    return {
        "method": None,
        "backend": None,
        "subsystem": None,
        "bisect_number": None,
        "pass": None,
        "passes": [],
        "note": note,
        "seconds": None,
    }


def enabled() -> bool:
    """False when `$WRITEBACK_ATTRIBUTION` is `0` (quick runs); on by default."""
    return os.environ.get(KNOB, "1").strip() != "0"


def attribute_if_enabled(scenario: Scenario, control: Control, size) -> dict:
    """`attribute(...)`, or a result saying it was not run when the knob switches it off."""
    if not enabled():
        return empty_result(f"not run: {KNOB}=0")
    return attribute(scenario, control, size)


def attribute(scenario: Scenario, control: Control, size, *, bisector: bool = True) -> dict:
    """Which part of Inductor makes `control` break the contract at `size` (see the module).

    `bisector=False` goes straight to ablation (to test it alone)."""
    return attribute_check(_contract_holds(scenario, control, size), bisector=bisector)


def attribute_check(holds: Callable[[], bool], *, bisector: bool = True) -> dict:
    """`attribute` for any check: `holds()` compiles for Inductor afresh (the bisector swaps
    the backend and config under it), returns whether the call is exact, and raises when the
    compile or the call fails (the generated corpus's oracle, `benchmarks/corpus/run.py`)."""
    started = time.perf_counter()
    with _private_compiles():
        result = _attribute(holds, bisector)
    result["seconds"] = round(time.perf_counter() - started, 1)
    return result


def named_passes(found: dict) -> set[str]:
    """The passes an attribution result names."""
    return {entry["pass"] for entry in found.get("passes") or [] if entry.get("pass")}


def exact_without(found: dict, holds: Callable[[], bool]) -> bool | None:
    """Whether `holds()` holds with every pass that attribution result `found` names switched
    off: True when the same passes are behind this check's fault. None when `found` names no
    pass; False when the check holds with them on, when its compile does not call them (its
    fault is another's) or when it cannot compile without them."""
    named = named_passes(found)
    if not named:
        return None
    with _private_compiles():
        held = []
        candidates = [c for c in ran_passes(lambda: held.append(holds()) or held[-1])
                      if c.name in named]  # fmt: skip
        if held[0] or not candidates:  # exact with them on, or they never ran: not this fault
            return False
        with contextlib.ExitStack() as stack:
            for candidate in candidates:
                stack.enter_context(candidate.disabled())
            try:
                return holds()
            except Exception:  # noqa: BLE001  a pass the lowering needs: no answer, not the same
                return False


def exact_without_each(found: dict, judge: Callable[[], list[bool]]) -> list[bool | None] | None:
    """`exact_without` for many checks compiled together: `judge()` compiles them once and
    says, for each, whether it holds. None when `found` names no pass.

    Two compiles for all of them instead of two each: one with the named passes on (recording
    which ran), one with them off. A check that held with them on in the shared compile, or
    every check when the shared compile without them fails, gets None: it is to be checked
    alone (`exact_without`), since only its own compile can say. Otherwise True when it holds
    with them off (the same passes are behind its fault), False when it does not or when the
    passes never ran. What `judge` raises with the passes on, this raises."""
    named = named_passes(found)
    if not named:
        return None
    with _private_compiles():
        held: list[list[bool]] = []
        ran = ran_passes(lambda: held.append(judge()) or all(held[-1]))
        candidates = [c for c in ran if c.name in named]
        if not candidates:
            return [None if before else False for before in held[0]]
        with contextlib.ExitStack() as stack:
            for candidate in candidates:
                stack.enter_context(candidate.disabled())
            try:
                after = judge()
            except Exception:  # noqa: BLE001  the shared compile fails without them: each alone
                return [None] * len(held[0])
    return [None if before else now for before, now in zip(held[0], after)]


def exact_without_batched(found: dict, checks: list, shared: list[int],
                          judge_shared: Callable[[], list[bool]],
                          alone: Callable[[object], bool | None]) -> list:  # fmt: skip
    """`exact_without` of each of `checks`: the ones at positions `shared` (when more than one)
    compiled together by `judge_shared()` (`exact_without_each`: two compiles for all of them);
    a check the shared compile cannot answer for, every check when it fails, and every other
    check get `alone(check)`, their own compiles. The corpus's member checks and the catalogue
    match both use it."""
    verdicts: list = [None] * len(checks)
    if len(shared) > 1 and named_passes(found):
        try:
            each = exact_without_each(found, judge_shared) or []
        except Exception:  # noqa: BLE001  the shared compile failed: each alone
            each = []
        for k, verdict in zip(shared, each):
            verdicts[k] = verdict
    return [alone(check) if verdict is None else verdict
            for check, verdict in zip(checks, verdicts)]  # fmt: skip


def _attribute(holds: Callable[[], bool], bisector: bool) -> dict:
    if holds():
        return empty_result("exact under Inductor in this process: nothing to attribute")
    bisected, bisector_note = _bisect(holds) if bisector else (None, "bisector not asked")
    if bisected is not None:
        return bisected
    return _ablate(holds, bisector_note)


def _contract_holds(scenario: Scenario, control: Control, size) -> Callable[[], bool]:
    def holds() -> bool:
        compiled = build(control.fn, "inductor", control.fullgraph)  # the bisector may swap it
        with torch.no_grad():  # the same contract as the verdict: eager's aliasing included
            return check(compiled, scenario.case(control, size), reference=control.fn).ok

    return holds


@contextlib.contextmanager
def _private_compiles():
    """No FX graph or AOTAutograd cache hits; kernels in this run's Inductor cache, else in a
    fresh temporary one (see the module)."""
    from torch._inductor import config as inductor_config

    functorch_config = importlib.import_module("torch._functorch.config")
    no_graph_cache = {"fx_graph_cache": False} if hasattr(inductor_config, "fx_graph_cache") else {}
    no_autograd_cache = (
        functorch_config.patch(enable_autograd_cache=False)
        if hasattr(functorch_config, "enable_autograd_cache")
        else contextlib.nullcontext()
    )
    kernels = contextlib.nullcontext() if artifacts.in_this_runs_cache() else fresh_cache()
    try:
        with kernels, inductor_config.patch(no_graph_cache), no_autograd_cache:
            yield
    finally:
        torch._dynamo.reset()


# --- the compiler bisector -------------------------------------------------------------------


def _bisect(holds: Callable[[], bool]) -> tuple[dict | None, str]:
    """The bisector's attribution, or (None, why it gave none)."""
    try:
        from torch._inductor import compiler_bisector
    except ImportError:
        return None, lacking(["torch._inductor.compiler_bisector"])
    transcript = io.StringIO()
    try:
        with _bisector_state_restored(compiler_bisector), contextlib.redirect_stdout(transcript):
            found = compiler_bisector.CompilerBisector.do_bisect(holds)
    except Exception as exc:  # the bisector's own failure: say so, then ablate
        return None, f"compiler bisector failed: {exception_summary(exc, 200)}"
    if found is None:
        return None, "compiler bisector: every backend kept the contract (not reproduced)"
    if found.subsystem is None and found.backend in BEFORE_INDUCTOR:
        return _before_inductor(found.backend), ""
    if found.subsystem is None:
        return None, f"compiler bisector: {_conclusion(transcript.getvalue())}"
    return _bisector_result(found), ""


def _before_inductor(backend: str) -> dict:
    """The call is already wrong without Inductor: no Inductor pass can be named, and
    ablating Inductor's passes one by one cannot make it exact (it took 5-7 s a control and
    never named one), so it is not tried."""
    result = empty_result(
        f"the call is already wrong with the {backend} backend ({BEFORE_INDUCTOR[backend]}), "
        "before any Inductor pass runs: no Inductor pass to name"
    )
    result.update(method="compiler_bisector", backend=backend)
    return result


def _conclusion(transcript: str) -> str:
    """The bisector's last finding (it prints its progress, then its clean-up)."""
    lines = [line.strip() for line in transcript.splitlines() if "issue is in" in line]
    return lines[-1] if lines else "no conclusion printed"


def _bisector_result(found) -> dict:
    result = empty_result(f"compiler bisector debug info: {found.debug_info}")
    graph_pass = found.subsystem in GRAPH_PASS_SUBSYSTEMS and found.debug_info
    name = _function_name(found.debug_info) if graph_pass else None
    result.update(
        method="compiler_bisector",
        backend=found.backend,
        subsystem=found.subsystem,
        bisect_number=found.bisect_number,
        passes=[{"subsystem": found.subsystem, "pass": name}] if name else [],
        **{"pass": name},
    )
    return result


def _function_name(pass_name: str) -> str:
    """The bisector names a pass as Inductor's pipeline does; a custom pass by its setting
    (`post_grad_custom_post_pass`): name the function held there instead."""
    from torch._inductor import config as inductor_config

    if _is_custom_pass_setting(inductor_config, pass_name):
        return _callable_name(getattr(inductor_config, pass_name))
    return pass_name


def _callable_name(value) -> str:
    if isinstance(value, list):
        return "+".join(_callable_name(item) for item in value)
    return getattr(value, "__name__", type(value).__name__)


@contextlib.contextmanager
def _bisector_state_restored(module):
    """Run the bisector on a private state directory; put its class and module state back.

    It keeps its progress in files under a directory (`compat.bisector_state_in`) and in class
    attributes; it deletes that directory when it finishes.
    """
    bisector = module.CompilerBisector
    enabled = bisector.bisection_enabled
    backends = {name: list(subsystems) for name, subsystems in module.BACKENDS.items()}
    private = tempfile.mkdtemp(prefix="writeback-bisect-")
    try:
        with bisector_state_in(bisector, private):
            yield
    finally:
        bisector.bisection_enabled = enabled
        module.BACKENDS.clear()
        module.BACKENDS.update(backends)
        module.subsystem_call_counter.clear()
        shutil.rmtree(private, ignore_errors=True)


# --- ablation --------------------------------------------------------------------------------


@dataclass
class Candidate:
    """One pass a pipeline refers to, and how to switch it off."""

    subsystem: str
    name: str
    owner: object
    attribute: str
    kind: str  # "function", "pattern_pass" or "config"
    returns: str = "none"  # what a no-op gives back: "none", "graph" (its argument) or "zero"
    changed: bool = True  # whether it changed a graph it was called on (ran_passes)

    def disabled(self):
        """A context in which this pass does nothing."""
        if self.kind == "config":
            return self.owner.patch({self.attribute: None})
        return mock.patch.object(self.owner, self.attribute, _no_op(self.returns))


def _ablate(holds: Callable[[], bool], bisector_note: str) -> dict:
    candidates = ran_passes(holds)
    named, broken = [], []
    unchanged = sum(not c.changed for c in candidates)
    for candidate in candidates:
        if not candidate.changed:
            continue  # without it the compile is the same one: still wrong
        with candidate.disabled():
            try:
                exact = holds()
            except Exception:  # some passes are required for lowering; removal is no answer
                exact = False
                broken.append(candidate.name)
        if exact:
            named.append(candidate)
    tried = (
        f"{bisector_note}; ablation: {len(candidates)} passes ran on this control's graphs, "
        f"each disabled alone"
        + (f" ({len(broken)} could not compile without: {', '.join(broken)})" if broken else "")
        + (
            f", but {unchanged} left every graph as it was and were not recompiled"
            if unchanged
            else ""
        )
    ).lstrip("; ")
    if not named:
        return empty_result(f"not attributed: {tried}; no single removal made the call exact")
    result = empty_result(
        f"{tried}; exact without: " + ", ".join(f"{c.subsystem}.{c.name}" for c in named)
    )
    result.update(
        method="ablation",
        backend="inductor",
        subsystem=named[0].subsystem,
        passes=[{"subsystem": c.subsystem, "pass": c.name} for c in named],
        **{"pass": named[0].name},
    )
    return result


def ran_passes(holds: Callable[[], bool]) -> list[Candidate]:
    """The candidate passes a compile of this control calls on an FX graph, in pipeline order."""
    discovered = discover_passes()
    candidates = [c for c in discovered if c.kind != "config"]
    calls: dict[int, tuple[str, set[str], list[bool]]] = {}
    with contextlib.ExitStack() as stack:
        for index, candidate in enumerate(candidates):
            original = getattr(candidate.owner, candidate.attribute)
            recorder = _recorder(original, index, calls)
            stack.enter_context(mock.patch.object(candidate.owner, candidate.attribute, recorder))
        holds()
    ran = []
    for index, candidate in enumerate(candidates):
        if index in calls:
            candidate.returns, stages, changed = calls[index]
            candidate.changed = any(changed)
            candidate.subsystem = ",".join(s for _, s in sorted(_ordered(stages)))
            ran.append(candidate)
    return ran + [c for c in discovered if c.kind == "config"]


def _ordered(stages: set[str]) -> list[tuple[int, str]]:
    order = [subsystem for subsystem, _, _ in PIPELINES]
    return [(order.index(s) if s in order else len(order), s) for s in stages]


def discover_passes() -> list[Candidate]:
    """Everything the installed build's graph pipelines refer to that could be a pass."""
    from torch._inductor import config as inductor_config
    from torch._inductor.pattern_matcher import PatternMatcherPass

    found = []
    for subsystem, module_name, function_name in PIPELINES:
        module = importlib.import_module(module_name)
        pipeline = getattr(module, function_name)
        for name in dict.fromkeys(_referenced_names(pipeline.__code__)):
            value = getattr(module, name, None)
            if isinstance(value, types.FunctionType) and value is not pipeline:
                if value.__module__.startswith("torch."):
                    found.append(Candidate(subsystem, name, module, name, "function"))
            elif isinstance(value, PatternMatcherPass):
                found.append(Candidate(subsystem, name, value, "apply", "pattern_pass"))
            elif isinstance(value, (list, tuple)):
                found += [
                    Candidate(subsystem, f"{name}[{i}]", item, "apply", "pattern_pass")
                    for i, item in enumerate(value)
                    if isinstance(item, PatternMatcherPass)
                ]
            elif _is_custom_pass_setting(inductor_config, name):
                held = _callable_name(getattr(inductor_config, name))
                found.append(Candidate(subsystem, held, inductor_config, name, "config"))
    return found


def _is_custom_pass_setting(inductor_config, name: str) -> bool:
    """A config entry such as `post_grad_custom_post_pass` that holds a user's pass."""
    value = getattr(inductor_config, name, None)
    return "custom" in name and (callable(value) or bool(isinstance(value, list) and value))


def _referenced_names(code: types.CodeType) -> list[str]:
    """Global and attribute names `code` uses, with those of its lambdas and inner functions."""
    names = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names += _referenced_names(const)
    return names


def _recorder(original, index: int, calls: dict[int, tuple[str, set[str], list[bool]]]):
    def record(*args, **kwargs):
        graphs = [arg for arg in args if isinstance(arg, (torch.fx.Graph, torch.fx.GraphModule))]
        if not graphs:
            return original(*args, **kwargs)
        before = graph_state(graphs)
        result = original(*args, **kwargs)
        returns = _returns(result)
        _, stages, changed = calls.setdefault(index, (returns, set(), []))
        stages.add(_calling_pipeline())
        changed.append(graph_state([result] if returns == "graph" else graphs) != before)
        return result

    return record


def graph_state(graphs: list) -> str:
    """Everything of `graphs` a later pass or the lowering reads: each node's op, target,
    arguments and users (the graph's text), its metadata's keys and plain values, and the
    shape, strides, offset, dtype and device of the tensors it describes."""
    lines = []
    for graph in graphs:
        graph = graph.graph if isinstance(graph, torch.fx.GraphModule) else graph
        lines.append(str(graph))
        for node in graph.nodes:
            meta = {key: _plain(value) for key, value in sorted(node.meta.items())}
            lines.append(f"{node.name} {meta}")
    return "\n".join(lines)


def _plain(value):
    """A metadata value as text: tensors by their layout, plain values as they are, other
    objects by their type (stack traces and module stacks are strings or type names here)."""
    if isinstance(value, torch.Tensor):
        try:
            return (tuple(value.shape), value.stride(), value.storage_offset(),
                    str(value.dtype), str(value.device))  # fmt: skip
        except (RuntimeError, NotImplementedError):  # sparse and other strideless layouts
            return (tuple(value.shape), str(value.layout), str(value.dtype), str(value.device))
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool, torch.dtype)):
        return str(value)
    return type(value).__name__


def _calling_pipeline() -> str:
    """The pipeline (subsystem name) on the call stack; a function one pipeline imports from
    another module (as `joint_graph_passes` imports `remove_noop_ops`) is patched in both."""
    codes = {
        getattr(importlib.import_module(module), function).__code__: subsystem
        for subsystem, module, function in PIPELINES
    }
    frame = sys._getframe(1)
    while frame is not None and frame.f_code not in codes:
        frame = frame.f_back
    return codes[frame.f_code] if frame is not None else "outside the pipelines"


def _returns(result) -> str:
    if isinstance(result, (torch.fx.Graph, torch.fx.GraphModule)):
        return "graph"
    if isinstance(result, int) and not isinstance(result, bool):
        return "zero"
    return "none"


def _no_op(returns: str):
    def no_op(*args, **kwargs):
        if returns == "zero":
            return 0
        if returns == "graph":
            return next(a for a in args if isinstance(a, (torch.fx.Graph, torch.fx.GraphModule)))
        return None

    return no_op
