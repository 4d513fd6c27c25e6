"""A synthetic long history: the 26 releases of builds-long.txt on machine `vm` (ledger branch
`builds-long`), each a copy of a build recorded by `make history` (tests/fixtures/history),
so that `snapshot_swap.explicit_copies` under Inductor (both sizes) is wrong on 2.1.0-2.3.1,
exact on 2.4.0-2.8.0 and wrong again on 2.9.0-2.15.0: the wrong releases copy torch 2.14.1's
results (explicit_copies wrong, its wrong rows attributed to PASS here), the exact ones torch
2.15.0's (explicit_copies exact and costed). ROW's attribution names PASS at N=3 and points
there at N=1,048,576, as the probe records it. Each copy has its release's name, date, version
and a torch git version of its own (`git_version`); it is not on disk (no results folder)."""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path

from tools import builds, results

ROOT = Path(__file__).resolve().parents[1]
BRANCH = "builds-long"
ROW = ("snapshot_swap", "explicit_copies", "inductor")
PASS = "remove_noop_ops"
EXACT = ("2.4.0", "2.8.0")
"""The first and last release where ROW is exact; it is wrong on every other one."""


def releases() -> list[builds.Build]:
    return builds.read(ROOT / "builds-long.txt")


def git_version(release: str) -> str:
    """The upstream commit a copy says its release was built from."""
    return hashlib.sha1(f"torch {release}".encode()).hexdigest()


def exact_on(release: str) -> bool:
    first, last = (_version(r) for r in EXACT)
    return first <= _version(release) <= last


def long_history(recorded: list[results.BuildResult]) -> list[results.BuildResult]:
    """The 26 copies, oldest first, from the recorded builds (`results.load` of the fixtures)."""
    by_name = {build.name: build for build in recorded}
    wrong, exact = by_name["torch-2.14.1"], by_name["torch-2.15.0"]
    found = []
    for release in releases():
        version = release.name.removeprefix("torch-")
        build = copy.deepcopy(exact if exact_on(version) else wrong)
        build.name, build.branch = release.name, BRANCH
        build.tag = f"{BRANCH}/{release.name}"
        build.commit = hashlib.sha1(build.tag.encode()).hexdigest()
        build.results_dir = None
        build.identity = {**build.identity, "name": release.name, "date": str(release.date),
                          "torch_version": f"{version}+cpu", "cuda": None,
                          "torch_git_version": git_version(version),
                          "ledger_commit": build.commit}  # fmt: skip
        if not exact_on(version):
            for key, row in build.probe.items():
                if key[:3] == ROW:
                    row["attribution"] = _attribution(key[3])
        found.append(build)
    return found


def _attribution(n: int) -> dict:
    """ROW's attribution at size `n`, as a probe records it: PASS at the first wrong size (3),
    a pointer to it at the larger one (benchmarks/probes/probe.py)."""
    if n == 3:
        return {"method": "ablation", "subsystem": "post_grad_passes", "pass": PASS,
                "passes": [{"pass": PASS}]}  # fmt: skip
    pointer = "attributed at the first wrong size, 3"  # benchmarks/attribution.py's empty_result
    return {"method": None, "backend": None, "subsystem": None, "bisect_number": None,
            "pass": None, "passes": [], "note": pointer, "seconds": None}  # fmt: skip


def both_lines(recorded: list[results.BuildResult]) -> list[results.BuildResult]:
    """The recorded builds (builds.txt's line) and the long history, by date as
    `results.load` orders them (builds.txt's first on a date)."""
    everything = [*recorded, *long_history(recorded)]
    return sorted(everything, key=lambda b: (b.identity["date"], b.branch != "main"))


def _version(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in release.split("."))
