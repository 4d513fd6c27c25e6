"""The results model: what every machine measured for every build, and the questions the
report, the summary, the verdict page, `make expected`, `make history` and `make merge` ask of
it.

`load` reads, for each (machine, build): the numbers from asv's result files (with asv's own
API); the coordinates a wrong result is wrong in, and the reason for a skip or a failure, from
the probe record the same machine kept beside them (results/generated/<machine>/<build>/<isa>/
<scenario>/probe.json); the torch identity of the build from results/builds/<machine>/<ledger
commit>.json, written when it was installed there; and the record of the latest run that
measured it there (results/runs/<machine>/: its minutes and peak disk, tools/disk.py).
Builds of every builds file (every ledger branch) are loaded, each patch build right after
its base (`BuildResult.base`): a patch is compared with its base, a build of the timeline
with the timeline build before it on the same machine and of the same builds file (its
release line), never with a patch (`compared_with`). A result measured with another version
of its benchmark than results/benchmarks.json holds (a build not measured again since the
benchmark changed) is left out, as asv's publish leaves it out, and the build says so
(`BuildResult.stale`).

The verdict of a row (`verdict_state`: its state and its words) is `exact`, `wrong: ...`,
`harness failure: why` (the eager reference broke its own contract: the harness is wrong, not
torch), `skipped: why` (an expected state), `failed: why` (a real failure) or `not run (why)`
(nothing was measured). What counts as a failure: `failures` (a build that did not install, a
harness failure, a crashed attribution, a failed benchmark) and `failed_programs` (corpus
programs, known or not). The generated corpus: `corpus_records` (a build's records, as
saved) and `family_histories` (each family of wrong programs, one fault, over the builds).
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from asv.results import iter_results_for_machine

from benchmarks.known_failures import headline, known_failure  # standard library only
from benchmarks.machine import build_folder  # standard library only
from tools import disk
from tools import ledger as ledger_repo
from tools import render as words
from tools.builds import PULL_REQUEST

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = "snapshot_swap"
CORRECTNESS = f"{SCENARIO}.Correctness"
WRONG = "Correctness.track_wrong_elements"
OWN_FOLDERS = ("builds", "generated", "logs", "runs", "stability")
"""writeback's own folders in results/, beside asv's machine folders (results/<machine>/,
each with its machine.json): install records, kept code and corpus records, logs, run
records, stability runs. asv walks them too and warns of each folder it finds no
machine.json in (`history.publish` leaves those warnings out and counts them)."""


@dataclass
class BuildResult:
    """What one machine measured for one ledger build."""

    name: str
    commit: str
    machine: str
    identity: dict
    values: dict[str, dict[tuple, object]] = field(default_factory=dict)
    stats: dict[str, dict[tuple, dict | None]] = field(default_factory=dict)
    probe: dict[tuple, dict] = field(default_factory=dict)
    results_dir: Path | None = None
    tag: str = ""
    durations: dict[str, float] = field(default_factory=dict)
    """asv's seconds for each benchmark and `<setup_cache ...>` of this build."""
    stale: list[str] = field(default_factory=list)
    """Benchmarks whose results here were measured with another version of the benchmark than
    results/benchmarks.json's (left out of `values`, as asv's publish leaves them out)."""
    callgrind: dict[str, float] | None = None
    """Seconds callgrind took in each scenario's probe (inside its setup_cache); None when
    the probe records kept no seconds."""
    patch: dict | None = None
    """A patch build's `patch` on the ledger (its base's name, the diff, its sha256, the pull
    request), with the files the install patched and skipped where its record has them; None
    for a build of the timeline."""
    base: str = ""
    """A patch build's base: the tag of the build it patches ('' for a build of the timeline)."""
    branch: str = ledger_repo.BRANCH
    """The ledger branch of the builds file the build is listed in (`main`: builds.txt): a
    machine's builds of one branch are one release line (tools/timeline.py)."""
    run: dict | None = None
    """The record of the latest run on this machine that measured this build (its start,
    builds, minutes and peak disk: tools/disk.py); None where no run recorded one."""

    @property
    def label(self) -> str:
        version = self.identity.get("torch_version", "?")
        return f"{self.tag or self.name} (torch {version})"

    @property
    def installed(self) -> bool:
        return self.identity.get("installed", True) is not False

    @property
    def pull_request(self) -> str:
        """The upstream pull request a patch build stands for (its URL), or ''."""
        number = (self.patch or {}).get("pr")
        return PULL_REQUEST.format(number) if number else ""


