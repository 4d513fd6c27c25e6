"""The configuration scenario: its inputs against eager, skips and errors, the asv class.

Nothing here assumes which variant this torch compiles correctly: the compiled tests check
that every variant is measured and that the record, probe.json, the package cache and the
asv class agree with one another.
"""

import json

import pytest
import torch

from benchmarks import artifacts, snapshot_swap, snapshot_swap_configs
from benchmarks.compat import Unsupported
from benchmarks.contract import check
from benchmarks.probes.variants import find_variant_row, usable_variant_row
from benchmarks.scenario import Control
from tools import check_snapshot_swap

VARIANTS = {v.name: v for v in snapshot_swap_configs.VARIANTS}
DTYPES = {
    "fp32": torch.float32,
    "bf16": torch.bfloat16,
    "int64": torch.int64,
    "fp32_strided": torch.float32,
    "fp32_n17": torch.float32,
}


def half_swap(a, b):
    """Wrong even in eager: b keeps its old value."""
    a.copy_(b)
    return a, b


def breaks_the_graph(a, b):
    torch._dynamo.graph_break()
    return snapshot_swap.select_swap(a, b)


def test_every_configuration_on_fp32_and_every_input_under_inductor():
    pairs = [(v.config, v.input) for v in snapshot_swap_configs.VARIANTS]
    configs = ["inductor", "cpp_wrapper", "dynamic", "freezing", "max_autotune", "aoti", "export"]
    assert {c for c, kind in pairs if kind == "fp32"} == set(configs)
    assert {kind for c, kind in pairs if c == "inductor"} == set(DTYPES)
    assert len(pairs) == len(set(pairs)) == 11
    assert pairs[-1] == ("export", "fp32")  # the uncompiled reference after every compiled one


@pytest.mark.parametrize("kind", list(DTYPES))
def test_inputs_are_exact_distinct_and_shaped_as_named(kind):
    case = snapshot_swap_configs.INPUTS[kind]()
    a, b = case.inputs["a"], case.inputs["b"]
    assert a.dtype == b.dtype == DTYPES[kind]
    assert a.numel() == (17 if kind == "fp32_n17" else 3)
    wide_a, wide_b = a.double(), b.double()
    assert torch.equal(wide_a, wide_a.round()) and torch.equal(wide_a.to(a.dtype), a)
    assert torch.equal(wide_b.to(b.dtype), b)
    assert not torch.isin(wide_a, wide_b).any()  # every element of a differs from all of b
    strided = kind == "fp32_strided"
    assert (a.stride(), a.is_contiguous()) == (((2,), False) if strided else ((1,), True))
    if strided:
        assert a.untyped_storage().nbytes() == 2 * a.numel() * a.element_size()
        assert a.untyped_storage().data_ptr() != b.untyped_storage().data_ptr()
    assert torch.equal(case.after["a"], b) and torch.equal(case.after["b"], a)
    a.add_(1)
    assert not torch.equal(case.after["b"], a)  # the expectations are copies


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("control", snapshot_swap.SWAP.controls, ids=lambda c: c.name)
def test_every_variant_expectation_holds_in_eager_exactly(control, variant):
    verdict = check(control.fn, VARIANTS[variant].make_case())
    assert verdict.ok, verdict.describe()


def test_a_build_without_aoti_skips_with_the_missing_api(monkeypatch):
    monkeypatch.delattr(torch._inductor, "aoti_compile_and_package")
    record = snapshot_swap_configs.probe(
        (VARIANTS["aoti-fp32"],), (snapshot_swap.SWAP.controls[0],)
    )
    row = record["rows"][0]
    assert "has no torch._inductor.aoti_compile_and_package" in row["skipped"]
    assert row["wrong_elements"] is None and row["error"] is None
    with pytest.raises(Unsupported, match="aoti-fp32.*aoti_compile_and_package"):
        usable_variant_row(record, row["control"], "aoti-fp32")


def test_a_build_without_the_autotune_mode_skips_with_the_mode(monkeypatch):
    monkeypatch.setattr(torch._inductor, "list_mode_options", lambda *args, **kwargs: {})
    variant = VARIANTS["max_autotune-fp32"]
    row = snapshot_swap_configs.probe((variant,), (snapshot_swap.SWAP.controls[0],))["rows"][0]
    assert "has no torch.compile mode 'max-autotune-no-cudagraphs'" in row["skipped"]


def test_a_compile_that_crashes_is_an_error_with_its_cause():
    record = snapshot_swap_configs.probe(
        (VARIANTS["inductor-fp32"],), (Control("breaks_the_graph", breaks_the_graph),)
    )
    row = record["rows"][0]
    assert row["skipped"] is None and "graph_break" in row["error"], row
    with pytest.raises(RuntimeError, match="breaks_the_graph \\(inductor-fp32\\).*failed"):
        usable_variant_row(record, "breaks_the_graph", "inductor-fp32")


