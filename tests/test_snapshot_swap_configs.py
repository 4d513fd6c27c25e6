"""The configuration scenario: its inputs against eager, skips and errors, the asv class.

Nothing here assumes which variant this torch compiles correctly: the compiled tests check
that every variant is measured and that the record, probe.json, the kept packages and the
asv class agree with one another, and plant the faults they must catch (an aliasing-only
fault, a pass that breaks the call only under one configuration).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from benchmarks import artifacts, attribution, snapshot_swap, snapshot_swap_configs
from benchmarks.compat import Unsupported
from benchmarks.contract import check
from benchmarks.probes import variants
from benchmarks.probes.configs import CONFIGURATIONS, Configuration, build_for
from benchmarks.probes.probe import HarnessFailure
from benchmarks.probes.variants import Variant, find_variant_row, usable_variant_row
from benchmarks.scenario import Control
from tests.test_attribution import swap_copy_sources
from tools import check as standalone

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


def no_swap(a, b):
    """Another program than any control: it mutates nothing and returns copies."""
    return b.clone(), a.clone()


SELECT_SWAP = snapshot_swap.SWAP.control("select_swap")


def returning_copies(monkeypatch) -> None:
    """The planted aliasing-only fault: every configuration's compiled call returns copies of
    what it returns. Every value stays as it was; eager's swap returns its inputs themselves."""
    real = variants.build_for

    def build(config, fn, example_inputs, package_dir):
        built = real(config, fn, example_inputs, package_dir)
        call = built.call
        built.call = lambda *inputs: tuple(t.clone() for t in call(*inputs))
        return built

    monkeypatch.setattr(variants, "build_for", build)


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


def test_inputs_whose_eager_call_breaks_the_contract_make_every_row_a_harness_failure():
    variants = (VARIANTS["inductor-int64"], VARIANTS["export-fp32"])
    record = snapshot_swap_configs.probe(variants, (Control("half_swap", half_swap),))
    reference = record["eager_references"]["half_swap"]["int64"]
    assert not reference["ok"] and reference["verdict"].startswith("ret_b 3 wrong")
    for row in record["rows"]:
        broke = f"the eager reference broke its own contract on {row['input']}: ret_b 3 wrong"
        assert row["harness_failure"].startswith(broke)
        assert row["wrong_elements"] is None and row["error"] is row["skipped"] is None
        with pytest.raises(HarnessFailure, match=f"half_swap \\({row['variant']}\\).*{broke}"):
            usable_variant_row(record, "half_swap", row["variant"])


NOT_ATTRIBUTED = {
    "cpp_wrapper": "not run: WRITEBACK_ATTRIBUTION=0",  # tests switch it off (conftest.py)
    "aoti": "not attributed: AOTInductor builds its package through torch.export",
    "export": "not attributed: the exported program runs uncompiled",
}


@pytest.mark.parametrize("config", list(NOT_ATTRIBUTED))
def test_an_alias_only_fault_is_wrong_in_the_record_the_asv_class_and_the_check(
    config, monkeypatch
):
    """Every configuration's row carries the alias probe: copies returned where eager returns
    its inputs are wrong in `alias_a` and `alias_b`, whatever the values, and the row says
    why it has no attribution, never leaves it out."""
    returning_copies(monkeypatch)
    variant = VARIANTS[f"{config}-fp32"]
    record = snapshot_swap_configs.probe((variant,), (SELECT_SWAP,))
    (row,) = record["rows"]
    assert row["error"] is None and row["skipped"] is None, row
    assert (row["wrong_elements"]["alias_a"], row["wrong_elements"]["alias_b"]) == (3, 3)
    assert row["attribution"]["note"].startswith(NOT_ATTRIBUTED[config]), row["attribution"]
    bench = snapshot_swap_configs.Correctness()
    bench.setup(record, "select_swap", variant.name)
    total = bench.track_wrong_elements(record, "select_swap", variant.name)
    assert total == row["wrong_elements"]["total"] >= 6
    (json_row,) = standalone.variant_json_rows(record)
    cell = standalone._cell(json_row)
    assert cell.startswith("wrong: ") and "alias_a 3, alias_b 3" in cell, cell
    assert json_row["attribution"] == row["attribution"]