@dataclass(frozen=True)
class Failure:
    """A benchmark that failed on a build, with its reason."""

    tag: str
    machine: str
    commit: str
    benchmark: str
    reason: str
    harness: bool = False
    """The eager reference broke its own contract: the harness is wrong, not torch."""
    known: str | None = None
    """Why the failure is a known fault of the build (`benchmarks/known_failures.py`): listed
    apart, and `make history` does not fail for it; None: nobody expected it."""

    @property
    def why(self) -> str:
        """The reason, and for a known fault of the build why it is known."""
        return self.reason + (f" (known: {self.known})" if self.known else "")

    def describe(self) -> str:
        return f"{self.benchmark} on {self.tag} ({self.machine}): {self.why}"


@dataclass(frozen=True)
class FailedProgram:
    """A generated corpus program whose compile or compiled call failed on a build; `known`
    is the reason when `benchmarks/known_failures.py` lists the failure as an expected state."""

    tag: str
    machine: str
    commit: str
    corpus: str
    backend: str
    program: int
    error: str
    known: str | None

    def describe(self) -> str:
        where = f"corpus {self.corpus} program {self.program} ({self.backend})"
        return f"{where} on {self.tag} ({self.machine}): {headline(self.error)}"


def load(results_dir: Path, ledger: Path, machine: str | None = None) -> list[BuildResult]:
    """Every (machine, build) with results, machine by machine, builds by date, each patch
    build right after its base."""
    entries = _in_order(ledger_repo.read_ledger(ledger))
    machines = [machine] if machine else _machines(results_dir)
    current = benchmark_versions(results_dir)
    loaded = []
    for name in machines:
        by_commit = {r.commit_hash: r for r in iter_results_for_machine(str(results_dir), name)}
        runs = disk.latest_runs(results_dir, name)
        for entry in entries:
            result = by_commit.get(entry.commit)
            if result is None:
                continue
            build = BuildResult(
                entry.name,
                entry.commit,
                name,
                _identity(results_dir, name, entry),
                results_dir=results_dir,
                tag=entry.tag,
                base=ledger_repo.tag_name(entry.branch, entry.patch["base"]) if entry.patch else "",
                branch=entry.branch,
            )
            build.patch = entry.patch and {**entry.patch, **(build.identity.get("patch") or {})}
            build.stale = older_benchmarks(result, current)
            left_out = set(build.stale)
            for key in result.get_all_result_keys():
                if key in left_out:
                    continue
                params = result.get_result_params(key)
                combos = _combos(params)
                values = result.get_result_value(key, params)
                stats = result.get_result_stats(key, params)
                build.values[key] = dict(zip(combos, values))
                build.stats[key] = dict(zip(combos, stats))
            records = _probe_records(results_dir, name, build.identity)
            build.probe = _probe_rows(records)
            build.durations = dict(result.duration)
            build.callgrind = _callgrind_seconds(records)
            build.run = runs.get(entry.commit)
            loaded.append(build)
    return loaded


def parser(prog: str, description: str) -> argparse.ArgumentParser:
    """A command line that reads the results model: `--results` (default results/),
    `--ledger` and `--machine` (default: every machine), as `load` takes them."""
    found = argparse.ArgumentParser(prog=prog, description=description)
    found.add_argument("--results", type=Path, default=ROOT / "results")
    found.add_argument("--ledger", type=Path, default=ledger_repo.DEFAULT_LEDGER)
    found.add_argument("--machine", help="only this asv machine (default: every machine)")
    return found


def _in_order(entries: list[ledger_repo.Entry]) -> list[ledger_repo.Entry]:
    """Ledger entries by date (main's first on a date), each patch right after its base (the
    ledger lists it there), whatever its own date."""
    position = {(e.branch, e.name): i for i, e in enumerate(entries)}

    def key(index_entry):
        index, entry = index_entry
        dated = entries[position[(entry.branch, entry.patch["base"])]] if entry.patch else entry
        return (dated.build["date"], entry.branch != ledger_repo.BRANCH, entry.branch, index)

    return [entry for _, entry in sorted(enumerate(entries), key=key)]


def compared_with(builds: list[BuildResult]) -> list[BuildResult | None]:
    """For each build, the build its verdicts are compared with on its machine: a patch
    build's base, a timeline build's timeline build before it of the same builds file (None:
    the first, or a patch whose base has no results there)."""
    found, latest = [], {}
    by_tag = {(b.machine, b.tag): b for b in builds}
    for build in builds:
        if build.base:
            found.append(by_tag.get((build.machine, build.base)))
            continue
        found.append(latest.get((build.machine, build.branch)))
        latest[build.machine, build.branch] = build
    return found


