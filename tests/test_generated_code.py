"""The parsers on generated code kept from five torch generations (tests/fixtures/generated).

2.4-era code spells a pass as a vector loop plus a scalar tail loop; 2.7 and later as one
loop with a masked tail. The expected counts below were read off the code by hand (the
write-up's explicit copy keeps 3 passes, the stack buffer 4); the expected scratch is what
the profiler measured when the fixture was generated (`measured.json`), an independent
measurement.
"""

import json
import re
from pathlib import Path

import pytest

from benchmarks.probes import generated_code as gc

FIXTURES = Path(__file__).parent / "fixtures" / "generated"
WRAPPERS = sorted(FIXTURES.glob("*/*/n*/wrapper.py"))

# (control, the control was correct on that build) -> full-length passes, read off the code:
# a correct clone-based swap saves one input, copies the other over it, restores the first
# (3); the stack writes both halves then copies both back (4); the miscompiled foreach loads
# one source and stores it to both outputs (1); the miscompiled explicit copies store b<-a
# then a<-b, as two loops (2.4) or fused into one (2.7 and later).
PASSES = {
    ("explicit_copies", True): 3,
    ("stack_buffer", True): 4,
    ("foreach_clones", True): 3,
    ("foreach_clones", False): 1,
}


def _case(wrapper: Path) -> tuple[str, str, int, dict]:
    build, control, size = wrapper.parts[-4], wrapper.parts[-3], int(wrapper.parent.name[1:])
    measured = json.loads((FIXTURES / build / "measured.json").read_text())
    return build, control, size, measured["cases"][f"{control}/n{size}"]


def test_fixtures_cover_three_generations():
    builds = {p.parts[-4].split("-")[1].rsplit(".", 1)[0] for p in WRAPPERS}
    assert {"2.4", "2.7", "2.13"} <= builds
    assert len(MEASURED) >= 10


@pytest.mark.parametrize("wrapper", WRAPPERS, ids=lambda p: "/".join(p.parts[-4:-1]))
def test_full_length_loops(wrapper):
    build, control, size, measured = _case(wrapper)
    correct = measured["wrong_elements"] == 0
    text = wrapper.read_text()
    if (control, correct) == ("explicit_copies", False):
        expected = 2 if build.startswith("torch-2.4.") else 1
    else:
        expected = PASSES[(control, correct)]
    assert gc.full_length_loops(text, size) == expected


MEASURED = [w for w in WRAPPERS if _case(w)[3]["profiler_scratch_bytes"] is not None]


@pytest.mark.parametrize("wrapper", MEASURED, ids=lambda p: "/".join(p.parts[-4:-1]))
def test_static_scratch_matches_the_profiler(wrapper):
    """Only correct controls were profiled when the fixtures were made."""
    _, _, _, measured = _case(wrapper)
    static = gc.static_scratch(wrapper.read_text())
    assert static.peak_bytes == measured["profiler_scratch_bytes"], static.reason


def test_vector_plus_tail_counts_once():
    # 2.4.1 at N=1000: each pass is a 0..992 vector loop plus a 992..1000 scalar tail loop.
    text = (FIXTURES / "torch-2.4.1+cu121-38b96d33/foreach_clones/n1000/wrapper.py").read_text()
    statements = sum(len(re.findall(r"\bfor\s*\(", k.source)) for k in gc.kernels(text))
    assert statements == 6
    assert gc.full_length_loops(text, 1000) == 3


def test_kernels_found_in_every_spelling():
    for wrapper in WRAPPERS:
        found = gc.kernels(wrapper.read_text())
        assert found, wrapper
        assert all("kernel(" in k.source for k in found)


def _loop(start, end, body="out_ptr0[x0] = in_ptr0[x0];", var="x0", cast="int64_t"):
    return (
        f"for({cast} {var}=static_cast<{cast}>({start}L); {var}<static_cast<{cast}>({end}L); "
        f"{var}+=static_cast<{cast}>(1L))\n{{\n    {body}\n}}\n"
    )


def test_nested_scalar_tail_belongs_to_its_vector_loop():
    inner = _loop(0, 3, var="x0_tail")
    cpp = _loop(0, 3, body=inner)
    assert len(gc.loops(cpp)) == 2
    assert gc.full_length_passes(cpp, 3) == 1


def test_separate_passes_are_counted_separately():
    assert gc.full_length_passes(_loop(0, 8) + _loop(0, 8), 8) == 2


def test_a_loop_over_two_lengths_counts_two_passes():
    assert gc.full_length_passes(_loop(0, 16), 8) == 2


def test_partial_loops_are_not_passes():
    assert gc.full_length_passes(_loop(0, 5), 8) == 0