SWAPPED_COPIES = Configuration(
    "swapped_copies", options={"post_grad_custom_post_pass": swap_copy_sources}
)
"""A configuration only this test has: Inductor with a post-grad pass that swaps the sources
of the first two copies (tests/test_attribution.py), so the call is wrong only under it."""


def test_a_wrong_row_is_attributed_under_its_configuration_at_its_first_wrong_input(
    monkeypatch,
):
    monkeypatch.setenv("WRITEBACK_ATTRIBUTION", "1")
    monkeypatch.setitem(CONFIGURATIONS, SWAPPED_COPIES.name, SWAPPED_COPIES)
    swapped = tuple(
        Variant(SWAPPED_COPIES.name, kind, snapshot_swap_configs.INPUTS[kind])
        for kind in ("fp32", "int64")
    )
    first, later = snapshot_swap_configs.probe(swapped, (SELECT_SWAP,))["rows"]
    assert first["wrong_elements"]["total"] > 0 and later["wrong_elements"]["total"] > 0
    found = first["attribution"]
    assert found["pass"] == "swap_copy_sources" and found["subsystem"] == "post_grad_passes", found
    assert found["seconds"] > 0 and first["attribution_error"] is None
    assert later["attribution"] == attribution.empty_result(
        "attributed at the first wrong input, swapped_copies-fp32"
    )


def test_a_later_configuration_with_the_same_pass_is_checked_not_bisected_again(monkeypatch):
    """A fault planted in one of Inductor's own post-grad passes (`reinplace_inplaceable_ops`
    also swaps the first two copies' sources) makes two configurations wrong: the first is
    attributed, the second only checked against it (exact with that pass switched off) and
    takes its attribution, saying so."""
    from torch._inductor.fx_passes import post_grad

    monkeypatch.setenv("WRITEBACK_ATTRIBUTION", "1")
    monkeypatch.setenv("WRITEBACK_WORKERS", "1")  # the planted pass lives in this process
    original = post_grad.reinplace_inplaceable_ops

    def reinplace_inplaceable_ops(*args):
        original(*args)
        swap_copy_sources(args[-1])

    reinplace_inplaceable_ops.__module__ = original.__module__  # a pass of Inductor's own
    monkeypatch.setattr(post_grad, "reinplace_inplaceable_ops", reinplace_inplaceable_ops)
    again = Configuration("inductor_fallback_random", options={"fallback_random": True})
    monkeypatch.setitem(CONFIGURATIONS, again.name, again)
    attributed = []
    check = attribution.attribute_check
    monkeypatch.setattr(attribution, "attribute_check",
                        lambda holds: attributed.append(1) or check(holds))  # fmt: skip
    variants = tuple(Variant(name, "fp32", snapshot_swap_configs.INPUTS["fp32"])
                     for name in ("inductor", again.name))  # fmt: skip
    with torch._inductor.config.patch(fx_graph_cache=False):  # no cached graph skips the pass
        first, second = snapshot_swap_configs.probe(variants, (SELECT_SWAP,))["rows"]
    assert first["attribution"], (first["wrong_elements"], first["error"], first["skipped"])
    assert first["attribution"]["pass"] == "reinplace_inplaceable_ops", first
    assert attributed == [1]
    assert second["attribution"]["pass"] == "reinplace_inplaceable_ops"
    assert "configuration inductor (checked, not bisected again)" in (second["attribution"]["note"])


@pytest.mark.parametrize(
    ("raised", "note"),
    [
        (Unsupported("no bisector here"), "not attributed: no bisector here"),
        (RuntimeError("the bisector crashed"), "attribution failed: RuntimeError: the bisector"),
    ],
    ids=["unsupported", "crash"],
)
def test_an_attribution_that_cannot_run_or_crashes_leaves_the_wrong_verdict(
    raised, note, monkeypatch
):
    monkeypatch.setenv("WRITEBACK_ATTRIBUTION", "1")
    returning_copies(monkeypatch)

    def attribute_check(holds):
        raise raised

    monkeypatch.setattr(attribution, "attribute_check", attribute_check)
    record = snapshot_swap_configs.probe((VARIANTS["inductor-fp32"],), (SELECT_SWAP,))
    (row,) = record["rows"]
    assert row["attribution"], (row["wrong_elements"], row["error"], row["skipped"])
    assert row["attribution"]["note"].startswith(note), row["attribution"]
    crashed = not isinstance(raised, Unsupported)
    assert (row["attribution_error"] is not None) == crashed, row
    assert row["error"] is None and row["skipped"] is None, row
    bench = snapshot_swap_configs.Correctness()
    bench.setup(record, "select_swap", "inductor-fp32")
    assert bench.track_wrong_elements(record, "select_swap", "inductor-fp32") >= 6


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
        assert {"alias_a", "alias_b"} <= set(wrong)  # the same contract on every row
        assert (row["package"] is not None) == (row["config"] == "aoti")
        wrong_verdict = wrong["total"] > 0 or row["storages_moved"] > 0
        assert (row["attribution"] is not None) == wrong_verdict, row