def benchmark_versions(results_dir: Path) -> dict[str, dict]:
    """results/benchmarks.json (the benchmark set asv discovered last) as asv's
    `Results.get_result_keys` reads it; {} when there is none."""
    path = results_dir / "benchmarks.json"
    if not path.is_file():
        return {}
    return {k: v for k, v in json.loads(path.read_text()).items() if isinstance(v, dict)}


def older_benchmarks(result, current: dict[str, dict]) -> list[str]:
    """The benchmarks of an asv result whose results asv's publish leaves out against the
    benchmark set `current` (`benchmark_versions`): measured with another version of the
    benchmark, or of one the set no longer has. [] when there is no set to compare with."""
    if not current:
        return []
    return sorted(set(result.get_all_result_keys()) - result.get_result_keys(current))


NO_VALUE = (
    "no value: a failed setup_cache's whole output is in .asv/logs/, else see "
    "`asv run --show-stderr` for the traceback"
)
"""Why a benchmark that recorded no value and no error failed, as far as the results know."""


def failures(builds: list[BuildResult]) -> list[Failure]:
    """Every failure of these builds: a build that did not install (once), every harness
    failure and crashed attribution its probe rows record (`row_failures`), and every other
    failed benchmark combination, `known` where its row's error is a known fault of the build
    (`benchmarks/known_failures.py`)."""
    found = []
    for build in builds:
        if not build.installed:
            reason = f"did not install: {build.identity.get('error')}"
            found.append(Failure(build.tag, build.machine, build.commit, "the build", reason))
            continue
        found += row_failures(build)
        version = build.identity.get("torch_version", "")
        for key, combos in build.values.items():
            scenario = key.split(".", 1)[0]
            for combo, value in combos.items():
                row = _row_for(build, scenario, key, combo)
                if value is None and not row.get("harness_failure"):  # named once, above
                    defect = row.get("floor_defect") if key.endswith("time_over_floor") else None
                    reason = row.get("error") or defect or NO_VALUE
                    name = f"{key}({', '.join(map(str, combo))})"
                    known = row.get("error") and known_failure(row["error"], version)
                    found.append(Failure(build.tag, build.machine, build.commit, name, reason,
                                         known=known.reason if known else None))  # fmt: skip
    return found


def row_failures(build: BuildResult) -> list[Failure]:
    """The failures a build's probe rows record beside their verdicts: an eager reference
    that broke its own contract (`HARNESS FAILURE`, first) and an attribution that crashed."""
    harness, crashed = [], []
    for (scenario, control, backend, n), row in build.probe.items():
        where = f"{scenario}.{control} ({backend}" + (f", n={n})" if n is not None else ")")
        build_of = (build.tag, build.machine, build.commit)
        if row.get("harness_failure"):
            harness.append(Failure(*build_of, f"HARNESS FAILURE {where}", row["harness_failure"],
                                   harness=True))  # fmt: skip
        if row.get("attribution_error"):
            crashed.append(Failure(*build_of, f"attribution of {where}", row["attribution_error"]))
    return harness + crashed


def scenarios(build: BuildResult) -> list[str]:
    """Every scenario with a correctness result in this build, the snapshot swap first."""
    found = [key[: -len(WRONG) - 1] for key in build.values if key.endswith(f".{WRONG}")]
    return sorted(found, key=lambda name: (name != SCENARIO, name))


def cost_scenarios(build: BuildResult) -> list[str]:
    """Every scenario whose Cost benchmarks ran on this build, the snapshot swap first."""
    found = [k.split(".")[0] for k in build.values if k.endswith(".Cost.time_warm_call")]
    return sorted(found, key=lambda name: (name != SCENARIO, name))


def matrix_keys(builds: list[BuildResult]) -> list[tuple]:
    """(scenario, control, backend or variant, size or None) of every correctness result."""
    keys = []
    for build in builds:
        for scenario in scenarios(build):
            for params in build.values[f"{scenario}.{WRONG}"]:
                key = (scenario, *params) if len(params) == 3 else (scenario, *params, None)
                if key not in keys:
                    keys.append(key)
    return keys


def combo(control, backend, n) -> tuple:
    """asv's parameter combination of a matrix key: (control, backend, size), or (control,
    variant) for a scenario whose variants replace backend and size (`n` None)."""
    return (control, backend) if n is None else (control, backend, n)


def verdict(build: BuildResult, control, backend, n, scenario: str = SCENARIO) -> str:
    """`exact`, `wrong: 9 (ret_b 3, in_b 3, view_b 3)`, `skipped: why`, `failed: why` or
    `not run (why)`."""
    return verdict_state(build, control, backend, n, scenario)[1]