def test_inputs_whose_eager_call_breaks_the_contract_make_every_row_an_error():
    variants = (VARIANTS["inductor-int64"], VARIANTS["export-fp32"])
    record = snapshot_swap_configs.probe(variants, (Control("half_swap", half_swap),))
    reference = record["eager_references"]["half_swap"]["int64"]
    assert not reference["ok"] and reference["verdict"].startswith("ret_b 3 wrong")
    for row in record["rows"]:
        assert row["error"].startswith(f"the eager reference broke the contract on {row['input']}")
        assert row["wrong_elements"] is None  # nothing was compiled


@pytest.fixture(scope="module")
def every_variant(tmp_path_factory):
    root = tmp_path_factory.mktemp("configs")
    control = snapshot_swap.SWAP.control("explicit_copies")
    return snapshot_swap_configs.probe(controls=(control,), root=root), root


@pytest.mark.slow
def test_every_variant_is_compiled_and_measured(every_variant):
    record, _ = every_variant
    assert [r["variant"] for r in record["rows"]] == list(VARIANTS)
    for row in record["rows"]:
        variant = VARIANTS[row["variant"]]
        assert (row["config"], row["input"]) == (variant.config, variant.input)
        assert row["error"] is None and row["skipped"] is None, row
        assert row["n"] == variant.make_case().inputs["a"].numel()
        wrong = row["wrong_elements"]
        assert wrong["total"] == sum(v for k, v in wrong.items() if k != "total")
        assert (row["package"] is not None) == (row["config"] == "aoti")


@pytest.mark.slow
def test_the_record_is_kept_and_the_package_reused_with_the_same_verdict(every_variant):
    record, root = every_variant
    folder = root / record["machine"] / record["build"] / record["isa"] / "snapshot_swap_configs"
    saved = json.loads((folder / "probe.json").read_text())["rows"]
    assert saved == artifacts.portable(record, folder)["rows"]  # its paths relative to it
    built = find_variant_row(record, "explicit_copies", "aoti-fp32")
    assert built["package_reused"] is False and built["package"].startswith(str(folder))
    control = snapshot_swap.SWAP.control("explicit_copies")
    again = snapshot_swap_configs.probe((VARIANTS["aoti-fp32"],), (control,), root=root)
    reused = again["rows"][0]
    assert reused["package_reused"] is True and reused["package"] == built["package"]
    assert reused["wrong_elements"] == built["wrong_elements"]


@pytest.mark.slow
def test_asv_class_reads_the_record(every_variant, monkeypatch, tmp_path):
    record, _ = every_variant
    bench = snapshot_swap_configs.Correctness()
    for row in record["rows"]:
        bench.setup(record, row["control"], row["variant"])
        args = (record, row["control"], row["variant"])
        assert bench.track_wrong_elements(*args) == row["wrong_elements"]["total"]
        assert bench.track_moved_storages(*args) == row["storages_moved"]
    monkeypatch.setenv("WRITEBACK_VARIANTS", "inductor-int64,export-fp32")
    monkeypatch.setenv("WRITEBACK_CACHE", str(tmp_path))
    quick = snapshot_swap_configs.Correctness().setup_cache()
    assert {r["variant"] for r in quick["rows"]} == {"inductor-int64", "export-fp32"}
    assert len(quick["rows"]) == 2 * len(snapshot_swap.SWAP.controls)
    caches = {p.name for p in tmp_path.glob("*/*/*/configs-*")}
    assert caches == {"configs-inductor", "configs-export"}  # one per configuration
    with pytest.raises(Unsupported, match="aoti-fp32\\): not run, WRITEBACK_VARIANTS="):
        bench.setup(quick, "select_swap", "aoti-fp32")
    monkeypatch.setenv("WRITEBACK_VARIANTS", "inductor-fp64")
    with pytest.raises(ValueError, match="unknown variants \\['inductor-fp64'\\]"):
        snapshot_swap_configs.chosen_variants()


@pytest.mark.slow
def test_standalone_rows_carry_config_and_input_and_the_table_every_cell(every_variant):
    record, _ = every_variant
    rows = check_snapshot_swap.variant_json_rows(record)
    assert [(r["variant"], r["config"], r["input"]) for r in rows] == [
        (v.name, v.config, v.input) for v in snapshot_swap_configs.VARIANTS
    ]
    assert all(r["scenario"] == "snapshot_swap_configs" and "backend" not in r for r in rows)
    table = check_snapshot_swap.render_variants(record, rows)
    header, _, line = table.splitlines()[-3:]
    assert header == "| control | " + " | ".join(VARIANTS) + " |"
    cells = [cell.strip() for cell in line.strip("|").split("|")][1:]
    assert cells == [check_snapshot_swap._cell(row) for row in rows]
