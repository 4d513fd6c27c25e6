"""Which failures are known states: the one list.

A corpus program whose compile or compiled call fails (`benchmarks/corpus/oracle.py` keeps the
error as `<exception class>: <message>`, the class by its qualified name but for Python's own)
is counted (`corpus.Correctness.track_failed_programs`) and listed in the report, known or
not. A benchmark whose probe row records an error (`benchmarks/probes/probe.py`
`_describe_error`: `<exception class>: <first line> (at file:line)`) fails in asv, known or
not. Either is a known state when an entry of `KNOWN_FAILURES` covers it: its error starts as
the entry says (its first line, and its second where the entry gives `then`; nothing more on
that line where the entry is `bare`), it was raised where the entry says (`at`, where the
error names a place: `compat.raised_at`), on a release the entry names. The report says
why; `make history` does not fail for it. Any other failure
fails `make history` (exit 1, after everything is saved and published), so a new one is looked
at, then fixed or added here with its reason and releases. What a release lacks (an API, a
capability later releases have) is no failure: it is a skip naming the first release that has
it (`benchmarks/compat.py`).

The tools read this list in their own environment (no torch): standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PLACE = re.compile(r" \(at ([^()]+):\d+\)$")
"""Where an error says it was raised, at its end (`compat.raised_at`)."""


@dataclass(frozen=True)
class KnownFailure:
    """A failure that is an expected state on some releases."""

    starts: str
    """How the error's first line starts: the exception's class, then its message's start."""
    reason: str
    """Why it is expected, for the report."""
    releases: tuple[str, ...] | None = None
    """The torch releases it is known on (`2.13` covers every 2.13.x); None: every release."""
    then: str = ""
    """How the error's second line starts: where the first line only wraps the exception behind
    it (`torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:`), that one."""
    bare: bool = False
    """The line `starts` (or `then`) matches holds nothing more, but for where it was raised: an
    `assert` without a message (a bare `AssertionError:` on an old release), not every one."""
    at: tuple[str, ...] = ()
    """Where it is raised, as the error's `(at <path>:<line>)` names it: the file(s), from
    `torch/` on. An error that names no place (the rows measured before errors named one, stop
    25) is taken on its text alone."""

    def covers(self, error: str, torch_version: str) -> bool:
        release = torch_version.split("+")[0]
        first, second = first_line(error), second_line(error)
        matched = (second, self.then) if self.then else (first, self.starts)
        place = _PLACE.search(error.strip())
        return (
            first.startswith(self.starts)
            and second.startswith(self.then)
            and (not self.bare or _PLACE.sub("", matched[0]).strip() == matched[1].strip())
            and (not self.at or place is None or place.group(1) in self.at)
            and (
                self.releases is None
                or any(release == r or release.startswith(f"{r}.") for r in self.releases)
            )
        )