def verdict_state(
    build: BuildResult, control, backend, n, scenario: str = SCENARIO
) -> tuple[str, str]:
    """(state, the verdict's words): state is one of VERDICT_STATES."""
    combo_ = combo(control, backend, n)
    if not build.installed:
        why = f"the build did not install: {build.identity.get('error')}"
        return "not run", words.verdict("not run", why)
    measured = build.values.get(f"{scenario}.{WRONG}", {})
    if combo_ not in measured:
        return "not run", words.verdict("not run", "no result for it on this machine")
    wrong = measured[combo_]
    moved = build.values.get(f"{scenario}.Correctness.track_moved_storages", {}).get(combo_)
    row = build.probe.get((scenario, control, backend, n), {})
    if row.get("harness_failure"):
        return "harness failure", words.verdict("harness failure", row["harness_failure"])
    if wrong is None:
        return "failed", words.verdict("failed", row.get("error") or "see asv run --show-stderr")
    if isinstance(wrong, float) and math.isnan(wrong):
        if row.get("skipped"):
            return "skipped", words.verdict("skipped", row["skipped"])
        return "not run", words.verdict("not run", "left out of the run that recorded it")
    if wrong == 0 and not moved:
        return "exact", words.verdict("exact")
    text = words.verdict(
        "wrong",
        total=int(wrong),
        coordinates=row.get("wrong_elements"),
        moved=int(moved or 0),
        pass_name=words.pass_names(row.get("attribution")),
    )
    return "wrong", text


def corpus_records(build: BuildResult) -> list[dict]:
    """The records of the generated corpora this build ran on this machine."""
    if not build.results_dir or "torch_version" not in build.identity:
        return []
    key = build_folder(build.identity)
    folder = build.results_dir / "generated" / build.machine / key
    return [json.loads(path.read_text()) for path in sorted(folder.glob("*/corpus/*.json"))]


FAMILY_FIELDS = ("first_wrong", "kinds", "skeleton")
"""Fields every family of the current corpus version has (families by fault,
`benchmarks/corpus/families.py`); a family of an older record (by op sequence) lacks them."""


def current_corpus_record(record: dict) -> bool:
    """Whether a corpus record is of the current corpus version: its rows carry
    `program_hash`, its families the fields of a fault (`FAMILY_FIELDS`). An older record's
    families are other groupings under other names: they are not followed across builds
    (asv's publish leaves the record's counts out too, their benchmark version differs)."""
    return all("program_hash" in row for row in record["rows"]) and all(
        all(name in family for name in FAMILY_FIELDS) for family in record["families"]
    )


@dataclass(frozen=True)
class FamilyHistory:
    """One family of wrong corpus programs (one fault, `benchmarks/corpus/families.py`) over
    the builds it was asked of. `family`, the fault in words, is its identity across builds;
    what it says of itself (pass, catalogue match, skeleton, repro) is from the newest build
    where it is wrong."""

    corpus: str
    backend: str
    family: str
    members: tuple[tuple[int, ...] | None, ...]
    """Per build, in the order given: the programs in the family there; () where the build
    judged the corpus on this backend and no program has this fault; None where the build has
    no record of the corpus on this backend (or one of an older corpus version)."""
    first_build: BuildResult
    """The first build where it is wrong."""
    last_build: BuildResult
    """The last build where it is wrong."""
    passes: tuple[str, ...]
    attribution: dict
    catalogue: str
    """The catalogue controls with the same fault, comma-separated, or `new`."""
    skeleton: str
    repro: str
    representative: int

    @property
    def counts(self) -> tuple[int | None, ...]:
        """Per build: its member count, 0 where it is not found, None where not measured."""
        return tuple(None if found is None else len(found) for found in self.members)

    @property
    def newest_count(self) -> int:
        """Its member count on the newest build where it is wrong."""
        return next(len(found) for found in reversed(self.members) if found)


def family_histories(builds: list[BuildResult]) -> dict[str, dict[str, FamilyHistory]]:
    """Corpus -> family -> its history over `builds` (in their order), for every corpus of
    which a build has a record of the current version (`current_corpus_record`; {} for a
    corpus whose programs were exact everywhere): its families by backend, in the order the
    records name the backends, each backend's in the newest record's order first."""
    records = [_current_records(build) for build in builds]
    histories = {}
    for corpus in sorted({name for by_corpus in records for name in by_corpus}):
        backend_of: dict[str, str] = {}
        for by_corpus in reversed(records):
            for family in by_corpus.get(corpus, {}).get("families", []):
                backend_of.setdefault(family["family"], family["backend"])
        order = list(dict.fromkeys(
            b for by_corpus in records if corpus in by_corpus for b in by_corpus[corpus]["backends"]
        ))  # fmt: skip
        names = sorted(backend_of, key=lambda name: order.index(backend_of[name]))
        histories[corpus] = {
            name: _history(corpus, name, backend_of[name], records, builds) for name in names
        }
    return histories


