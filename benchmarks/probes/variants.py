"""Probe controls under (configuration, input) variants: one row per (control, variant).

A variant pairs a way of compiling (`configs.py`) with a kind of input (a case builder). Each
row holds the contract's verdict for one warm call (every coordinate, the output alias probe
against the eager control included), a skip with the reason where the build lacks the
configuration or an API the control needs, or the error a compile crashed with.

A wrong row carries `attribution` (`benchmarks/attribution.py`): the pass behind it, found by
recompiling under the row's configuration once per (control, configuration), at its first
wrong input kind; later wrong inputs point there, and a configuration attribution cannot
recompile (`Configuration.attribution_problem`) says why. A configuration whose wrong call
turns exact with an earlier configuration's attributed passes switched off
(`attribution.exact_without`) takes that attribution (its note says so) instead of bisecting
again. An attribution that crashes leaves the verdict as it is and names the crash in
`attribution_error`.

Before anything is compiled, every control runs eagerly on every kind of input: an eager call
that breaks the contract means the inputs or their expectations are wrong, and every row on
those inputs says so as a harness failure (`harness_failure`: no verdict can be trusted there).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from .. import artifacts, attribution, pool
from ..compat import (
    Unsupported,
    build_key,
    lacking,
    missing_attributes,
    one_cpp_wrapper_build_at_a_time,
    torch_identity,
)
from ..contract import Case, Verdict, check
from ..machine import machine_name
from ..scenario import Control
from .configs import CONFIGURATIONS, Built, build_for
from .probe import (
    HarnessFailure,
    _set_verdict,
    isa,
    progress_words,
    ready_to_compile,
    record_attribution,
    record_failure,
    row_verdict,
)


@dataclass(frozen=True)
class Variant:
    """A configuration (a key of `configs.CONFIGURATIONS`) and an input kind with its cases."""

    config: str
    input: str
    make_case: Callable[[], Case]

    @property
    def name(self) -> str:
        return f"{self.config}-{self.input}"


def probe_variants(
    scenario: str,
    controls: tuple[Control, ...],
    variants: tuple[Variant, ...],
    *,
    artifacts_root: Path | None = None,
    inductor_cache: Callable[[str], Path] | None = None,
    workers: int = 1,
) -> dict:
    """Probe every (control, variant); return the record (JSON-ready, picklable).

    With `artifacts_root`, the record is saved as probe.json in the scenario's folder and
    AOTInductor packages are kept under it (`packages/`) for inspection, never loaded again.
    `inductor_cache(config)`: the Inductor cache folder of each configuration, emptied before
    the first compile, so no verdict depends on what another configuration or run left there.
    `workers`: how many processes probe controls side by side (`benchmarks/pool.py`).
    """
    record = {
        "scenario": scenario,
        "machine": machine_name(),
        "build": build_key(),
        "isa": isa(),
        **torch_identity(),
        "eager_references": {},
        "rows": [],
    }
    folder = None
    if artifacts_root is not None:
        folder = artifacts.scenario_dir(
            artifacts_root, record["machine"], record["build"], record["isa"], scenario
        )
    caches = None
    if inductor_cache is not None:
        configs = dict.fromkeys(v.config for v in variants)
        caches = {config: inductor_cache(config) for config in configs}
        for folder_of_config in caches.values():
            artifacts.fresh_inductor_cache(folder_of_config)
    total = len(controls) * len(variants)
    done = 0

    def progress(_, probed):
        nonlocal done
        for row in probed[1]:
            done += 1
            _progress(scenario, row, done, total)

    tasks = [(control, variants, folder, caches, torch.get_num_threads()) for control in controls]
    for control, (references, rows) in zip(
        controls, pool.run(_probe_control, tasks, workers, on_result=progress)
    ):
        record["eager_references"][control.name] = references
        record["rows"] += rows
    if folder is not None:
        artifacts.save_json(folder / "probe.json", artifacts.portable(record, folder))
    return record


def _probe_control(control: Control, variants, folder, caches, threads: int) -> tuple:
    """One control's eager references and rows (a pool task): every variant in turn, each
    compiled in its configuration's cache (`caches`, emptied by the caller) when given."""
    ready_to_compile(threads)
    verdicts = _eager_verdicts(control, {v.input: v.make_case for v in variants})
    references = {
        kind: {"ok": verdict.ok, "verdict": verdict.describe()}
        for kind, verdict in verdicts.items()
    }
    rows = []
    first_wrong: dict[str, str] = {}  # configuration -> its first wrong variant, attributed
    named: list[tuple[str, dict]] = []  # (configuration, attribution) naming passes, in order
    for variant in variants:
        if caches is not None:
            artifacts.use_inductor_cache(caches[variant.config])
        cpp_wrapper = bool(CONFIGURATIONS[variant.config].options.get("cpp_wrapper"))
        with one_cpp_wrapper_build_at_a_time(cpp_wrapper):  # torch 2.1-2.2: one shared header
            row = _probe_one(control, variant, verdicts.get(variant.input), folder)
            if row["wrong_elements"] is not None and not row_verdict(row).ok:
                _attribute(row, control, variant, first_wrong, named)
        rows.append(row)
    return references, rows


def find_variant_row(record: dict, control: str, variant: str) -> dict:
    for row in record["rows"]:
        if (row["control"], row["variant"]) == (control, variant):
            return row
    raise KeyError(f"{record['scenario']}: no probe row for {control}/{variant}")


