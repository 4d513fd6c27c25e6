# Owner(s): ["module: inductor"]
"""Regression tests for foreach-cross-read-sources.diff (torch/_inductor/lowering.py).

An in-place foreach op whose source for one element is computed from a tensor an earlier
element writes must read that tensor's value from before the foreach, as eager does:
Inductor computes an unrealized source inside its element's kernel, after the earlier
elements' writes. Run: python foreach-cross-read-sources.test.py
"""

import torch
from torch._inductor import metrics
from torch._inductor.test_case import TestCase, run_tests
from torch.testing._internal.common_utils import (
    instantiate_parametrized_tests,
    parametrize,
)
from torch.testing._internal.inductor_utils import HAS_CPU


def _inputs(count=2, n=5):
    a = torch.arange(n, dtype=torch.float32)
    return [a + 100 * i for i in range(count)]


@instantiate_parametrized_tests
class ForeachCrossReadSourcesTests(TestCase):
    def _check_same_as_eager(self, fn, count=2, dynamic=False):
        expected, actual = _inputs(count), _inputs(count)
        fn(*expected)
        torch.compile(fn, backend="inductor", fullgraph=True, dynamic=dynamic)(*actual)
        for e, a in zip(expected, actual):
            self.assertEqual(a, e, atol=0, rtol=0)

    @parametrize("dynamic", [False, True])
    def test_foreach_copy_swap_of_clones(self, dynamic):
        def fn(a, b):
            torch._foreach_copy_([a, b], [b.clone(), a.clone()])

        self._check_same_as_eager(fn, dynamic=dynamic)

    @parametrize("dynamic", [False, True])
    def test_foreach_copy_swap_of_computed_sources(self, dynamic):
        def fn(a, b):
            torch._foreach_copy_([a, b], torch._foreach_mul([b, a], 1.0))

        self._check_same_as_eager(fn, dynamic=dynamic)

    def test_foreach_copy_rotate_three(self):
        def fn(a, b, c):
            torch._foreach_copy_([a, b, c], [c.clone(), a.clone(), b.clone()])

        self._check_same_as_eager(fn, count=3)

    def test_foreach_add_computed_cross_sources(self):
        def fn(a, b):
            torch._foreach_add_([a, b], [b * 2, a * 2])

        self._check_same_as_eager(fn)

    def test_foreach_addcmul_computed_cross_sources(self):
        def fn(a, b):
            torch._foreach_addcmul_([a, b], [b + 1, a + 1], [b * 0 + 2, a * 0 + 2], value=0.5)

        self._check_same_as_eager(fn)

    def test_foreach_add_input_sources_keep_element_order(self):
        # The sources are the inputs themselves, not computed values: eager reads b's
        # new value for the second element, and so must the compiled op.
        def fn(a, b):
            torch._foreach_add_([a, b], [b, a])

        self._check_same_as_eager(fn)

    def test_nothing_realized_without_cross_read(self):
        # Each element reads only its own destination: the two writes are the only nodes.
        def fn(a, b):
            torch._foreach_add_([a, b], [a * 2, b * 2])

        metrics.reset()
        self._check_same_as_eager(fn)
        self.assertEqual(metrics.ir_nodes_pre_fusion, 2)


if __name__ == "__main__":
    if HAS_CPU:
        run_tests()