@pytest.mark.slow
def test_the_record_is_kept_and_a_package_kept_earlier_is_rebuilt_never_loaded(
    every_variant, tmp_path
):
    """A package of another program planted where the control's package is kept: the next
    run builds the control's package again, and its verdict is the fresh build's."""
    record, root = every_variant
    folder = root / record["machine"] / record["build"] / record["isa"] / "snapshot_swap_configs"
    saved = json.loads((folder / "probe.json").read_text())["rows"]
    assert saved == artifacts.portable(record, folder)["rows"]  # its paths relative to it
    built = find_variant_row(record, "explicit_copies", "aoti-fp32")
    kept = Path(built["package"])
    assert kept.parent == folder / "packages" and kept.is_file()
    inputs = snapshot_swap_configs.fp32_case().inputs.values()
    other = build_for(CONFIGURATIONS["aoti"], no_swap, inputs, tmp_path)
    planted = Path(other.package).read_bytes()
    kept.write_bytes(planted)
    control = snapshot_swap.SWAP.control("explicit_copies")
    (again,) = snapshot_swap_configs.probe((VARIANTS["aoti-fp32"],), (control,), root=root)["rows"]
    assert again["package"] == built["package"] and kept.read_bytes() != planted
    assert again["wrong_elements"] == built["wrong_elements"]


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
    rows = standalone.variant_json_rows(record)
    assert [(r["variant"], r["config"], r["input"]) for r in rows] == [
        (v.name, v.config, v.input) for v in snapshot_swap_configs.VARIANTS
    ]
    assert all(r["scenario"] == "snapshot_swap_configs" and "backend" not in r for r in rows)
    table = standalone.render_variants(record, rows)
    header, _, line = table.splitlines()[-3:]
    assert header == "| control | " + " | ".join(VARIANTS) + " |"
    cells = [cell.strip() for cell in line.strip("|").split("|")][1:]
    assert cells == [standalone._cell(row) for row in rows]


@pytest.mark.slow
def test_a_package_built_with_nowhere_to_keep_it_is_removed_when_the_process_ends(tmp_path):
    """Without an artifacts folder (the standalone check), an AOTInductor package goes to a
    temporary folder of the process's own, removed at its exit (runs left one a build before),
    and the row names no package: never a path that is soon gone."""
    script = (
        "import tempfile\n"
        "from pathlib import Path\n"
        "from benchmarks import snapshot_swap_configs\n"
        "from benchmarks.probes.configs import CONFIGURATIONS, build_for\n"
        "from tests.test_snapshot_swap_configs import no_swap\n"
        "inputs = list(snapshot_swap_configs.fp32_case().inputs.values())\n"
        "built = build_for(CONFIGURATIONS['aoti'], no_swap, inputs, None)\n"
        "assert built.package is None, built.package\n"
        "got, want = built.call(*inputs), no_swap(*inputs)\n"
        "assert all(g.equal(w) for g, w in zip(got, want, strict=True))\n"
        "print(*Path(tempfile.gettempdir()).glob('writeback-aoti-*/*.pt2'))\n"
    )
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                          cwd=Path(__file__).parents[1], check=False)  # fmt: skip
    if "Unsupported" in done.stderr and "aoti_compile_and_package" in done.stderr:
        pytest.skip("this build has no AOTInductor packaging")
    assert done.returncode == 0, done.stderr[-3000:]
    (package,) = [Path(p) for p in done.stdout.split()]  # the one it built, while it ran
    assert package.parent.parent == tmp_path and package.name.startswith("no_swap-")
    assert not package.parent.exists(), f"{package.parent} outlived the process that built it"
