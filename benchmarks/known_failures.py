"""Which failures are known states: the one list.

A corpus program whose compile or compiled call fails (`benchmarks/corpus/oracle.py` keeps the
error as `<exception class>: <message>`, the class by its qualified name but for Python's own)
is counted (`corpus.Correctness.track_failed_programs`) and listed in the report, known or
not. A benchmark whose probe row records an error (`benchmarks/probes/probe.py`
`_describe_error`: `<exception class>: <first line> (at file:line)`) fails in asv, known or
not. Either is a known state when an entry of `KNOWN_FAILURES` covers it: its error starts as
the entry says (its first line, and its second where the entry gives `then`), on a release the
entry names. The report says why; `make history` does not fail for it. Any other failure
fails `make history` (exit 1, after everything is saved and published), so a new one is looked
at, then fixed or added here with its reason and releases. What a release lacks (an API, a
capability later releases have) is no failure: it is a skip naming the first release that has
it (`benchmarks/compat.py`).

The tools read this list in their own environment (no torch): standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass


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

    def covers(self, error: str, torch_version: str) -> bool:
        release = torch_version.split("+")[0]
        return (
            first_line(error).startswith(self.starts)
            and second_line(error).startswith(self.then)
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
        "torch 2.13-2.15's AOTAutograd merges overlapping inputs, one of them mutated, into a "
        "synthetic base (their common `._base`: in the corpus the 1-D tensor they were reshaped "
        "from), then rebuilds an output that is a view of one of those inputs by replaying the "
        "view's ViewMeta sequence on the synthetic base, though the sequence was recorded "
        "relative to the input (`create_synthetic_base_metadata` keeps it, `gen_alias_from_base` "
        "replays it after the compiled call): a 2-D view replayed on the 1-D base raises "
        "(programs 11 and 247 of seed0-500, grammar version 2, aot_eager and inductor alike; "
        "seen on 2.13.0, 2.14.1 and 2.15.0; dynamo alone runs them). pytorch/pytorch#198095, "
        "whose silent form is the catalogue's `aliasing.aliased_input_view_return`: the build's "
        "runtime wrapper fails, not the program, whose eager call is the reference",
        ("2.13", "2.14", "2.15"),
    ),
    KnownFailure(
        "ValueError: tree_unflatten(leaves, treespec): `leaves` has length",
        "torch 2.2's torch.export takes a program that mutates its inputs, but the module "
        "`.module()` unlifts from it returns the mutated inputs as extra outputs that its "
        "output spec does not hold, so calling it raises (snapshot_swap_configs' `export` "
        "variant; seen on 2.2.0 and 2.2.2): a fault of the build's export, not of the control, "
        "which runs eagerly as its reference; 2.1.x refuse such programs (a skip), 2.3.1 and "
        "2.4.1 run them",
        ("2.2",),
    ),
    KnownFailure(
        "torch._dynamo.exc.BackendCompilerFailed: backend='",
        "torch 2.13 and 2.14's fake tensors check `as_strided_scatter` with the Python meta "
        "(`torch._prims._as_strided_scatter_meta`, registered for the Meta key by "
        "`activate_meta`), which measures the storage offset and extent against the input's "
        "numel, not its storage. A mutation through an `as_strided` view of an input that is "
        "itself a view (storage offset 1 here) is written back by functionalization as "
        "`as_strided_scatter(input, ..., storage_offset)` with the absolute offset, and the "
        "check refuses it: `as_strided_scatter: sizes [3, 4], strides [6, 1], storage offset 9 "
        "... out of bounds for storage of size 96` (program 481 of seed0-500, grammar 2, "
        "aot_eager and inductor alike, seen on 2.13.0 and 2.14.1; 2.15.0 runs the C++ meta and "
        "compiles it, matching eager; pytorch/pytorch#140171). The build's compile fails, not "
        "the program: its eager call is the reference",
        ("2.13", "2.14"),
        then="RuntimeError: as_strided_scatter: sizes ",
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
    it (`...BackendCompilerFailed: backend='inductor' raised:`): what a reader needs."""
    first = first_line(error)
    return f"{first} {second_line(error)}".strip() if first.endswith("raised:") else first
