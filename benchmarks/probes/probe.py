"""Probe a whole scenario on the installed torch: one row per (control, backend, n).

For each control, the gate size comes first. A row holds the contract's verdict, and for a
correct Inductor compile its cost: measured and static scratch, full-length loops, entrypoint
calls. The generated code of every Inductor compile is kept (see `artifacts.py`). Nothing
here raises for a wrong result or a missing API: the row says so, and the asv classes or the
standalone check decide what that means for them. An eager row that breaks the contract says
so in `harness_failure`: the reference itself, not the compiler, is wrong there.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import importlib
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import torch

from .. import artifacts, attribution, pool
from ..compat import (
    Unsupported,
    build_key,
    exception_summary,
    import_problem,
    lacking,
    limitation,
    missing_attributes,
    raised_at,
    torch_identity,
    vector_isa,
)
from ..compiled import build, compile_and_capture, graph_input_order
from ..contract import Case, Verdict, check
from ..machine import cpu_identity, machine_name
from ..scenario import BACKENDS, COST_BACKEND, Control, Scenario
from . import floor, instructions
from .generated_code import full_length_loops, save_code, static_scratch
from .runtime import floor_figures, profile_warm_call, warm_call_samples


def probe_scenario(
    scenario: Scenario,
    *,
    sizes: tuple[int, ...] | None = None,
    backends: tuple[str, ...] = BACKENDS,
    controls: tuple[str, ...] | None = None,
    measure_gated: bool = True,
    artifacts_root: Path | None = None,
    timing: tuple[int, int] | None = None,
    count_instructions: bool = True,
    inductor_cache: Path | None = None,
    workers: int = 1,
    versions: dict[str, str] | None = None,
) -> dict:
    """Probe every (control, backend, n) and return the record (JSON-ready, picklable).

    `measure_gated`: whether a control that is wrong under Inductor at the gate size is still
    compiled at larger sizes to measure its correctness (asv does, to keep every size
    bisectable; the standalone check, like the write-up, stops it at the gate). Its cost is
    never measured. The eager reference runs at every size either way.
    `timing`: (warmup calls, samples) to time each correct Inductor compile in this process
    (the standalone check; asv times with its own timer). `count_instructions`: count the
    instructions of each correct Inductor compile under callgrind (one fork of a valgrind
    zygote for all of them; needs the code kept under `artifacts_root`).
    `inductor_cache`: the folder Inductor caches into, emptied first so that every verdict is
    this run's compile (default: a temporary folder for the duration of the probe).
    `workers`: how many processes probe controls side by side (`benchmarks/pool.py`; the
    record is the same row for row). Keep 1 where this process times calls (`timing`): a
    compile on another core would share the machine with the timed calls.
    `versions`: the version of each benchmark that reads the record (asv's), recorded in it;
    a saved record keeps earlier rows only from a record of the same versions
    (`artifacts.save_record`).
    """
    sizes = tuple(sizes or scenario.sizes)
    sizes = (scenario.gate_size,) + tuple(n for n in sizes if n != scenario.gate_size)
    chosen = [scenario.control(name) for name in controls] if controls else scenario.controls
    record = {
        "scenario": scenario.name,
        "machine": machine_name(),
        "cpu_id": cpu_identity()["cpu_id"],
        "build": build_key(),
        "isa": isa(),
        **torch_identity(),
        artifacts.VERSIONS: versions,
        "rows": [],
    }
    total = len(chosen) * len(sizes) * len(backends)
    started = time.monotonic()
    with (
        tempfile.TemporaryDirectory(prefix="writeback-code-") as scratch_root,
        _fresh_cache(inductor_cache),
        _counting_child(scenario, backends, record["isa"], count_instructions) as counter,
    ):
        # callgrind loads the kept code; without a place to keep it, keep it for this run
        root = artifacts_root or (Path(scratch_root) if count_instructions else None)
        how = How(sizes, backends, measure_gated, root, timing)
        record["rows"] = _probe_controls(scenario, chosen, how, workers, total)
        callgrind_started = time.monotonic()
        if count_instructions:
            _count_instructions(scenario, record["isa"], record["rows"], counter)
        if counter is not None:  # which process imported torch and Inductor under valgrind
            record["callgrind_zygote_started_by"] = counter.started_by
        # where the time went (the report's time table): the whole probe, and the wait for
        # callgrind after it (its zygote imports torch and Inductor while the controls compile)
        record["seconds"] = {
            "probe": round(time.monotonic() - started, 1),
            "callgrind": round(time.monotonic() - callgrind_started, 1),
        }
        if artifacts_root is None:
            for row in record["rows"]:
                row["code_dir"] = None
    if artifacts_root is not None:
        folder = artifacts.scenario_dir(
            artifacts_root, record["machine"], record["build"], record["isa"], scenario.name
        )
        artifacts.save_record(folder / "probe.json", record)
    return record


@contextlib.contextmanager
def _fresh_cache(folder: Path | None):
    """Inductor's cache is `folder`, emptied first; or a temporary one, restored afterwards."""
    if folder is not None:
        artifacts.fresh_inductor_cache(folder)
        yield
        return
    with (
        tempfile.TemporaryDirectory(prefix="writeback-inductor-") as scratch,
        artifacts.inductor_cache_within(Path(scratch), fresh=True),
    ):
        yield


@contextlib.contextmanager
def _counting_child(scenario: Scenario, backends, isa: str, count_instructions: bool):
    """What will count this probe's correct Inductor compiles under valgrind: the build's
    zygote, or one started now so that it imports torch and Inductor while they compile
    (`instructions.started`); None where nothing will be counted. The count loads the kernels
    from the Inductor cache this process compiles into (its spec names it)."""
    if (
        not count_instructions
        or not scenario.measure_cost
        or COST_BACKEND not in backends
        or instructions.valgrind_problem(isa)
    ):
        yield None
        return
    with instructions.started() as child:
        yield child


def _count_instructions(scenario: Scenario, isa: str, rows: list[dict], counter=None) -> None:
    costed = [r for r in rows if r["code_dir"] and r["scratch_bytes"] is not None]
    problem = instructions.valgrind_problem(isa)
    if not problem and costed:
        cases = [instructions.case_spec(str(i), scenario, row, isa) for i, row in enumerate(costed)]
        print(
            f"[writeback] counting instructions of {len(cases)} compiled controls under "
            "callgrind (one fork of the build's valgrind zygote)",
            file=sys.stderr,
            flush=True,
        )
        try:
            counts = counter.count(cases) if counter else instructions.count(cases)
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            problem = str(exc)
        else:
            for case, row in zip(cases, costed):
                row["instructions"] = counts.instructions.get(case["key"])
                row["instructions_error"] = counts.broken.get(case["key"])  # a real failure
    if problem:
        for row in costed:
            row["instructions_note"] = problem


class How(NamedTuple):
    """What `_probe_control` does with each control (the arguments of `probe_scenario`)."""

    sizes: tuple
    backends: tuple[str, ...]
    measure_gated: bool
    root: Path | None
    timing: tuple[int, int] | None


def _probe_controls(scenario: Scenario, chosen, how: How, workers: int, total: int) -> list:
    """Every chosen control's rows in the scenario's order, probed by up to `workers`
    processes, the progress printed as each control's rows arrive."""
    reference = _reference(scenario)
    if reference is None or how.timing is not None:
        workers = 1  # a scenario workers cannot import (defined in a script), or timing here
    done = 0

    def progress(_, rows):
        nonlocal done
        for row in rows:
            done += 1
            _progress(scenario, row, done, total)

    tasks = [(reference or scenario, c.name, how, torch.get_num_threads()) for c in chosen]
    # the floor extension (about 7 s cold) is built beside the workers, not by one of them
    # while the other waits on its lock
    beside = floor.prepare if scenario.measure_cost and COST_BACKEND in how.backends else None
    order = longest_first(scenario.name, [c.name for c in chosen], how.root)
    probed = pool.run(
        _probe_named_control, tasks, workers, on_result=progress, beside=beside, order=order
    )
    return [row for rows in probed for row in rows]


def longest_first(scenario: str, controls: list[str], root: Path | None) -> list[int]:
    """The order to hand `controls` to workers: the longest first, as this machine's earlier
    records of the scenario (any build, under `root`) timed them, so that no long control (an
    attribution: tens of compiles) runs alone at the end while the other cores wait. Controls
    no record has timed go first, in their order; without records, the scenario's order. Only
    the order the work is handed out in: the record is the same either way."""
    seconds: dict[str, list[float]] = {}
    machine = root / machine_name() if root is not None else None
    for path in sorted(machine.glob(f"*/*/{scenario}/probe.json")) if machine else []:
        try:
            per_control: dict[str, float] = {}
            for row in json.loads(path.read_text())["rows"]:
                per_control[row["control"]] = per_control.get(row["control"], 0.0) + float(
                    row.get("seconds") or 0.0
                )
        except (OSError, ValueError, KeyError, TypeError):
            # only a hint, read from any build's record: an unreadable one loses its hint
            # here, and stops the probe that would write over it (`artifacts.save_record`)
            continue
        for control, total in per_control.items():
            seconds.setdefault(control, []).append(total)
    estimate = {name: statistics.median(seconds[name]) if name in seconds else math.inf
                for name in controls}  # fmt: skip
    return sorted(range(len(controls)), key=lambda index: -estimate[controls[index]])


def _reference(scenario: Scenario) -> tuple[str, str] | None:
    """(module, attribute) that holds `scenario`, for a worker to import it; None if none does."""
    for name in dict.fromkeys(control.fn.__module__ for control in scenario.controls):
        module = sys.modules.get(name)
        if module is None or name == "__main__":
            continue
        for attribute, value in vars(module).items():
            if value is scenario:
                return name, attribute
    return None


def _probe_named_control(scenario, control: str, how: How, threads: int) -> list:
    """`_probe_control` as a pool task: `scenario` is the Scenario or where to import it."""
    if isinstance(scenario, tuple):
        module, attribute = scenario
        scenario = getattr(importlib.import_module(module), attribute)
    ready_to_compile(threads)
    return _probe_control(scenario, scenario.control(control), *how)


def ready_to_compile(threads: int) -> None:
    """A pool task's first step: the calling process's thread count, and Inductor's ISA check
    done in its own folder (`compat.vector_isa`) before any compile would do it in the emptied
    compile cache. A forked worker has both already; a fresh interpreter has neither."""
    torch.set_num_threads(threads)
    isa()


def find_row(record: dict, control: str, backend: str, n: int) -> dict:
    for row in record["rows"]:
        if (row["control"], row["backend"], row["n"]) == (control, backend, n):
            return row
    raise KeyError(f"{record['scenario']}: no probe row for {control}/{backend}/n={n}")


def _probe_control(
    scenario, control: Control, sizes, backends, measure_gated, root, timing
) -> list:
    rows = []
    missing = missing_attributes(control.requires)
    unimportable = import_problem(control.requires_module)
    gate_failed = False
    first_wrong = None
    for n in sizes:
        for backend in backends:
            row = _empty_row(control.name, backend, n)
            row["issue"] = control.issue
            row["fix"] = control.fix
            rows.append(row)
            if missing:
                row["skipped"] = lacking(missing)
                continue
            if unimportable:
                row["skipped"] = unimportable
                continue
            if gate_failed and backend != "eager":
                row["gated"] = True
                if not measure_gated:
                    continue
            started = time.perf_counter()
            try:
                if backend == COST_BACKEND:
                    cost = not gate_failed
                    _probe_inductor(row, scenario, control, n, cost, root, timing, first_wrong)
                    if first_wrong is None and row.get("attribution"):
                        first_wrong = n
                else:
                    _probe_plain(row, scenario, control, n, backend)
            except Unsupported as exc:  # raised before the verdict: nothing was measured
                row["skipped"] = str(exc)
            except Exception as exc:  # a compile or runtime failure is a result, with its cause
                record_failure(row, exc)
            row["seconds"] = round(time.perf_counter() - started, 3)
            row["measured_at"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        if n == scenario.gate_size and COST_BACKEND in backends:
            gate = next(r for r in rows if r["n"] == n and r["backend"] == COST_BACKEND)
            gate_failed = not _exact(gate)
    return rows


class HarnessFailure(RuntimeError):
    """The eager reference broke its own contract: the case's expectations or the harness are
    wrong, so no verdict on those inputs can be trusted. Not a skip, not a number."""


def _probe_plain(row, scenario, control, n, backend) -> None:
    fn = build(control.fn, backend, control.fullgraph)
    with torch.no_grad():
        case = scenario.case(control, n)
        verdict = check(fn, case, reference=control.fn)
    _set_verdict(row, verdict, case)
    if backend == "eager" and not verdict.ok:
        row["harness_failure"] = f"the eager reference broke its own contract: {verdict.describe()}"


def _probe_inductor(
    row, scenario, control, n, with_cost: bool, root, timing, attribute_at=None
) -> None:
    """Compile, keep the code, check; attribute a wrong verdict (only at the control's first
    wrong size: `attribute_at` names it once known); for a correct one, measure the cost.
    Whatever the attribution or the cost raises, the verdict stays: an `Unsupported` there is
    a note in the part it concerns (`attribution`, `cost_skipped`), a crash an error of its
    own (`attribution_error`, or `error` for the cost)."""
    if with_cost and scenario.measure_cost:  # before the compile: this trace resets dynamo
        row["input_order"] = graph_input_order(control.fn, scenario.case(control, n).inputs)
    compiled, wrappers = compile_and_capture(
        control.fn, scenario.case(control, n).inputs.values(), control.fullgraph
    )
    if root is not None:
        folder = artifacts.code_dir(
            root, machine_name(), build_key(), isa(), scenario.name, control.name, n
        )
        save_code(folder, wrappers)
        row["code_dir"] = str(folder)
    with torch.no_grad():
        case = scenario.case(control, n)
        verdict = check(compiled, case, reference=control.fn)
    _set_verdict(row, verdict, case)
    if not verdict.ok:
        _attribute(row, scenario, control, n, attribute_at)
    if not (with_cost and verdict.ok and scenario.measure_cost):
        return
    try:
        _measure_cost(row, scenario, control, n, compiled, wrappers, timing)
    except Unsupported as exc:  # the build cannot measure the cost: the verdict stays
        row["cost_skipped"] = str(exc)
    except Exception as exc:  # the cost stage failed: the verdict stays, the Cost benchmarks fail
        row["error"] = _describe_error(exc)


def _attribute(row: dict, scenario, control, n, attribute_at) -> None:
    """The row's `attribution`: the pass behind its wrong verdict, or, at a later wrong size,
    a pointer to the first (`attribute_at`). Where the build cannot attribute, the result says
    why; where attribution crashes, it says how and `attribution_error` names the crash."""
    if attribute_at is not None:
        row["attribution"] = attribution.empty_result(
            f"attributed at the first wrong size, {attribute_at}"
        )
        return
    record_attribution(row, lambda: attribution.attribute_if_enabled(scenario, control, n))


def record_attribution(row: dict, attribute) -> None:
    """`row["attribution"] = attribute()`, the verdict untouched whatever it raises: where the
    build cannot attribute (`Unsupported`) the result says why; where attribution crashes it
    says how, and `attribution_error` names the crash (a failure of its own)."""
    try:
        row["attribution"] = attribute()
    except Unsupported as exc:
        row["attribution"] = attribution.empty_result(f"not attributed: {exc}")
    except Exception as exc:
        row["attribution_error"] = _describe_error(exc)
        row["attribution"] = attribution.empty_result(
            f"attribution failed: {row['attribution_error']}"
        )


def _measure_cost(row, scenario, control, n, compiled, wrappers, timing) -> None:
    """The cost of a correct compile: scratch, loops, entrypoint calls, floor, timing."""
    if not wrappers:
        raise RuntimeError(f"torch {torch.__version__} generated no code for the control: "
                           "nothing to cost (its verdict is above)")  # fmt: skip
    row.update(profile_warm_call(compiled, list(scenario.case(control, n).inputs.values())))
    statics = [static_scratch(wrapper) for wrapper in wrappers]
    if all(s.peak_bytes is not None for s in statics):
        row["scratch_bytes_static"] = max(s.peak_bytes for s in statics)
    else:
        row["scratch_static_note"] = "; ".join(s.reason for s in statics if s.reason)
    row["full_length_loops"] = sum(full_length_loops(wrapper, n) for wrapper in wrappers)
    operands_of = scenario.floor_operands_of(control)
    row.update(floor_figures(compiled, _inputs_for_timing(scenario, control, n), operands_of))
    if timing:
        warmup, samples = timing
        row["samples_s"] = warm_call_samples(
            compiled, _inputs_for_timing(scenario, control, n), warmup, samples
        )
        row["median_s"] = statistics.median(row["samples_s"])


def _inputs_for_timing(scenario: Scenario, control: Control, n: int):
    if scenario.calls_need_fresh_inputs:
        return lambda: list(scenario.case(control, n).inputs.values())
    inputs = list(scenario.case(control, n).inputs.values())
    return lambda: inputs


def _set_verdict(row: dict, verdict: Verdict, case: Case) -> None:
    row["elements"] = sum(t.numel() for t in case.inputs.values())
    row["wrong_elements"] = {**verdict.wrong, "total": verdict.total}
    row["storages_moved"] = len(verdict.moved)
    row["moved"] = list(verdict.moved)


def row_verdict(row: dict) -> Verdict:
    """The verdict a measured row records (the inverse of `_set_verdict`)."""
    wrong = {k: v for k, v in row["wrong_elements"].items() if k != "total"}
    return Verdict(wrong=wrong, moved=list(row["moved"]))


def _exact(row: dict) -> bool:
    return row["wrong_elements"] is not None and row_verdict(row).ok


def _empty_row(control: str, backend: str, n: int) -> dict:
    return {
        "control": control,
        "backend": backend,
        "n": n,
        "fix": "",
        "elements": None,
        "wrong_elements": None,
        "storages_moved": None,
        "moved": [],
        "gated": False,
        "skipped": None,
        "error": None,
        "scratch_bytes": None,
        "scratch_bytes_static": None,
        "scratch_static_note": "",
        "full_length_loops": None,
        "entrypoint_calls": None,
        "median_s": None,
        "samples_s": None,
        "time_over_floor": None,
        "floor_ratio_samples": None,
        "floor_note": "",
        "floor_defect": None,
        "instructions": None,
        "instructions_note": "",
        "instructions_error": None,
        "input_order": None,
        "code_dir": None,
        "attribution": None,
        "attribution_error": None,
        "harness_failure": None,
        "cost_skipped": None,
        "seconds": None,
        "measured_at": None,
    }


def record_failure(row: dict, exc: Exception) -> None:
    """A compile or call that raised, as the row's result: a skip where the exception is how
    this release says it lacks a capability later releases have (`compat.limitation`), else
    the error, with its cause."""
    if reason := limitation(exc):
        row["skipped"] = reason
    else:
        row["error"] = _describe_error(exc)


def _describe_error(exc: Exception) -> str:
    """`Class: first line (at file:line)`, with the exception behind it
    (`compat.exception_summary`, `compat.raised_at`)."""
    return f"{exception_summary(exc)}{raised_at(exc)}"


def isa() -> str:
    try:
        return vector_isa()
    except Unsupported:
        return "unknown-isa"


def progress_words(row: dict) -> str:
    """A probed row's outcome in the words the progress lines use."""
    if row["skipped"]:
        return f"skipped: {row['skipped']}"
    if row["harness_failure"]:
        return f"HARNESS FAILURE: {row['harness_failure']}"
    if row["error"]:
        return f"error: {row['error']}"
    if row["wrong_elements"] is None:
        return "stopped at the small correctness gate"
    return row_verdict(row).describe()


def _progress(scenario: Scenario, row: dict, done: int, total: int) -> None:
    verdict = progress_words(row)
    seconds = f" ({row['seconds']:.1f} s)" if row.get("seconds") else ""
    print(
        f"[writeback {done}/{total}] {scenario.name}.{row['control']} {row['backend']} "
        f"n={row['n']}: {verdict}{seconds}",
        file=sys.stderr,
        flush=True,
    )