def usable_variant_row(record: dict, control: str, variant: str, left_out: str = "") -> dict:
    """The probe row, or the skip (Unsupported) or failure asv should record instead;
    `left_out` says why a variant has no row (a knob chose the others)."""
    if left_out and not any(r["variant"] == variant for r in record["rows"]):
        raise Unsupported(f"{record['scenario']} ({variant}): not run, {left_out}")
    row = find_variant_row(record, control, variant)
    where = f"{record['scenario']}.{control} ({variant}) on torch {record['torch_version']}"
    if row["skipped"]:
        raise Unsupported(f"{where}: {row['skipped']}")
    if row.get("harness_failure"):
        raise HarnessFailure(f"{where}: harness failure: {row['harness_failure']}")
    if row["error"]:
        raise RuntimeError(f"{where} failed: {row['error']}")
    return row


def _eager_verdicts(control: Control, inputs: dict[str, Callable[[], Case]]) -> dict:
    """The eager call's verdict per input kind; none where the build lacks the control."""
    if missing_attributes(control.requires):
        return {}
    with torch.no_grad():
        return {kind: check(control.fn, make()) for kind, make in inputs.items()}


def _probe_one(control: Control, variant: Variant, reference: Verdict | None, folder) -> dict:
    row = _empty_row(control.name, variant)
    started = time.perf_counter()
    if missing := missing_attributes(control.requires):
        row["skipped"] = lacking(missing)
    elif not reference.ok:
        row["harness_failure"] = (
            f"the eager reference broke its own contract on {variant.input}: {reference.describe()}"
        )
    else:
        try:
            _measure(row, control, variant, folder)
        except Unsupported as exc:
            row["skipped"] = str(exc)
        except Exception as exc:  # a compile or runtime failure is a result, with its cause
            record_failure(row, exc)
    row["seconds"] = round(time.perf_counter() - started, 3)
    return row


def _measure(row: dict, control: Control, variant: Variant, folder) -> None:
    packages = folder / "packages" if folder is not None else None
    built, case, verdict = _compiled_verdict(control, variant, packages)
    _set_verdict(row, verdict, case)
    row["n"] = case.inputs[next(iter(case.inputs))].numel()
    row["package"] = built.package


def _attribute(
    row: dict, control: Control, variant: Variant, first_wrong: dict, named: list
) -> None:
    """The wrong row's `attribution` (see the module); `first_wrong` is the control's record of
    which configurations were attributed, and where; `named`, the attributions so far that
    named passes (a later configuration is checked against them first)."""
    config = CONFIGURATIONS[variant.config]
    record_attribution(row, lambda: _attribution(control, variant, config, first_wrong, named))


def _attribution(control: Control, variant: Variant, config, first_wrong: dict, named) -> dict:
    if config.attribution_problem:
        return attribution.empty_result(f"not attributed: {config.attribution_problem}")
    if config.name in first_wrong:
        return attribution.empty_result(
            f"attributed at the first wrong input, {first_wrong[config.name]}"
        )
    first_wrong[config.name] = variant.name
    if not attribution.enabled():
        return attribution.empty_result(f"not run: {attribution.KNOB}=0")

    def holds() -> bool:
        return _compiled_verdict(control, variant, packages=None)[2].ok

    with config.options_patched():  # custom passes among them: the ablation's candidates
        if same := _same_as_before(holds, named):
            return same
        found = attribution.attribute_check(holds)
    if found.get("passes"):
        named.append((config.name, found))
    return found


def _same_as_before(holds, named: list[tuple[str, dict]]) -> dict | None:
    """An earlier configuration's attribution when its passes, switched off, make this one
    exact too (two compiles, where bisecting again takes tens), else None."""
    for config_name, found in named:
        started = time.perf_counter()
        if attribution.exact_without(found, holds):
            names = ", ".join(p["pass"] for p in found["passes"])
            note = (f"exact with {names} switched off, the pass(es) attributed under "
                    f"configuration {config_name} (checked, not bisected again)")  # fmt: skip
            return {**found, "seconds": round(time.perf_counter() - started, 1), "note": note}
    return None


def _compiled_verdict(control: Control, variant: Variant, packages) -> tuple[Built, Case, Verdict]:
    """`control` compiled afresh the way the variant's configuration does, and the contract's
    verdict on a warm call on the variant's inputs, eager's aliasing included."""
    with torch.no_grad():
        config = CONFIGURATIONS[variant.config]
        built = build_for(config, control.fn, variant.make_case().inputs.values(), packages)
        case = variant.make_case()
        return built, case, check(built.call, case, reference=control.fn)


def _empty_row(control: str, variant: Variant) -> dict:
    return {
        "control": control,
        "variant": variant.name,
        "config": variant.config,
        "input": variant.input,
        "n": None,
        "elements": None,
        "wrong_elements": None,
        "storages_moved": None,
        "moved": [],
        "skipped": None,
        "error": None,
        "harness_failure": None,
        "package": None,
        "attribution": None,
        "attribution_error": None,
        "seconds": None,
    }


def _progress(scenario: str, row: dict, done: int, total: int) -> None:
    print(
        f"[writeback {done}/{total}] {scenario}.{row['control']} {row['variant']}: "
        f"{progress_words(row)} "
        f"({row['seconds']:.1f} s)",
        file=sys.stderr,
        flush=True,
    )
