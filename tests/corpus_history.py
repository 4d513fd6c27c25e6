"""Toy corpus records of two builds, filed as a corpus run files them
(`results/generated/<machine>/<build>/<isa>/corpus/<corpus>.json`), for the tests of what the
report and the verdict page make of a family over builds.

    ALIAS     inductor, wrong on both builds (2 programs, then 3), attributed, in the catalogue
    STALE     inductor, wrong on the first build only (not found on the second)
    UNFOLD    aot_eager, on the first build only: the second judged Inductor alone
    NOOP      inductor, new on the second build, matching no catalogue entry
"""

import json
from pathlib import Path

from benchmarks.machine import build_folder
from tools import results

CORPUS = "seed0-50"
PROGRAMS = 8
ALIAS = "inductor: output alias wrong in inductor, through reinplace_inplaceable_ops, from `clone`"
STALE = "inductor: second call wrong in inductor, through remove_noop_ops, from `index_put_`"
UNFOLD = "aot_eager: input after the call wrong in aot_eager, from `unfold`"
NOOP = "inductor: output alias wrong in inductor, from `add`"
PASS = "reinplace_inplaceable_ops"
NOTES = {
    "aot_eager": "not attributed: already wrong with aot_eager, which runs dynamo and "
    "AOTAutograd, no Inductor pass",
    "inductor": "no single pass, switched off, made it exact",
}
"""Why a family without a pass names none, by where its call first goes wrong."""


def repro(build: str, name: str) -> str:
    """A repro script with characters HTML escapes, different on each build and family."""
    return (
        f'import torch\n\n\ndef program(a):  # {name} on {build}\n    return a < 2 & "x"\n\n'
        f'print("return 0", "exact" if 1 < 2 else "WRONG: <b>&</b>")\n'
    )


def family(build: str, name: str, members: list[int], catalogue: str = "new") -> dict:
    backend, passes = name.split(":", 1)[0], [p for p in (PASS, "remove_noop_ops") if p in name]
    first_wrong = "aot_eager" if "aot_eager" in name else backend
    attribution = {
        "method": "ablation" if passes else None, "backend": backend if passes else None,
        "subsystem": "post_grad_passes" if passes else None, "bisect_number": None,
        "pass": passes[0] if passes else None,
        "passes": [{"subsystem": "post_grad_passes", "pass": p} for p in passes],
        "note": "" if passes else NOTES[first_wrong], "seconds": 3.5 if passes else None,
    }  # fmt: skip
    return {
        "backend": backend, "family": name, "first_wrong": first_wrong, "passes": passes,
        "kinds": ["output alias"], "essential": "clone", "skeleton": f"t0=clone(i0) [{name[:9]}]",
        "shrunk": "def program(a): ...", "coordinates": {"alias_0": 3},
        "repro": repro(build, name), "attribution": attribution, "members": members,
        "member_hashes": [f"{m:016x}" for m in members], "programs": len(members),
        "representative": members[0], "catalogue": catalogue,
    }  # fmt: skip


def record(build: str, backends: tuple[str, ...], families: list[dict]) -> dict:
    """The record of a corpus of `PROGRAMS` programs: a row per program and backend, wrong
    where a family of that backend holds the program."""
    wrong = {(f["backend"], m): f for f in families for m in f["members"]}
    rows = [
        {"program": i, "program_hash": f"{i:016x}", "backend": b, "judged": "screened",
         "wrong_elements": 3 if (b, i) in wrong else 0,
         "coordinates": {"alias_0": 3} if (b, i) in wrong else {},
         "family": wrong[(b, i)]["family"] if (b, i) in wrong else None,
         "representative": None, "shrunk": None, "repro": None, "attribution": None,
         "error": None}
        for i in range(PROGRAMS) for b in backends
    ]  # fmt: skip
    return {"corpus": CORPUS, "backends": list(backends), "programs": PROGRAMS, "rows": rows,
            "families": families, "seconds": 1.0}  # fmt: skip


def build(results_dir: Path, version: str, commit: str, *records: dict) -> results.BuildResult:
    """A build of machine `m` on torch `version` whose folder holds `records`."""
    identity = {"installed": True, "torch_version": version, "torch_git_version": commit * 40}
    folder = results_dir / "generated" / "m" / build_folder(identity) / "avx2" / "corpus"
    folder.mkdir(parents=True, exist_ok=True)
    for one in records:
        (folder / f"{one['corpus']}.json").write_text(json.dumps(one))
    tag = f"torch-{version}"
    return results.BuildResult(tag, commit * 40, "m", identity, results_dir=results_dir, tag=tag)


def two_builds(results_dir: Path) -> list[results.BuildResult]:
    """torch-2.13.0 (Inductor and aot_eager) and torch-2.15.0 (Inductor alone), by date."""
    older = record("torch-2.13.0", ("inductor", "aot_eager"), [
        family("torch-2.13.0", ALIAS, [1, 4], "aliasing.copy_of_mutated_input"),
        family("torch-2.13.0", STALE, [6]),
        family("torch-2.13.0", UNFOLD, [2]),
    ])  # fmt: skip
    newer = record("torch-2.15.0", ("inductor",), [
        family("torch-2.15.0", ALIAS, [1, 4, 5], "aliasing.copy_of_mutated_input"),
        family("torch-2.15.0", NOOP, [3]),
    ])  # fmt: skip
    return [build(results_dir, "2.13.0", "a", older), build(results_dir, "2.15.0", "b", newer)]
