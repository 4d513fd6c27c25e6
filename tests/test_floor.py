"""The physical floor: its kernel swaps exactly, the ratio code refuses a control faster than
the floor, and where the floor cannot be measured the metric is a skip that says why."""

import pytest
import torch

from benchmarks import asv_classes, snapshot_swap
from benchmarks.compat import Unsupported
from benchmarks.probes import runtime
from benchmarks.probes.floor import checked_operands, swap_kernel
from benchmarks.probes.probe import find_row, probe_scenario
from benchmarks.probes.runtime import FloorDefect, ratio_to_floor
from benchmarks.scenario import Control, Scenario

pytestmark = pytest.mark.slow  # builds the floor extension once per torch build (cold: ~7 s)

NAN_WITH_PAYLOAD = 0x7FC12345


def _bits(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.view(torch.int32).clone()


def _odd_values(n: int, seed: int) -> torch.Tensor:
    """Random FP32 values with a signed zero and a NaN payload, which a value compare misses."""
    values = torch.randn(n, generator=torch.Generator().manual_seed(seed))
    values[0] = -0.0
    values.view(torch.int32)[-1] = NAN_WITH_PAYLOAD
    return values


@pytest.mark.parametrize("n", [1, 3, 17, 1000])
def test_the_floor_kernel_swaps_bit_for_bit(n):
    a, b = _odd_values(n, seed=n), _odd_values(n, seed=n + 1)
    old_a, old_b = _bits(a), _bits(b)
    swap_kernel()(a, b)
    assert torch.equal(_bits(a), old_b)
    assert torch.equal(_bits(b), old_a)


def test_the_floor_kernel_swaps_the_two_rows_of_one_tensor():
    x = _odd_values(2 * 33, seed=7).reshape(2, 33)
    old = _bits(x)
    swap_kernel()(*checked_operands(x[0], x[1]))
    assert torch.equal(_bits(x), old.flip(0))


def test_the_floor_refuses_tensors_it_cannot_swap():
    x = torch.zeros(4, 4)
    with pytest.raises(ValueError, match="contiguous"):
        checked_operands(x[:, 0], x[:, 1])
    with pytest.raises(ValueError, match="overlap"):
        checked_operands(x.view(-1)[0:8], x.view(-1)[4:12])
    with pytest.raises(ValueError, match="FP32"):
        checked_operands(x.double(), x.double())


def _pair(inputs):
    return inputs[0], inputs[1]


def test_a_control_faster_than_the_floor_is_a_floor_defect_naming_both_times():
    a = torch.arange(65536, dtype=torch.float32)
    b = a + 2**21
    old_a, old_b = a.clone(), b.clone()

    def does_nothing(a, b):
        return a, b

    with pytest.raises(FloorDefect) as raised:
        ratio_to_floor(does_nothing, lambda: [a, b], _pair, rounds=5)
    message = str(raised.value)
    assert "floor defect: the control took" in message
    assert message.count(" ms") == 2  # both times, control and floor
    assert raised.value.figures["time_over_floor"] < runtime.FLOOR_DEFECT_BELOW
    # an even number of floor calls per sub-block leaves the inputs as they were
    assert raised.value.figures["floor_calls_per_sub_block"][1] % 2 == 0
    assert torch.equal(a, old_a) and torch.equal(b, old_b)


def test_a_control_doing_three_floor_passes_is_not_a_defect():
    a = torch.arange(65536, dtype=torch.float32)
    b = a + 2**21
    swap = swap_kernel()

    def three_passes(a, b):
        for _ in range(3):
            swap(a, b)
        return a, b

    figures = ratio_to_floor(three_passes, lambda: [a, b], _pair, rounds=5)
    assert figures["time_over_floor"] >= runtime.FLOOR_DEFECT_BELOW
    assert len(figures["floor_ratio_samples"]) == 5


def _select_swap_scenario(**floor) -> Scenario:
    return Scenario(
        name="floor_test_swap",
        controls=(Control("select_swap", snapshot_swap.select_swap),),
        sizes=(3,),
        make_case=snapshot_swap.make_case,
        **floor,
    )


def _probed_row(scenario: Scenario) -> tuple[dict, dict]:
    record = probe_scenario(scenario, backends=("inductor",), count_instructions=False)
    row = find_row(record, "select_swap", "inductor", 3)
    if row["wrong_elements"]["total"] or row["storages_moved"]:
        pytest.skip(f"select_swap is miscompiled on torch {torch.__version__}: nothing to time")
    return record, row


def test_a_scenario_without_floor_operands_skips_the_metric_with_the_reason():
    record, row = _probed_row(_select_swap_scenario())
    assert row["scratch_bytes"] is not None  # the other costs were measured
    assert row["time_over_floor"] is None
    assert "no floor operands" in row["floor_note"]
    with pytest.raises(Unsupported, match="no time over floor: .*no floor operands"):
        asv_classes.Cost.track_time_over_floor.setup(record, "select_swap", 3)


def test_a_floor_defect_fails_the_asv_metric(monkeypatch):
    # a threshold no real ratio reaches stands in for a control faster than the floor
    monkeypatch.setattr(runtime, "FLOOR_DEFECT_BELOW", float("inf"))
    record, row = _probed_row(_select_swap_scenario(floor_operands=_pair))
    assert row["floor_defect"] and row["time_over_floor"] > 0
    with pytest.raises(FloorDefect, match=r"floor_test_swap.select_swap \(n=3\): floor defect"):
        asv_classes.Cost.track_time_over_floor.setup(record, "select_swap", 3)
