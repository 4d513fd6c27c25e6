"""A named corpus on the installed torch: one row per (program, backend), and its families.

Every program goes through the oracle per backend, screened (`screen.py`: groups of programs
share a compile, every suspect is judged again alone, so a wrong verdict is always one
program's). The wrong rows are sorted into families by fault (`found_families`): one
representative per candidate group is shrunk and, for an Inductor fault, attributed
(`benchmarks/attribution.py`, with the whole oracle as the check: every coordinate of every
call); the other members are checked against its pass. Each family then names the catalogue
controls with the same fault (`catalogue.py`). Verdicts are memoized by program text and
backend, so shrinking never compiles the same candidate twice in one worker.

Every wrong row carries a repro of its own program; a representative's row and its family
carry the shrunk one. A fault already there under `aot_eager` runs no Inductor pass: its
attribution says so without compiling. `$WRITEBACK_ATTRIBUTION=0` turns attribution off, as
for the scenarios; `$WRITEBACK_CORPUS_SCREEN=0` judges every program alone.
"""

from __future__ import annotations

import os
import sys
import time

import torch

from .. import attribution, pool
from ..probes.probe import ready_to_compile
from . import catalogue, screen
from .families import Fault, essential_op, group, kinds, shape
from .generate import generate
from .oracle import Outcome, judge, judge_coordinates
from .program import Program
from .repro import repro
from .screen import GROUP
from .shrink import shrink

BACKENDS = ("inductor", "aot_eager")
CORPORA = {
    "seed0-50": (0, 50),
    "seed0-200": (0, 200),
    "seed0-500": (0, 500),
    "seed1-1000": (1, 1000),
}
DEFAULT = "seed0-500"
"""The corpus every history run measures: the first 500 programs of seed 0 (grammar version 2:
on torch 2.15.0 its first 200 already reach the five families a public differential fuzzer
sorted its findings into, some with one or two programs; 500 reach each with four or more).
`seed0-50` and `seed0-200` are its first 50 and 200 (quick checks), `seed1-1000` another seed
for a nightly or CI run; `$WRITEBACK_CORPORA` adds them without changing the parameter
space. Time: docs/time-and-disk.md."""
KNOB = "WRITEBACK_CORPORA"
"""Which named corpora run: unset, the default only; else comma-separated names, `all` or `none`."""


def chosen() -> set[str]:
    text = os.environ.get(KNOB)
    if text is None:
        return {DEFAULT}
    names = {part.strip() for part in text.split(",") if part.strip()} - {"none"}
    if unknown := names - set(CORPORA) - {"all"}:
        raise ValueError(
            f"${KNOB} names unknown corpora {sorted(unknown)} (known: {list(CORPORA)})"
        )
    return set(CORPORA) if "all" in names else names


def enabled(name: str) -> str | None:
    """None when corpus `name` runs here, else why not."""
    if name in chosen():
        return None
    return f"corpus {name} runs only when ${KNOB} names it (or is 'all')"


def programs(name: str) -> list[Program]:
    seed, count = CORPORA[name]
    return [generate(seed, index) for index in range(count)]


class Judge:
    """The oracle with a memo: (program text, backend) -> outcome."""

    def __init__(self):
        self.memo: dict[tuple[str, str, str], Outcome] = {}

    def __call__(self, program: Program, backend: str) -> Outcome:
        key = (program.source(), repr(program.inputs), backend)
        if key not in self.memo:
            self.memo[key] = judge(program, backend)
        return self.memo[key]


def run(
    name: str, backends=BACKENDS, corpus: list[Program] | None = None, workers: int = 1
) -> dict:
    """The record: one row per (program, backend) and the families of the wrong ones.

    Programs are judged in chunks of `screen.GROUP`, screened (`screen.py`), `workers`
    processes side by side (`benchmarks/pool.py`), each keeping its memo for this run only;
    then the wrong rows are sorted into families (`found_families`)."""
    corpus = programs(name) if corpus is None else corpus
    run_id = f"{name}-{os.getpid()}-{time.monotonic_ns()}"
    threads = torch.get_num_threads()
    tasks = [
        (run_id, list(enumerate(corpus))[start : start + GROUP], tuple(backends), threads)
        for start in range(0, len(corpus), GROUP)
    ]
    started = time.perf_counter()
    judged, wrong = 0, 0

    def progress(_, chunk):
        nonlocal judged, wrong
        judged += len(chunk) // max(1, len(backends))
        wrong += sum(1 for row in chunk if row["wrong_elements"])
        _progress(name, f"{judged}/{len(corpus)} programs judged, {wrong} wrong rows", started)

    rows = [row for chunk in pool.run(_judge_chunk, tasks, workers, on_result=progress)
            for row in chunk]  # fmt: skip
    judging = round(time.perf_counter() - started, 1)
    entries: dict[str, dict] = {}

    def judge_entries() -> None:
        """The catalogue's controls judged on each backend, for the match below: in this
        process beside the workers that shrink the first round's representatives (a round
        with one representative leaves a core idle), or before them when that round runs
        in this process (one worker, or one representative)."""
        entries.update(catalogue.judged_entries(backends))

    found = found_families(
        rows, corpus, run_id, workers, lambda text: _progress(name, text, started), judge_entries
    )
    if found:
        _progress(name, "matching the families with the catalogue's controls", started)
        catalogue.match(found, tuple(backends), wrong=entries or None, workers=workers)
    return {
        "corpus": name,
        "backends": list(backends),
        "programs": len(corpus),
        "screened": screen.screening(),
        "rows": rows,
        "families": found,
        "seconds": round(time.perf_counter() - started, 1),
        "judging_seconds": judging,
    }


