"""The snapshot contract against injected faults: every fault is caught and named."""

import pytest
import torch

from benchmarks import snapshot_swap
from benchmarks.contract import ContractBroken, check, count_wrong, require

N = 5


def correct_swap(a, b):
    old_a = a.clone()
    a.copy_(b)
    b.copy_(old_a)
    return a, b


def wrong_return_a(a, b):
    correct_swap(a, b)
    return a + 1, b


def wrong_return_b(a, b):
    correct_swap(a, b)
    return a, b - 1


def rebind_input(name, values):
    """Swap correctly in place, then point input `name` at a new storage holding `values`:
    the pre-call view still reads the correct values, the input object does not."""

    def fault(a, b):
        correct_swap(a, b)
        target = a if name == "a" else b
        alias = target.view(target.shape)  # returned: keeps the correct values
        target.set_(values(target).clone())
        return (alias, b) if name == "a" else (a, alias)

    return fault


def detach_views(name):
    """Write the right values into a new storage and rebind the input to it, leaving the old
    storage (and every view of it) with the old values: a detached view."""

    def fault(a, b):
        new_a, new_b = b.clone(), a.clone()
        target, value = (a, new_a) if name == "a" else (b, new_b)
        target.set_(value)
        if name == "a":
            b.copy_(new_b)
        else:
            a.copy_(new_a)
        return a, b

    return fault


def move_storage_keep_values(a, b):
    """Values right everywhere, but input a now lives somewhere else."""
    correct_swap(a, b)
    a.set_(a.clone())
    return a, b


ALONE = {
    "ret_a": wrong_return_a,
    "ret_b": wrong_return_b,
    "in_a": rebind_input("a", lambda t: t + 7),
    "in_b": rebind_input("b", lambda t: t + 7),
    "view_a": detach_views("a"),
    "view_b": detach_views("b"),
}


def test_a_correct_swap_keeps_the_contract():
    verdict = check(correct_swap, snapshot_swap.make_case(N))
    assert verdict.ok
    assert verdict.describe() == "exact, storage kept"
    assert list(verdict.wrong) == ["ret_a", "ret_b", "in_a", "in_b", "view_a", "view_b"]


@pytest.mark.parametrize("coordinate", sorted(ALONE))
def test_each_coordinate_wrong_alone_is_caught_and_named(coordinate):
    verdict = check(ALONE[coordinate], snapshot_swap.make_case(N))
    wrong = {k: v for k, v in verdict.wrong.items() if v}
    assert wrong == {coordinate: N}
    assert verdict.total == N
    with pytest.raises(ContractBroken, match=rf"{coordinate} {N} wrong"):
        require(verdict, "the fault")


def test_a_moved_storage_is_caught_even_with_every_value_right():
    verdict = check(move_storage_keep_values, snapshot_swap.make_case(N))
    assert verdict.total == 0
    assert verdict.moved == ["a"]
    assert not verdict.ok
    with pytest.raises(ContractBroken, match="storage moved: a"):
        require(verdict, "move")


def test_a_detached_view_is_caught_with_its_moved_storage():
    verdict = check(detach_views("b"), snapshot_swap.make_case(N))
    assert verdict.wrong["view_b"] == N
    assert verdict.moved == ["b"]


def test_the_write_up_fault_shape_counts_nine():
    """Three wrong elements in each of return b, input b and b's view count 9."""

    def one_source_to_both(a, b):
        source = b.clone()
        a.copy_(source)
        b.copy_(source)
        return a, b

    verdict = check(one_source_to_both, snapshot_swap.make_case(3))
    assert {k: v for k, v in verdict.wrong.items() if v} == {"ret_b": 3, "in_b": 3, "view_b": 3}
    assert verdict.total == 9


def test_missing_or_mismatched_returns_count_every_element():
    expected = torch.arange(4, dtype=torch.float32)
    assert count_wrong(None, expected) == 4
    assert count_wrong(expected[:3], expected) == 4
    assert count_wrong(expected.double(), expected) == 4
    assert count_wrong(expected.clone(), expected) == 0

    verdict = check(lambda a, b: a, snapshot_swap.make_case(N))
    assert verdict.wrong["ret_b"] == N


@pytest.mark.parametrize("control", snapshot_swap.SWAP.controls, ids=lambda c: c.name)
def test_eager_controls_keep_the_contract(control):
    with torch.no_grad():
        assert check(control.fn, snapshot_swap.make_case(N)).ok


def test_signed_zeros_count_wrong_in_either_direction():
    positive, negative = torch.zeros(4), -torch.zeros(4)
    assert count_wrong(negative, positive) == 4
    assert count_wrong(positive, negative) == 4
    assert count_wrong(positive.clone(), positive) == 0
    one_flipped = positive.clone()
    one_flipped[2] = -0.0
    assert count_wrong(one_flipped, positive) == 1


def test_nan_payloads_count_and_equal_bits_do_not():
    quiet = torch.tensor([0x7FC00000, 0x7FC00000, 0], dtype=torch.int32).view(torch.float32)
    other = torch.tensor([0x7FC00000, 0x7FC00001, 0], dtype=torch.int32).view(torch.float32)
    assert count_wrong(quiet.clone(), quiet) == 0  # NaN == NaN bitwise, unlike torch.eq
    assert count_wrong(other, quiet) == 1


@pytest.mark.parametrize(
    "dtype", [torch.bfloat16, torch.float16, torch.float64, torch.int64, torch.bool]
)
def test_every_width_is_compared_bitwise(dtype):
    expected = torch.zeros(6, dtype=dtype)
    got = expected.clone()
    got[1] = 1
    assert count_wrong(got, expected) == 1
    if dtype.is_floating_point:
        got[4] = -0.0
        assert count_wrong(got, expected) == 2


def test_non_contiguous_tensors_are_compared_element_by_element():
    expected = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    transposed_copy = expected.t().contiguous().t()  # same values, column-major strides
    assert not transposed_copy.is_contiguous()
    assert count_wrong(transposed_copy, expected) == 0
    transposed_copy[2, 1] = -1.0
    assert count_wrong(transposed_copy, expected) == 1
    assert count_wrong(expected.t(), expected.t().contiguous()) == 0


def swap_returning_copies(a, b):
    correct_swap(a, b)
    return a.clone(), b.clone()


@pytest.mark.parametrize(
    ("call", "reference"),
    [(swap_returning_copies, correct_swap), (correct_swap, swap_returning_copies)],
    ids=["copy-where-eager-aliases", "alias-where-eager-copies"],
)
def test_the_alias_probe_catches_a_return_aliasing_differently_from_eager(call, reference):
    """Every value is right either way; only a write through the returns tells them apart."""
    verdict = check(call, snapshot_swap.make_case(N), reference=reference)
    assert {k: v for k, v in verdict.wrong.items() if v} == {"alias_a": N, "alias_b": N}
    with pytest.raises(ContractBroken, match=rf"alias_a {N} wrong"):
        require(verdict, "the alias fault")


def test_the_alias_probe_passes_when_the_call_aliases_as_eager_does():
    verdict = check(correct_swap, snapshot_swap.make_case(N), reference=correct_swap)
    assert verdict.ok
    assert [k for k in verdict.wrong if k.startswith("alias_")] == ["alias_a", "alias_b"]