def _current_records(build: BuildResult) -> dict[str, dict]:
    """The build's corpus records of the current corpus version, by corpus (an older one is
    left out: `current_corpus_record`)."""
    return {r["corpus"]: r for r in corpus_records(build) if current_corpus_record(r)}


def _history(corpus: str, name: str, backend: str, records: list[dict],
             builds: list[BuildResult]) -> FamilyHistory:  # fmt: skip
    members, newest = [], {}
    for by_corpus in records:
        record = by_corpus.get(corpus)
        if record is None or backend not in record["backends"]:
            members.append(None)
            continue
        family = next((f for f in record["families"] if f["family"] == name), None)
        members.append(tuple(family["members"]) if family else ())
        newest = family or newest
    wrong = [build for build, found in zip(builds, members) if found]
    return FamilyHistory(
        corpus, backend, name, tuple(members), wrong[0], wrong[-1], tuple(newest["passes"]),
        newest["attribution"], newest["catalogue"], newest["skeleton"], newest["repro"],
        newest["representative"],
    )  # fmt: skip


def failed_programs(builds: list[BuildResult]) -> list[FailedProgram]:
    """Every corpus program that failed to compile or run on these builds, known or not."""
    found = []
    for build in builds:
        version = build.identity.get("torch_version", "")
        for record in corpus_records(build):
            for row in record["rows"]:
                if row.get("error"):
                    known = known_failure(row["error"], version)
                    found.append(FailedProgram(build.tag, build.machine, build.commit,
                                               record["corpus"], row["backend"], row["program"],
                                               row["error"], known and known.reason))  # fmt: skip
    return found


def is_number(value) -> bool:
    """A measured figure: an int or a float, not NaN (asv's skip) nor None (its failure)."""
    return isinstance(value, (int, float)) and not math.isnan(value)


def _identity(results_dir: Path, machine: str, entry) -> dict:
    """This machine's install record of the build; else another machine's (the build is the
    same everywhere; asv does not reinstall a build a second machine of the same host and
    environment measures), saying whose."""
    path = results_dir / "builds" / machine / f"{entry.commit}.json"
    if path.is_file():
        return json.loads(path.read_text())
    for other in sorted((results_dir / "builds").glob(f"*/{entry.commit}.json")):
        record = json.loads(other.read_text())
        if record.get("installed"):
            return {**record, "recorded_by": other.parent.name}
    return {}


def _row_for(build: BuildResult, scenario: str, key: str, combo: tuple) -> dict:
    """The probe row behind one benchmark combination (Cost combos are Inductor's rows)."""
    if ".Cost." in key and len(combo) == 2:
        combo = (combo[0], "inductor", combo[1])
    elif len(combo) == 2:
        combo = (*combo, None)
    return build.probe.get((scenario, *combo), {})


def _probe_records(results_dir: Path, machine: str, identity: dict) -> list[dict]:
    """Every probe record this machine kept for the build (each file read once)."""
    if "torch_version" not in identity:
        return []
    folder = results_dir / "generated" / machine / build_folder(identity)
    return [json.loads(path.read_text()) for path in sorted(folder.glob("*/*/probe.json"))]


def _probe_rows(records: list[dict]) -> dict[tuple, dict]:
    rows = {}
    for record in records:
        for row in record["rows"]:
            if "variant" in row:  # a variant replaces backend and size
                rows[(record["scenario"], row["control"], row["variant"], None)] = row
            else:
                rows[(record["scenario"], row["control"], row["backend"], row["n"])] = row
    return rows


def _callgrind_seconds(records: list[dict]) -> dict | None:
    """Scenario -> callgrind seconds its probe recorded (`seconds`); None when no record has
    them (written before probes recorded their seconds)."""
    found = {
        record["scenario"]: float(record["seconds"].get("callgrind", 0.0))
        for record in records
        if "seconds" in record
    }
    return found or None


def _machines(results_dir: Path) -> list[str]:
    return sorted(p.parent.name for p in results_dir.glob("*/machine.json"))


def _combos(params):
    combos = [()]
    for values in params or []:
        combos = [c + (_literal(v),) for c in combos for v in values]
    return combos


def _literal(text: str):
    text = text.strip()
    if text[:1] in "'\"":
        return text[1:-1]
    try:
        return int(text)
    except ValueError:
        return text