def _progress(name: str, text: str, started: float) -> None:
    print(f"[writeback corpus {name}] {text}, {time.perf_counter() - started:.0f} s",
          file=sys.stderr, flush=True)  # fmt: skip


_MEMO: dict[str, Judge] = {}
"""This process's oracle for the run it is judging (a worker judges chunks of one run)."""


def _oracle(run_id: str, threads: int) -> Judge:
    """This process's memoized oracle for run `run_id` (a pool task's first step)."""
    ready_to_compile(threads)
    if run_id not in _MEMO:
        _MEMO.clear()
        _MEMO[run_id] = Judge()
    return _MEMO[run_id]


def _judge_chunk(
    run_id: str, chunk: list[tuple[int, Program]], backends: tuple, threads: int
) -> list[dict]:
    """The rows of a chunk of programs (a pool task), screened per backend."""
    oracle = _oracle(run_id, threads)
    programs_ = [program for _, program in chunk]
    rows = []
    for backend in backends:
        for (index, program), (outcome, how) in zip(
            chunk, screen.judge_all(programs_, backend, oracle)
        ):
            rows.append(_row(index, program, backend, outcome, how))
    return sorted(rows, key=lambda row: (row["program"], backends.index(row["backend"])))


def _row(index: int, program: Program, backend: str, outcome: Outcome, how: str) -> dict:
    return {
        "program": index,
        "program_hash": program.hash(),
        "backend": backend,
        "judged": how,
        "wrong_elements": outcome.total,
        "coordinates": outcome.wrong,
        "error": outcome.error,
        "family": None,
        "shrunk": None,
        "repro": repro(program, backend, outcome.wrong) if outcome.is_wrong else None,
        "representative": None,
        "attribution": None,
    }


def first_wrong(row: dict, rows: list[dict]) -> str:
    """Where the row's call first goes wrong: `aot_eager` when the same program is wrong
    there too (dynamo and AOTAutograd, before any Inductor pass), else its own backend."""
    if row["backend"] == "aot_eager":
        return "aot_eager"
    before = [r for r in rows if r["program"] == row["program"] and r["backend"] == "aot_eager"]
    return "aot_eager" if before and before[0]["wrong_elements"] else row["backend"]


def found_families(rows: list[dict], corpus: list[Program], run_id: str, workers: int,
                   progress=lambda text: None, beside=None) -> list[dict]:  # fmt: skip
    """The wrong rows sorted into families by fault (`families.py`), each row naming its
    family and representative.

    First the rows wrong where they first go wrong (an `aot_eager` row; an Inductor row exact
    under `aot_eager`). Candidate groups share backend and where the call first goes wrong;
    an `aot_eager` group is split by the op its first wrong coordinate comes from
    (`essential_op` of the unshrunk program: no pass can tell such rows apart). In rounds,
    each open group's smallest pending member becomes a representative: shrunk, attributed
    (Inductor faults), its fault read off the shrunk program; then each pending member of its
    group is checked against it: with the representative's passes switched off, exact means
    the same fault and the member joins its family; otherwise it waits for the next round. A
    representative naming no pass takes its whole group. Families whose faults come out the
    same are one.

    Then the Inductor rows already wrong under `aot_eager`: one group per `aot_eager` family
    of their programs, represented by that family's representative where it is a member,
    whose shrink starts from the `aot_eager` one (kept when still wrong under Inductor).

    `beside`, when given, runs in this process while the first round's workers work (see
    `pool.run`); it runs once, and only when there is a wrong row."""
    threads = torch.get_num_threads()
    wrong = [r for r in rows if r["wrong_elements"]]
    own = [r for r in wrong if first_wrong(r, rows) == r["backend"]]
    found: dict[str, dict] = {}
    shrunk: dict[tuple[int, str], Program] = {}  # (program, backend shrunk on) -> shrunk
    pending = group(own, lambda r: _candidate_key(r, rows, corpus))
    _rounds(pending, corpus, shrunk, found, run_id, workers, threads, progress, beside=beside)
    before = [r for r in wrong if first_wrong(r, rows) != r["backend"]]
    families_before = {(r["program"], r["backend"]): r for r in own}
    pending = group(before, lambda r: (r["backend"], first_wrong(r, rows), families_before[
        (r["program"], first_wrong(r, rows))]["family"]))  # fmt: skip
    _rounds(pending, corpus, shrunk, found, run_id, workers, threads, progress,
            first=lambda key, r: r["program"] == found[key[2]]["representative"])  # fmt: skip
    return sorted(found.values(), key=lambda f: (f["backend"], -f["programs"], f["family"]))


