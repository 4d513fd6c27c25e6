"""The contracts of every scenario of the registry (the swap, the aliasing catalogue, the
TensorDict client, and any scenario module added): every entry's expectation matches eager at
each size, and faults injected into each entry's outputs, inputs and storage are caught and
named."""

import warnings

import pytest
import torch

from benchmarks import aliasing, registry
from benchmarks.compat import import_problem, missing_attributes
from benchmarks.contract import check

SCENARIOS = tuple(registry.scenarios().values())
ENTRIES = [
    (scenario, c)
    for scenario in SCENARIOS
    for c in scenario.controls
    if not missing_attributes(c.requires) and not import_problem(c.requires_module)
]
SIZED = [(s, c, size) for s, c in ENTRIES for size in s.sizes]


def _ids(value):
    return getattr(value, "name", str(value))


def test_the_tensordict_client_is_installed_for_the_tests():
    assert import_problem("tensordict") is None


def test_every_entry_names_its_shape_and_most_their_issue():
    names = {c.name for c in aliasing.CATALOGUE.controls}
    assert {
        "copy_of_mutated_input", "foreach_add_flip", "shift_clone", "slice_scatter_then_zero",
        "diagonal_scatter_then_fill", "index_fill_clone_clamp", "index_put_then_add_flip",
        "custom_op_into_clone", "transpose_copy", "rotate3_foreach",
    } <= names  # fmt: skip
    linked = [c for c in aliasing.CATALOGUE.controls if c.issue]
    assert all(c.issue.startswith(aliasing.ISSUES) for c in linked)
    assert len(linked) == len(names) - 1  # rotate3_foreach has no upstream report
    assert len(linked) >= 25  # issue 13: every report we know of, each entry linked
    assert len({c.issue for c in linked}) >= 22  # distinct upstream reports (issue 13)
    fixed = [c for c in aliasing.CATALOGUE.controls if c.fix]
    assert all(c.fix.startswith(aliasing.PULLS) and c.issue for c in fixed)


SPLIT = [(s, c) for s, c in ENTRIES if not c.fullgraph]


def test_some_entry_compiles_across_a_graph_break():
    assert SPLIT  # noop_view_resize_across_break (#191449): its fault is between two graphs


@pytest.mark.parametrize(("scenario", "entry"), SPLIT, ids=_ids)
def test_an_entry_compiled_without_fullgraph_needs_it(scenario, entry):
    """`fullgraph=False` is for a control that cannot compile as one graph; one that can
    should say fullgraph=True, where a graph break is an error."""
    torch._dynamo.reset()
    whole = torch.compile(entry.fn, backend="eager", fullgraph=True, dynamic=False)
    with torch.no_grad(), pytest.raises(Exception, match="(?i)graph break|unsupported"):
        whole(*scenario.case(entry, scenario.gate_size).inputs.values())


@pytest.mark.parametrize(("scenario", "entry", "size"), SIZED, ids=_ids)
def test_eager_keeps_every_entrys_contract(scenario, entry, size):
    case = scenario.case(entry, size)
    if size in ("large", 1048576):
        assert sum(t.numel() for t in case.inputs.values()) >= 1_000_000 // 2
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error")  # no deprecated overlap, no undefined behaviour flagged
        # with its own eager function as the reference, so the alias probe runs too: eager
        # must alias as eager does (inputs that are views of one tensor stay so in the copies)
        verdict = check(entry.fn, case, reference=entry.fn)
    assert verdict.ok, verdict.describe()
    assert any(coordinate.startswith("alias_") for coordinate in verdict.wrong)


def _as_tuple(result):
    return (result,) if isinstance(result, torch.Tensor) else tuple(result)


def _poke(tensor):
    tensor.view(-1)[0] += 1


@pytest.mark.parametrize(("scenario", "entry"), ENTRIES, ids=_ids)
def test_faults_in_each_output_and_input_are_caught_and_named(scenario, entry):
    small = scenario.gate_size
    case = scenario.case(entry, small)
    returns, inputs = list(case.returns), list(case.inputs)

    for position, name in enumerate(returns):

        def wrong_return(*args, position=position):
            out = list(_as_tuple(entry.fn(*args)))
            out[position] = out[position].clone()
            _poke(out[position])
            return tuple(out)

        verdict = check(wrong_return, scenario.case(entry, small))
        assert {k: v for k, v in verdict.wrong.items() if v} == {f"ret_{name}": 1}

    for index, name in enumerate(inputs):

        def wrong_input(*args, index=index):
            result = entry.fn(*args)
            _poke(args[index])
            return result

        verdict = check(wrong_input, scenario.case(entry, small))
        assert verdict.wrong[f"in_{name}"] == 1 and verdict.wrong[f"view_{name}"] == 1

        def moved_input(*args, index=index):
            result = entry.fn(*args)
            args[index].set_(args[index].clone())
            return result

        verdict = check(moved_input, scenario.case(entry, small))
        assert verdict.moved == [name] and not verdict.ok


def test_the_custom_op_is_wrong_exactly_when_its_arguments_alias():
    if aliasing._REVERSE_INTO is None:
        pytest.skip(f"torch {torch.__version__} has no torch.library.custom_op")
    x = torch.arange(6, dtype=torch.float32)
    out = torch.empty_like(x)
    aliasing._reverse_into_impl(x, out)
    assert torch.equal(out, x.flip(0))
    aliasing._reverse_into_impl(x, x)  # aliasing: the second half reads overwritten values
    assert not torch.equal(x, torch.arange(6, dtype=torch.float32).flip(0))


def test_the_storage_offset_op_reads_the_offset_of_what_it_is_given():
    if aliasing._storage_offset_of is None:
        pytest.skip(f"torch {torch.__version__} has no torch.library.custom_op")
    x = torch.arange(8.0)
    assert int(aliasing._storage_offset_of(x[1:])) == 1
    assert int(aliasing._storage_offset_of(x[1:].clone())) == 0
