"""Which failures of a generated corpus program are expected states: the one list.

A corpus program whose compile or compiled call fails (`benchmarks/corpus/oracle.py` keeps the
error as `<exception class>: <message>`, the class by its qualified name but for Python's own)
is counted (`corpus.Correctness.track_failed_programs`) and listed in the report, known or
not. It is a known state when an entry of `KNOWN_FAILURES` covers it: its error starts as the
entry says, on a release the entry names. The report says
why; `make history` does not fail for it. Any other failure fails `make history` (exit 1,
after everything is saved and published), so a new one is looked at, then fixed or added here
with its reason and releases.

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

    def covers(self, error: str, torch_version: str) -> bool:
        release = torch_version.split("+")[0]
        return first_line(error).startswith(self.starts) and (
            self.releases is None
            or any(release == r or release.startswith(f"{r}.") for r in self.releases)
        )


KNOWN_FAILURES = (
    KnownFailure(
        "benchmarks.compat.Unsupported: ",
        "the build lacks an API or tool the compile needs (`compat.Unsupported`, a skip "
        "everywhere else in the suite)",
    ),
)


def known_failure(error: str, torch_version: str) -> KnownFailure | None:
    """The entry of `KNOWN_FAILURES` that covers `error` on this torch version, or None."""
    return next((k for k in KNOWN_FAILURES if k.covers(error, torch_version)), None)


def first_line(error: str) -> str:
    lines = error.strip().splitlines()
    return lines[0] if lines else ""