def _rounds(pending, corpus, shrunk, found, run_id, workers, threads, progress,
            first=lambda key, row: False, beside=None) -> None:  # fmt: skip
    """`_round` until every group's members are filed; `first(key, row)` puts a member at
    the head of its group (else the smallest program comes first); `beside` runs beside the
    first round's representatives."""
    for key, members in pending.items():
        members.sort(key=lambda r: (not first(key, r), len(corpus[r["program"]].statements),
                                    r["program"]))  # fmt: skip
    while any(pending.values()):
        _round(pending, corpus, shrunk, found, run_id, workers, threads, progress, beside)
        beside = None


def _round(pending, corpus, shrunk, found, run_id, workers, threads, progress,
           beside=None) -> None:  # fmt: skip
    """One round of `found_families`: each open group's head represents it (shrunk from its
    program's earlier shrink where there is one), then its other members are checked."""
    heads = [(key, members.pop(0)) for key, members in pending.items() if members]
    progress(f"{len(heads)} representative(s) to shrink and attribute")
    made = pool.run(_represent, [
        (run_id, shrunk.get((row["program"], key[1]), corpus[row["program"]]), key[0], key[1],
         threads) for key, row in heads
    ], workers, beside=beside)  # fmt: skip
    for (key, row), family in zip(heads, made):
        shrunk.setdefault((row["program"], key[0]), family.pop("program"))
    checks = [(family, key, row, member) for (key, row), family in zip(heads, made)
              for member in pending[key]]  # fmt: skip
    if checks:
        progress(f"{len(checks)} member(s) to check against their representative's pass")
    same = _same_faults(checks, corpus, run_id, workers, threads)
    joined = {id(row): [row] for _, row in heads}
    for (_, key, row, member), verdict in zip(checks, same):
        if verdict is not False:  # True, or None: no pass to tell them apart
            joined[id(row)].append(member)
            pending[key].remove(member)
    for (_, row), family in zip(heads, made):
        _file(found, family, row, joined[id(row)])


def _candidate_key(row: dict, rows: list[dict], corpus: list[Program]) -> tuple:
    first = first_wrong(row, rows)
    if first == "inductor":
        return (row["backend"], first)
    return (row["backend"], first, essential_op(corpus[row["program"]], row["coordinates"]))


def _file(found: dict[str, dict], made: dict, representative: dict, members: list[dict]) -> None:
    """File `members` under the family `made` describes (a new one, or the one of that fault
    already found, which keeps its representative); their rows name it."""
    representative.update(shrunk=made["shrunk"], repro=made["repro"],
                          attribution=made["attribution"])  # fmt: skip
    family = found.setdefault(made["family"], {**made, "members": [], "member_hashes": [],
                                               "representative": representative["program"],
                                               "catalogue": "new"})  # fmt: skip
    for member in members:
        member.update(family=made["family"], representative=family["representative"])
        family["members"].append(member["program"])
        family["member_hashes"].append(member["program_hash"])
    pairs = sorted(zip(family["members"], family["member_hashes"]))
    family["members"], family["member_hashes"] = [m for m, _ in pairs], [h for _, h in pairs]
    family["programs"] = len(pairs)


def _represent(run_id: str, program: Program, backend: str, first: str, threads: int) -> dict:
    """A representative's family (a pool task): its shrunk program, repro, fault and
    attribution. An Inductor row already wrong under `aot_eager` is shrunk there (no C++
    compile) and kept when the shrunk program is still wrong under Inductor."""
    oracle = _oracle(run_id, threads)

    def shrunk(on: str) -> Program:
        return shrink(program, lambda p: oracle(p, on).is_wrong,
                      lambda ps: screen.suspects(ps, on))  # fmt: skip

    small = shrunk(first) if first != backend else None
    if small is None or not oracle(small, backend).is_wrong:
        small = shrunk(backend)
    outcome = oracle(small, backend)
    found = _attribution(small, backend, first)
    fault = Fault(
        backend,
        first,
        kinds(outcome.wrong),
        tuple(p["pass"] for p in found.get("passes") or [] if p.get("pass")),
        essential_op(small, outcome.wrong),
    )
    return {
        "program": small,
        "backend": backend,
        "family": fault.describe(),
        "first_wrong": first,
        "passes": list(fault.passes),
        "kinds": list(fault.kinds),
        "essential": fault.essential,
        "skeleton": shape(small),
        "shrunk": small.source(),
        "coordinates": outcome.wrong,
        "repro": repro(small, backend, outcome.wrong),
        "attribution": found,
    }