def test_a_loop_with_symbolic_bounds_fails_naming_its_header():
    """Under dynamic=False every bound is a number: a symbol means the code is not what the
    parser was written for, and skipping the loop would undercount."""
    symbolic = "for(int64_t x0=0L; x0<ks0; x0+=1L) { out_ptr0[x0] = 0; }"
    with pytest.raises(gc.UnreadableCode, match=r"not numbers: 'int64_t x0=0L; x0<ks0; x0\+=1L'"):
        gc.full_length_passes(symbolic, 8)


def test_a_loop_header_the_parser_cannot_read_fails_naming_it():
    cpp = _loop(0, 8) + "for (auto& value : values) { value = 0; }\n"
    with pytest.raises(gc.UnreadableCode, match=r"does not read: 'auto& value : values'"):
        gc.full_length_passes(cpp, 8)


def _fixture(build: str, control: str, size: int) -> str:
    return (FIXTURES / build / control / f"n{size}" / "wrapper.py").read_text()


def test_a_kernel_spelled_another_way_fails_naming_the_line():
    text = _fixture("torch-2.13.0+cpu-cf30153c", "stack_buffer", 3)
    unread = "cpp_fused_other_1 = async_compile.cpp_pybinding(['float*'], SOURCE_FROM_ELSEWHERE)"
    with pytest.raises(gc.UnreadableCode, match="SOURCE_FROM_ELSEWHERE"):
        gc.kernels(text.replace("\nasync_compile.wait", f"\n{unread}\nasync_compile.wait", 1))


def test_an_unread_kernel_swallowed_by_the_next_one_fails():
    """A definition without its own source would otherwise borrow the next kernel's."""
    text = _fixture("torch-2.13.0+cpu-cf30153c", "stack_buffer", 3)
    first = text.index("cpp_fused_")
    unread = "cpp_fused_other_9 = async_compile.cpp_pybinding(['float*'], SOURCE_FROM_ELSEWHERE)\n"
    with pytest.raises(gc.UnreadableCode, match="cpp_fused__foreach_copy_stack_unbind_0 ="):
        gc.kernels(text[:first] + unread + text[first:])


def test_a_wrapper_without_kernels_has_no_passes_to_count():
    text = _wrapper("buf0 = extern_kernels.mm(arg0_1, arg1_1)")
    with pytest.raises(gc.UnreadableCode, match="no C\\+\\+ kernel.*extern_kernels.mm"):
        gc.full_length_loops(text, 8)


WRAPPER_TEMPLATE = """
def call(args):
    arg0_1, arg1_1 = args
    args.clear()
{body}
    return ()
"""


def _wrapper(*lines):
    return WRAPPER_TEMPLATE.format(body="\n".join("    " + line for line in lines))


def test_static_scratch_follows_aliases_and_frees():
    text = _wrapper(
        "buf0 = empty_strided_cpu((8, ), (1, ), torch.float32)",
        "buf1 = reinterpret_tensor(buf0, (4, ), (1, ), 0)  # alias",
        "del buf0",  # buf1 keeps the storage alive
        "buf2 = empty_strided((2, 4), (4, 1), device='cpu', dtype=torch.float64)",
        "del buf1",
        "buf3 = empty_strided_cpu((4, ), (1, ), torch.float32)",
        "del buf2, buf3",
    )
    scratch = gc.static_scratch(text)
    assert scratch.peak_bytes == 8 * 4 + 8 * 8
    assert scratch.allocations == 3


def test_static_scratch_reads_torch_2_2s_contiguous_empty():
    """torch 2.2's wrapper allocates with `empty(size, device=, dtype=)`, contiguous strides
    implied (the long history's shard 4 failed on it: the fixture of 2.2.0 holds the real
    code and its profiler figure)."""
    text = _wrapper(
        "buf0 = empty((3, 4), device='cpu', dtype=torch.float32)",
        "buf1 = empty((5, ), device='cpu', dtype=torch.int64)",
        "del buf0",
        "buf2 = empty((0, 7), device='cpu', dtype=torch.float32)",
    )
    scratch = gc.static_scratch(text)
    assert scratch.peak_bytes == 12 * 4 + 5 * 8
    assert scratch.allocations == 3
    unknown = gc.static_scratch(_wrapper("buf0 = empty((s0, ), device='cpu', dtype=torch.float32)"))
    assert unknown.peak_bytes is None and "unknown size" in unknown.reason


def test_static_scratch_says_when_it_cannot_know():
    text = _wrapper("buf0 = extern_kernels.mm(arg0_1, arg1_1)")
    scratch = gc.static_scratch(text)
    assert scratch.peak_bytes is None
    assert "extern_kernels.mm" in scratch.reason


def test_wrapper_without_call_is_rejected():
    with pytest.raises(ValueError, match="def call"):
        gc.static_scratch("print('not a wrapper')")
