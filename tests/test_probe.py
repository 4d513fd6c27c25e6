"""The probes and the asv classes on the installed torch, at small sizes.

Nothing here assumes which swap controls this torch compiles correctly: verdicts are
measured, and the tests check that every part of the pipeline agrees with them. Controls
that are wrong or unavailable by construction test the gate and the skip.
"""

import json

import pytest
import torch

from benchmarks import asv_classes, snapshot_swap
from benchmarks.compat import Unsupported
from benchmarks.contract import Case, ContractBroken
from benchmarks.probes.probe import find_row, probe_scenario
from benchmarks.scenario import Control, Scenario

pytestmark = pytest.mark.slow


def half_swap(a, b):
    """Wrong under every backend: b keeps its old value."""
    a.copy_(b)
    return a, b


def needs_a_missing_api(a, b):
    return torch._writeback_no_such_api(a, b)


TOY = Scenario(
    name="toy_swap",
    controls=(
        Control("half_swap", half_swap),
        Control("explicit_copies", snapshot_swap.explicit_copies),
        Control("stack_buffer", snapshot_swap.stack_buffer),
        Control("missing", needs_a_missing_api, requires=("torch._writeback_no_such_api",)),
    ),
    sizes=(3, 8),
    make_case=snapshot_swap.make_case,
)


class _ToyProbed:
    scenario = TOY

    def setup_cache(self):
        return asv_classes.probe_for_asv(self.scenario)


class ToyCorrectness(_ToyProbed, asv_classes.Correctness):
    pass


class ToyCost(_ToyProbed, asv_classes.Cost):
    pass


@pytest.fixture(scope="module")
def swap_record(tmp_path_factory):
    root = tmp_path_factory.mktemp("artifacts")
    record = probe_scenario(
        snapshot_swap.SWAP, sizes=(3,), artifacts_root=root, count_instructions=False
    )
    return record, root


@pytest.fixture(scope="module")
def toy_record():
    return probe_scenario(TOY, measure_gated=False, count_instructions=False)


def test_every_swap_row_is_measured(swap_record):
    record, _ = swap_record
    assert record["torch_version"] == torch.__version__
    assert len(record["rows"]) == len(snapshot_swap.SWAP.controls) * 3
    for row in record["rows"]:
        assert row["error"] is None, row
        assert row["skipped"] is None, row
        assert row["wrong_elements"] is not None
    assert all(r["wrong_elements"]["total"] == 0 for r in record["rows"] if r["backend"] == "eager")


def test_costs_agree_with_the_verdicts_and_the_code(swap_record):
    record, _ = swap_record
    for row in (r for r in record["rows"] if r["backend"] == "inductor"):
        correct = row["wrong_elements"]["total"] == 0 and row["storages_moved"] == 0
        if correct:
            assert row["scratch_bytes"] == row["scratch_bytes_static"], row
            assert row["full_length_loops"] >= 1  # a swap passes over the data at least once
            assert row["entrypoint_calls"] == 1
            assert row["time_over_floor"] > 0
            assert len(row["floor_ratio_samples"]) == 41
        else:
            assert row["scratch_bytes"] is None and row["full_length_loops"] is None


def test_generated_code_is_kept_for_every_inductor_compile(swap_record):
    record, root = swap_record
    for row in (r for r in record["rows"] if r["backend"] == "inductor"):
        folder = root / record["build"] / record["isa"] / "snapshot_swap" / row["control"] / "n3"
        assert row["code_dir"] == str(folder)
        assert "def call(" in (folder / "wrapper.py").read_text()
        assert "kernel(" in (folder / "kernels.cpp").read_text()
    saved = json.loads(
        (root / record["build"] / record["isa"] / "snapshot_swap" / "probe.json").read_text()
    )
    assert saved["rows"] == record["rows"]


def test_a_control_wrong_at_the_gate_is_stopped_there(toy_record):
    gate = find_row(toy_record, "half_swap", "inductor", 3)
    assert gate["wrong_elements"] == {
        "ret_a": 0, "ret_b": 3, "in_a": 0, "in_b": 3, "view_a": 0, "view_b": 3,
        "alias_a": 0, "alias_b": 0, "total": 9,
    }  # fmt: skip
    larger = find_row(toy_record, "half_swap", "inductor", 8)
    assert larger["gated"] and larger["wrong_elements"] is None
    eager = find_row(toy_record, "half_swap", "eager", 8)
    assert not eager["gated"] and eager["wrong_elements"]["total"] == 3 * 8


def test_a_missing_api_is_a_skip_with_its_name(toy_record):
    for n in (3, 8):
        row = find_row(toy_record, "missing", "inductor", n)
        assert "torch._writeback_no_such_api" in row["skipped"]
    with pytest.raises(Unsupported, match="no torch._writeback_no_such_api"):
        ToyCorrectness().setup(toy_record, "missing", "eager", 3)


def test_asv_classes_report_the_verdict_and_refuse_to_cost_a_wrong_control():
    record = ToyCorrectness().setup_cache()  # measures gated sizes too, as asv does
    correctness = ToyCorrectness()
    correctness.setup(record, "half_swap", "inductor", 8)
    assert correctness.track_wrong_elements(record, "half_swap", "inductor", 8) == 3 * 8
    assert correctness.track_moved_storages(record, "half_swap", "inductor", 8) == 0

    with pytest.raises(ContractBroken, match=r"half_swap .*ret_b 3 wrong.*small correctness gate"):
        ToyCost().setup(record, "half_swap", 8)


def test_asv_cost_of_a_correct_control_times_the_checked_function():
    record = ToyCost().setup_cache()
    correct = [
        name
        for name in ("explicit_copies", "stack_buffer")
        if find_row(record, name, "inductor", 3)["wrong_elements"]["total"] == 0
    ]
    if not correct:
        pytest.skip(f"both clone-free controls are miscompiled on torch {torch.__version__}")
    control = correct[0]
    cost = ToyCost()
    cost.setup(record, control, 8)
    row = find_row(record, control, "inductor", 8)
    assert cost.track_scratch_bytes(record, control, 8) == row["scratch_bytes_static"] > 0
    asv_classes._prepare_timed_call(record, control, 8)
    fn, (a, b) = asv_classes._TIMED[("toy_swap", control, 8)]
    before = a.clone()
    cost.time_warm_call(record, control, 8)
    assert torch.equal(b, before)


def test_case_builder_expectations_are_independent_copies():
    case: Case = snapshot_swap.make_case(4)
    case.inputs["a"].add_(100)
    assert case.after["b"][0].item() == 0.0