KNOWN_FAILURES = (
    KnownFailure(
        "benchmarks.compat.Unsupported: ",
        "the build lacks an API or tool the compile needs (`compat.Unsupported`, a skip "
        "everywhere else in the suite)",
    ),
    KnownFailure(
        "NameError: name 'buf",
        "torch 2.1's Inductor generates a wrapper that uses a buffer it never allocates (it "
        "returns a view of it, or index_put_s into it: `NameError: name 'buf0' is not defined` "
        "when the compiled call runs; programs 24 and 47 of seed0-50, seen on 2.1.0 and 2.1.2, "
        "not on 2.2.0): the build's generated code fails, not the program, whose eager call is "
        "its reference",
        ("2.1",),
    ),
    KnownFailure(
        "IndexError: Dimension out of range (expected to be in range of [-1, 0], but got 1)",
        "torch 2.4-2.15's AOTAutograd merges overlapping inputs, one of them mutated, into a "
        "synthetic base (their common `._base`: in the corpus the 1-D tensor they were reshaped "
        "from), then rebuilds an output that is a view of one of those inputs by replaying the "
        "view's ViewMeta sequence on the synthetic base, though the sequence was recorded "
        "relative to the input (`create_synthetic_base_metadata` keeps it, `gen_alias_from_base` "
        "replays it after the compiled call): a 2-D view replayed on the 1-D base raises "
        "(programs 11 and 247 of seed0-500, grammar version 2, aot_eager and inductor alike; seen "
        "on 2.4.1, 2.5.0, 2.6.0, 2.7.0, 2.8.0, 2.9.0, 2.10.0, 2.11.0, 2.12.0, 2.13.0, 2.14.1 and "
        "2.15.0; dynamo alone runs them; on 2.1.0 and 2.3.0 the same programs meet the "
        "synthetic-base assert first). pytorch/pytorch#198095, whose silent form is the "
        "catalogue's `aliasing.aliased_input_view_return`: the build's runtime wrapper fails, not "
        "the program, whose eager call is the reference",
        ("2.4", "2.5", "2.6", "2.7", "2.8", "2.9", "2.10", "2.11", "2.12", "2.13", "2.14", "2.15"),
    ),
    KnownFailure(
        "ValueError: tree_unflatten(leaves, treespec): `leaves` has length",
        "torch 2.2's torch.export takes a program that mutates its inputs, but the module "
        "`.module()` unlifts from it returns the mutated inputs as extra outputs that its output "
        "spec does not hold, so calling it raises (snapshot_swap_configs' `export` variant; seen "
        "on 2.2.0 and 2.2.2): a fault of the build's export, not of the control, which runs "
        "eagerly as its reference; 2.1.x refuse such programs (a skip), 2.3.1 and 2.4.1 run them",
        ("2.2",),
    ),
    KnownFailure(
        "torch._dynamo.exc.BackendCompilerFailed: backend='",
        "torch 2.1-2.14's fake tensors check `as_strided_scatter` with the Python meta "
        "(`torch._prims._as_strided_scatter_meta`, registered for the Meta key by "
        "`activate_meta`), which measures the storage offset and extent against the input's "
        "numel, not its storage. A mutation through an `as_strided` view of an input that is "
        "itself a view (storage offset 1 here) is written back by functionalization as "
        "`as_strided_scatter(input, ..., storage_offset)` with the absolute offset, and the check "
        "refuses it: `as_strided_scatter: sizes [3, 4], strides [6, 1], storage offset 9 ... out "
        "of bounds for storage of size 96` (program 481 of seed0-500, grammar 2, aot_eager and "
        "inductor alike, seen on 2.1.0, 2.2.0, 2.3.0, 2.4.1, 2.5.0, 2.6.0, 2.7.0, 2.8.0, 2.9.0, "
        "2.10.0, 2.11.0, 2.12.0, 2.13.0 and 2.14.1 with the same message; 2.15.0 runs the C++ "
        "meta and compiles it, matching eager; pytorch/pytorch#140171). The build's compile "
        "fails, not the program: its eager call is the reference",
        (
            "2.1",
            "2.2",
            "2.3",
            "2.4",
            "2.5",
            "2.6",
            "2.7",
            "2.8",
            "2.9",
            "2.10",
            "2.11",
            "2.12",
            "2.13",
            "2.14",
        ),
        then="RuntimeError: as_strided_scatter: sizes ",
    ),
    KnownFailure(
        "AssertionError:",
        "torch 2.1-2.10's AOTAutograd compiles a graph for overlapping inputs, one of them "
        "mutated, against a synthetic base (their common storage), and dynamo with static shapes "
        "does not guard on storage overlap (2.1-2.5 have no such guard; 2.10's `StorageOverlap` "
        "is only issued for symbolic shapes), so the oracle's later call of the same compiled "
        "function on independent inputs of the same layouts (`unaliased_*`) reuses that graph: "
        "its runtime wrapper finds the inputs no longer alias and fails the bare `assert "
        "synthetic_base_info is not None` (2.1.0 torch/_functorch/aot_autograd.py:2470, every "
        "such row of 2.1.0 reproduced; 2.2.0 _aot_autograd/runtime_wrappers.py:733, measured and "
        "read; 2.3.0 :751, measured and read: 35 aot_eager and 33 inductor rows, program 11 among "
        "them, as on 2.1.0; 2.4.1 :1073, 2.5.0 :1149, 2.10.0 :1238, read in their sources; 2.6.0 "
        ":1155, 2.7.0 :1167, 2.8.0 :1212 and 2.9.0 :1232, measured and read). 30-33 programs of "
        "seed0-500, aot_eager and inductor alike. 2.11 and 2.12 raise it with a message "
        "(measured); 2.13.0 drops the check and the stale graph runs: 26 of 2.10.0's 33 such "
        "programs are wrong on 2.13.0 and 2.15.0 in that call (their `unaliased_*` coordinates), "
        "this fault gone silent. The build fails, not the program: it is defined on independent "
        "inputs (`program.py`) and eager is the reference. Only a bare assert raised in those two "
        "files (rows measured before errors named their place: any bare assert) on these releases",
        ("2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "2.8", "2.9", "2.10"),
        bare=True,
        at=(
            "torch/_functorch/aot_autograd.py",
            "torch/_functorch/_aot_autograd/runtime_wrappers.py",
        ),
    ),
    KnownFailure(
        "AssertionError: synthetic_base_info must not be None",
        "torch 2.11 and 2.12's form of the synthetic-base fault of 2.1-2.10 (the entry above: a "
        "graph compiled for overlapping inputs reused for the oracle's later call on independent "
        "inputs): the same check, now raising with a message "
        "(torch/_functorch/_aot_autograd/runtime_wrappers.py:1532 on 2.11.0, :1586 on 2.12.0, "
        "measured: the same 33 programs of seed0-500, aot_eager and inductor alike). The build "
        "fails, not the program",
        ("2.11", "2.12"),
        at=("torch/_functorch/_aot_autograd/runtime_wrappers.py",),
    ),
    KnownFailure(
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:",
        "torch 2.4-2.11's Inductor decomposes `index_fill` with `torch._refs._index_fill`, which "
        "restores a non-contiguous input's strides with `empty_like` + `copy_`; the decomposition "
        "runs below functionalization, so the `copy_` into a fresh tensor stays in the graph and "
        "AOTAutograd's `assert_functional_graph` refuses it (`n=copy_, n.args[0]=permute` or "
        "`=empty`: 2.4.1 _aot_autograd/functional_utils.py:414, 2.10.0 :487, read in their "
        "sources; 2.6.0 :461, 2.7.0 :460, 2.8.0 :456, 2.9.0 :475 and 2.11.0 :515, measured). "
        "`index_fill_` on a transposed, strided or `as_strided` tensor: programs 5, 52, 85, 247, "
        "367, 378, 475, 498 of seed0-500, inductor only (aot_eager does not decompose it). "
        "2.12.0's reference writes with the functional `prims.copy_strided` instead (source; "
        "measured: 2.12.0 compiles them; pytorch/pytorch#144846). The build's compile fails, not "
        "the program, whose eager call is the reference",
        ("2.4", "2.5", "2.6", "2.7", "2.8", "2.9", "2.10", "2.11"),
        then="AssertionError: n=copy_, n.args[0]=",
    ),
    KnownFailure(
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:",
        "torch 2.1-2.3's form of the `index_fill` fault of 2.4-2.11 (the `empty_like` + `copy_` "
        "of `torch._refs._index_fill` left in the graph): the same programs 5, 52, 85, 247, 367, "
        "378, 475, 498, inductor only, but 2.1's `assert n.args[0] in placeholders` has no "
        "message (torch/_functorch/aot_autograd.py:1622, every such row reproduced; 2.1.1's rows "
        "name it; 2.2.0 moved it to torch/_functorch/_aot_autograd/functional_utils.py:331, where "
        "its 8 rows name it; 2.3.0 at :327 of that file, its 8 rows measured and the line read). "
        "Only a bare assert raised there",
        ("2.1", "2.2", "2.3"),
        then="AssertionError:",
        bare=True,
        at=(
            "torch/_functorch/aot_autograd.py",
            "torch/_functorch/_aot_autograd/functional_utils.py",
        ),
    ),
    KnownFailure(
        "torch._dynamo.exc.BackendCompilerFailed: backend='",
        "torch 2.1's AOTAutograd, building the synthetic base of overlapping inputs one of which "
        "is mutated, indexes `requires_grad_info` (one entry per mutated input, then per graph "
        "output) with the inputs' own positions (`create_synthetic_base_metadata`, "
        "torch/_functorch/aot_autograd.py:2049): `IndexError: list index out of range` when the "
        "graph has fewer mutated inputs and outputs than the highest position (programs 89, 166, "
        "214, 284, 363 of seed0-500, aot_eager and inductor alike; reproduced on 2.1.0). 2.2.0 "
        "reads `input_info[x].requires_grad` instead (source); from 2.4.1 on these programs "
        "compile and meet the synthetic-base assert. The build's compile fails, not the program",
        ("2.1",),
        then="IndexError: list index out of range",
    ),
    KnownFailure(
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:",
        "torch 2.1's Inductor lowering of foreach ops asks every size of each argument for "
        "`.free_symbols` (`make_foreach_pointwise`, torch/_inductor/lowering.py:425), but a slice "
        "of an `unfold` view has plain `int` sizes: `_foreach_mul_` on two row slices of "
        "`a.unfold(1, 3, 3)` (program 54 of seed0-500, inductor; reproduced on 2.1.0). 2.2.0 asks "
        "`has_free_symbols`, which takes ints (source). The build's compile fails, not the program",
        ("2.1",),
        then="LoweringException: AttributeError: 'int' object has no attribute 'free_symbols'",
    ),
    KnownFailure(
        "RuntimeError: view size is not compatible with input tensor's size and stride",
        "torch 2.1-2.4's fake `aten.zero` (the functional `zero_`) returns a contiguous tensor "
        "(`meta_zero`: `self.new_empty(self.shape)`) where eager keeps the input's strides, so "
        "the trace takes a transposed input, zeroed then written by foreach ops, for contiguous "
        "and records its `reshape(-1)` as a `view`, which the real, transposed tensor cannot take "
        "(program 165 of seed0-500: aot_eager on 2.1.0, 2.2.0 and 2.3.0, both backends on 2.4.1; "
        "reproduced on 2.1.0: fake strides (5, 1), eager's (1, 5)). 2.5.0 runs it (measured; what "
        "changed there is not pinned). The compiled call fails, not the program",
        ("2.1", "2.2", "2.3", "2.4"),
    ),
    KnownFailure(
        "RuntimeError: setStorage: sizes ",
        "torch 2.1-2.3's Inductor returns an `as_strided` view of an input as "
        "`reinterpret_tensor(arg, size, stride, offset)`, whose offset is added to the input's "
        "own storage offset, so the output's offset is counted twice (program 249 of seed0-500: "
        "`b.as_strided((3, 4), (1, 5), 10)` of a `[1:7]` slice at offset 4 comes out at 14), and "
        "AOTAutograd regenerates that output alias as `as_strided` of the input at offset 14, "
        "past its storage (`gen_alias_from_base`, torch/_functorch/aot_autograd.py:669; inductor; "
        "reproduced on 2.1.0; 2.2.0 the same, at _aot_autograd/functional_utils.py:240, measured; "
        "2.3.0 at :238, measured). 2.4.1 runs it (measured; 2.4 regenerates output aliases by "
        "replaying their views). The compiled call fails, not the program",
        ("2.1", "2.2", "2.3"),
    ),
    KnownFailure(
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:",
        "torch 2.3's C++ scheduler fuses two pointwise nodes with the same number of elements but "
        "loops of different shapes, e.g. (64,) and (8, 8) "
        "(`_can_fuse_nodes_with_compatible_ranges`, new in 2.3, pytorch/pytorch#120077), by "
        "recomputing the flatter node's loops against the other's indexing, then asserts that the "
        "two now agree (`assert vars1 == vars2, (vars1, vars2)` in `CppScheduling.fuse`, "
        "torch/_inductor/codegen/cpp.py:3532 on 2.3.0, read in its source); where the recompute "
        "keeps the node's own shape the assert fails: programs 49, 80, 141 and 290 of seed0-500 "
        "(an elementwise op beside foreach ops or a `slice_scatter` on views of one input), "
        "inductor only, measured on 2.3.0 and 2.3.1; 2.2.x and 2.4.1 compile them (measured). The "
        "build's compile fails, not the program, whose eager call is the reference",
        ("2.3",),
        then="AssertionError: ((",
        at=("torch/_inductor/codegen/cpp.py",),
    ),
)


def known_failure(error: str, torch_version: str) -> KnownFailure | None:
    """The entry of `KNOWN_FAILURES` that covers `error` on this torch version, or None."""
    return next((k for k in KNOWN_FAILURES if k.covers(error, torch_version)), None)


def first_line(error: str) -> str:
    lines = error.strip().splitlines()
    return lines[0] if lines else ""


def second_line(error: str) -> str:
    lines = error.strip().splitlines()
    return lines[1] if len(lines) > 1 else ""


def headline(error: str) -> str:
    """The error's first line, and its second where the first only wraps the exception behind
    it (`...BackendCompilerFailed: backend='inductor' raised:`), with where it was raised (at
    the error's end): what a reader needs to tell two failures apart."""
    first = first_line(error)
    if not first.endswith("raised:"):
        return first
    second, place = second_line(error), _PLACE.search(error.strip())
    return f"{first} {second}{place.group(0) if place and place.group(0) not in second else ''}"