def _attribution(program: Program, backend: str, first: str) -> dict:
    """Which Inductor pass makes `program` wrong on `backend`, or why none is named."""
    if not attribution.enabled():
        return attribution.empty_result(f"not run: {attribution.KNOB}=0")
    if first in attribution.BEFORE_INDUCTOR:
        return attribution.empty_result(
            f"not attributed: already wrong with {first}, which runs "
            f"{attribution.BEFORE_INDUCTOR[first]}, no Inductor pass"
        )
    return attribution.attribute_check(_exact_check(program, backend))


def _exact_check(program: Program, backend: str):
    def exact() -> bool:
        outcome = judge(program, backend)
        if outcome.error:
            raise RuntimeError(f"the corpus program failed: {outcome.error}")
        return not outcome.is_wrong

    return exact


def _same_faults(checks: list, corpus: list[Program], run_id: str, workers: int,
                 threads: int) -> list:  # fmt: skip
    """`_same_fault` of every (family, key, representative, member) check, in order: the
    members of one representative checked together, `GROUP` at a time (`_same_fault_group`),
    and each member that is checked alone (inputs that overlap, or screening off) a task of
    its own, so that both cores share those compiles."""
    by_head: dict[int, list[int]] = {}
    for position, (_, _, head, _) in enumerate(checks):
        by_head.setdefault(id(head), []).append(position)
    tasks, places = [], []
    for positions in by_head.values():
        family, key, _, _ = checks[positions[0]]
        together = [k for k in positions if screen.screening()
                    and not corpus[checks[k][3]["program"]].overlapping_inputs()]  # fmt: skip
        alone = [[k] for k in positions if k not in together]
        for part in [together[at : at + GROUP] for at in range(0, len(together), GROUP)] + alone:
            members = [corpus[checks[k][3]["program"]] for k in part]
            tasks.append((run_id, members, key[0], family["attribution"], threads))
            places.append(part)
    same: list = [None] * len(checks)
    for part, verdicts in zip(places, pool.run(_same_fault_group, tasks, workers)):
        for k, verdict in zip(part, verdicts):
            same[k] = verdict
    return same


def _same_fault_group(run_id: str, programs: list[Program], backend: str, found: dict,
                      threads: int) -> list:  # fmt: skip
    """`_same_fault` of each of `programs` (a pool task), two compiles for all of them: the
    programs whose inputs do not overlap are renamed apart into one program (`screen.combine`)
    and checked with the representative's passes on and then off
    (`attribution.exact_without_each`). A program wrong with them on and exact with them off
    in that compile has the same fault; one wrong with them off too does not (at worst it
    represents a family of its own in the next round, and families whose faults come out the
    same are merged); any other, and every one whose inputs overlap (`screen.py`), is checked
    alone (`_same_fault`). With screening off (`$WRITEBACK_CORPUS_SCREEN=0`) every one is."""
    ready_to_compile(threads)
    shared = [k for k, program in enumerate(programs) if not program.overlapping_inputs()]
    if not screen.screening():
        shared = []
    combined = screen.combine([programs[k] for k in shared]) if len(shared) > 1 else None

    def judge_each() -> list[bool]:
        outcome = judge_coordinates(combined, backend)
        owners = {screen.owner(key) for key in outcome.wrong}
        if outcome.error or None in owners:
            raise RuntimeError(outcome.error or "a wrong coordinate of no one program")
        return [position not in owners for position in range(len(shared))]

    return attribution.exact_without_batched(
        found, programs, shared, judge_each, lambda program: _same_fault(program, backend, found)
    )


def _same_fault(program: Program, backend: str, found: dict):
    """Whether the representative's passes, switched off, make `program` exact: True, False,
    or None when the representative names no pass."""
    try:
        return attribution.exact_without(found, _exact_check(program, backend))
    except RuntimeError:  # the member fails to compile without them: not the same fault
        return False


def count_wrong_programs(record: dict, backend: str) -> int:
    return sum(1 for r in record["rows"] if r["backend"] == backend and r["wrong_elements"])


def count_wrong_families(record: dict, backend: str) -> int:
    return sum(1 for f in record["families"] if f["backend"] == backend)


def count_failed_programs(record: dict, backend: str) -> int:
    """Programs whose compile or compiled call failed (known failures included)."""
    return sum(1 for r in record["rows"] if r["backend"] == backend and r["error"])
