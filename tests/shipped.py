"""The shipped builds.txt as tests that add their own patch lines read it: its release
timeline (the builds the recorded fixtures were measured on), without the fix candidates of
patches/, whose lines fork from it (tests/test_builds_and_ledger.py checks those)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def releases_text() -> str:
    """builds.txt's lines without its `patch` lines."""
    lines = (ROOT / "builds.txt").read_text().splitlines(keepends=True)
    return "".join(line for line in lines if line.split()[:1] != ["patch"])
