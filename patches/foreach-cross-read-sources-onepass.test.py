# Owner(s): ["module: inductor"]
"""Regression tests for foreach-cross-read-sources-onepass.diff (torch/_inductor/lowering.py
and torch/_inductor/scheduler.py).

The lowering part makes an in-place foreach op read every source computed from a tensor an
earlier element writes before that write (as foreach-cross-read-sources.diff does). The
scheduler part fuses a read of a buffer with the in-place write that follows it at the same
index, so a swap reads both tensors and writes both in one loop, with no buffer of its own.
Run: python foreach-cross-read-sources-onepass.test.py
"""

import torch
from torch._inductor.test_case import TestCase, run_tests
from torch._inductor.utils import run_and_get_code
from torch.testing import FileCheck
from torch.testing._internal.inductor_utils import HAS_CPU


def _inputs(count=2, n=5):
    a = torch.arange(n, dtype=torch.float32)
    return [a + 100 * i for i in range(count)]


class ForeachCrossReadSourcesOnePassTests(TestCase):
    def _compile_same_as_eager(self, fn, count=2):
        """The generated code of fn, after checking it writes what eager writes."""
        expected, actual = _inputs(count), _inputs(count)
        fn(*expected)
        compiled = torch.compile(fn, backend="inductor", fullgraph=True)
        _, (code,) = run_and_get_code(compiled, *actual)
        for e, a in zip(expected, actual):
            self.assertEqual(a, e, atol=0, rtol=0)
        return code

    def _assert_one_loop_no_buffer(self, code):
        FileCheck().check_not("= empty_strided_cpu(").run(code)
        FileCheck().check_count("for(", 1, exactly=True).run(code)

    def test_foreach_copy_swap_of_clones_one_pass(self):
        def fn(a, b):
            torch._foreach_copy_([a, b], [b.clone(), a.clone()])

        self._assert_one_loop_no_buffer(self._compile_same_as_eager(fn))

    def test_foreach_copy_swap_of_computed_sources_one_pass(self):
        def fn(a, b):
            torch._foreach_copy_([a, b], torch._foreach_mul([b, a], 1.0))

        self._assert_one_loop_no_buffer(self._compile_same_as_eager(fn))

    def test_foreach_copy_rotate_three_one_pass(self):
        def fn(a, b, c):
            torch._foreach_copy_([a, b, c], [c.clone(), a.clone(), b.clone()])

        self._assert_one_loop_no_buffer(self._compile_same_as_eager(fn, count=3))

    def test_swap_through_explicit_copies_one_pass(self):
        # No foreach: a snapshot of a, the write over a, then the snapshot into b.
        def fn(a, b):
            old_a = a.clone()
            a.copy_(b)
            b.copy_(old_a)

        self._assert_one_loop_no_buffer(self._compile_same_as_eager(fn))


if __name__ == "__main__":
    if HAS_CPU:
        run_tests()
