# Owner(s): ["module: inductor"]
"""Regression tests for remove-noop-copy-of-mutated-input.diff
(torch/_inductor/fx_passes/post_grad.py, remove_noop_ops).

A copy or clone of a tensor the graph later mutates is a snapshot: remove_noop_ops must not
replace it by its source, or its users read the mutated value (pytorch/pytorch#198131).
Run: python remove-noop-copy-of-mutated-input.test.py
"""

import torch
from torch._inductor import config
from torch._inductor.test_case import TestCase, run_tests
from torch.testing._internal.common_utils import (
    instantiate_parametrized_tests,
    parametrize,
)
from torch.testing._internal.inductor_utils import HAS_CPU


@instantiate_parametrized_tests
class RemoveNoopCopyOfMutatedInputTests(TestCase):
    def _check_same_as_eager(self, fn, make_inputs, dynamic=False):
        expected, actual = make_inputs(), make_inputs()
        expected_out = fn(*expected)
        actual_out = torch.compile(fn, backend="inductor", fullgraph=True, dynamic=dynamic)(*actual)
        self.assertEqual(actual_out, expected_out, atol=0, rtol=0)
        for e, a in zip(expected, actual):
            self.assertEqual(a, e, atol=0, rtol=0)

    # Dynamo's TestCase orders the graph's outputs canonically, which puts dst's write-back
    # before src's and hides the fault; users compile with the default order.
    @torch._dynamo.config.patch(canonicalize_output_graph_node_order=False)
    @parametrize("dynamic", [False, True])
    def test_copy_of_input_mutated_later(self, dynamic):
        def fn(dst, src):
            dst[0:, :] = src[0:, :]
            src.add_(1)
            return src

        def make_inputs():
            return torch.full((3, 4), -1.0), torch.arange(12.0).view(3, 4)

        self._check_same_as_eager(fn, make_inputs, dynamic)

    @parametrize("dynamic", [False, True])
    def test_swap_through_clones_and_copies(self, dynamic):
        def fn(a, b):
            sources = (b.clone(), a.clone())
            for dst, src in zip((a, b), sources):
                dst.copy_(src)
            return a, b

        def make_inputs():
            a = torch.arange(5.0)
            return a, a + 100

        self._check_same_as_eager(fn, make_inputs, dynamic)

    @torch._dynamo.config.patch(canonicalize_output_graph_node_order=False)
    def test_clone_of_input_mutated_later(self):
        def fn(x, out):
            y = x.clone()
            x.mul_(2)
            out.copy_(y)

        self._check_same_as_eager(fn, lambda: (torch.arange(6.0), torch.zeros(6)))

    def test_noop_clone_of_unmutated_input_still_removed(self):
        # Nothing writes x: its clone is still a no-op, gone from the post-grad graph.
        def fn(x, out):
            out.copy_(x.clone())

        graphs = []
        with config.patch(post_grad_custom_post_pass=lambda g: graphs.append(str(g))):
            self._check_same_as_eager(fn, lambda: (torch.arange(6.0), torch.zeros(6)))
        self.assertEqual(len(graphs), 1)
        self.assertNotIn("aten.clone", graphs[0])


if __name__ == "__main__":
    if HAS_CPU:
        run_tests()
