"""Screening, families by fault and repros, on backends with planted faults
(`tests/planted_backends.py`: no Inductor, so each test takes seconds).

Screening must never hide a fault: the same corpus judged screened and every program alone
(`$WRITEBACK_CORPUS_SCREEN=0`) must give the same rows; and every printed repro, pasted into a
fresh interpreter, must print WRONG where the oracle found the program wrong."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import attribution
from benchmarks.corpus import generate, oracle, run, screen
from tests import planted_backends as planted

ROOT = Path(__file__).resolve().parents[1]
CORPUS = [generate.generate(0, index) for index in range(60)]


@pytest.fixture(autouse=True)
def _no_catalogue(monkeypatch):
    """The catalogue's controls compiled for a planted backend match nothing worth the minutes
    (tests/test_corpus.py matches a real family with its entry)."""
    planted.no_catalogue(monkeypatch)


def _judged(monkeypatch, mode: str, backend: str, corpus=CORPUS) -> dict:
    monkeypatch.setenv(screen.KNOB, mode)
    record = run.run("planted", backends=(backend,), corpus=corpus)
    return record, None


def _verdicts(record) -> list[tuple]:
    return [(r["program"], r["wrong_elements"], r["coordinates"], r["error"])
            for r in record["rows"]]  # fmt: skip


@pytest.mark.parametrize("backend", [planted.DROP_CLONE, planted.NO_FLIP])
def test_screening_finds_what_judging_each_program_alone_finds(monkeypatch, backend):
    """Dropped clones make some programs wrong and `flip` fails others' compiles: screened or
    alone, every row is the same (wrong counts per coordinate, errors), with far fewer
    compiles screened."""
    alone, _ = _judged(monkeypatch, "0", backend)
    screened, _ = _judged(monkeypatch, "1", backend)
    assert _verdicts(screened) == _verdicts(alone)
    planted_fault = "error" if backend == planted.NO_FLIP else "wrong_elements"
    assert any(r[planted_fault] for r in alone["rows"])
    assert {r["judged"] for r in alone["rows"]} == {"alone"}
    assert {r["judged"] for r in screened["rows"] if r["wrong_elements"] or r["error"]} == {"alone"}


@pytest.mark.parametrize("backend", [planted.DROP_CLONE, planted.NO_FLIP])
def test_screening_compiles_fewer_graphs_than_judging_alone(monkeypatch, backend):
    """Judging alone compiles at least once a program; screening once a group of programs,
    then once a suspect and once a half of a group that failed (a corpus where the
    planted fault is rare: three programs with the op it needs among 37 without, none with
    overlapping inputs, which are always judged alone)."""
    op = "clone" if backend == planted.DROP_CLONE else "flip"
    more = [p for p in (generate.generate(0, index) for index in range(300))
            if not p.overlapping_inputs()]  # fmt: skip
    without = [p for p in more if all(s.op != op for s in p.statements)]
    with_op = [p for p in more if any(s.op == op for s in p.statements)]
    rare = without[:37] + with_op[:3]
    counts = {}
    for mode in ("0", "1"):
        monkeypatch.setenv(screen.KNOB, mode)
        planted.COMPILES.clear()
        judged = screen.judge_all(rare, backend, oracle.judge)
        counts[mode] = planted.COMPILES[backend]
    alone = sum(1 for _, how in judged if how == "alone")
    assert counts["0"] >= len(rare) == 40  # a program on overlapping inputs compiles again
    assert alone <= 3 and counts["1"] < counts["0"] / 2, (counts, alone)


def test_a_failing_program_takes_down_only_its_own_row(monkeypatch):
    record, _ = _judged(monkeypatch, "1", planted.NO_FLIP)
    failed = {r["program"] for r in record["rows"] if r["error"]}
    with_flip = {k for k, p in enumerate(CORPUS) if any(s.op == "flip" for s in p.statements)}
    assert failed == with_flip and failed
    assert all("planted: this backend cannot compile flip" in r["error"]
               for r in record["rows"] if r["error"])  # fmt: skip
    assert sum(r["judged"] == "screened" for r in record["rows"]) > len(CORPUS) // 2


def test_one_fault_is_one_family_whatever_its_spelling(monkeypatch):
    """Every program the dropped clone makes wrong has one fault: fewer families than wrong
    programs, most of the programs in families whose wrong value comes from a `clone`."""
    record, _ = _judged(monkeypatch, "1", planted.DROP_CLONE)
    wrong = [r for r in record["rows"] if r["wrong_elements"]]
    skeletons = {f["skeleton"] for f in record["families"]}
    assert len(wrong) >= 5
    assert len(record["families"]) < len(wrong)
    by_clone = sum(f["programs"] for f in record["families"] if f["essential"] == "clone")
    assert by_clone >= len(wrong) / 2, [(f["family"], f["skeleton"]) for f in record["families"]]
    assert sum(f["programs"] for f in record["families"]) == len(wrong)
    assert all(r["family"] in {f["family"] for f in record["families"]} for r in wrong)
    assert len(skeletons) <= len(record["families"])


def _run_repro(script: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", "import tests.planted_backends\n" + script],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


@pytest.mark.parametrize(
    ("backend", "probe"),
    [(planted.DROP_CLONE, "any"), (planted.STALE, "second call")],
)
def test_every_repro_prints_wrong_in_a_fresh_interpreter(monkeypatch, backend, probe):
    """Each wrong row's repro (its own program) and each family's (the shrunk one), run in a
    fresh interpreter, print WRONG on a line of a probe that shows the planted fault (a stale
    second call never in the first call, only in the probes that call again)."""
    record, _ = _judged(monkeypatch, "1", backend, corpus=CORPUS[:12])
    scripts = [r["repro"] for r in record["rows"] if r["wrong_elements"]]
    scripts += [f["repro"] for f in record["families"]]
    assert scripts
    for script in scripts:
        printed = _run_repro(script)
        wrong_lines = [line for line in printed.splitlines() if "WRONG" in line]
        assert wrong_lines, printed
        if probe == "second call":  # every first call is right: later calls show it
            assert not any(line.startswith(("return ", "input ")) for line in wrong_lines), printed


def test_a_program_whose_inputs_overlap_is_judged_alone(monkeypatch):
    """Dynamo's guards and AOTAutograd's handling of aliased inputs are decided for a graph's
    inputs as a whole: a program whose inputs overlap is never screened beside others."""
    monkeypatch.setenv(screen.KNOB, "1")
    more = [generate.generate(0, index) for index in range(120)]
    overlapping = [p for p in more if p.overlapping_inputs()][:2]
    plain = [p for p in more if not p.overlapping_inputs()][:6]
    assert overlapping and plain
    judged = screen.judge_all(plain + overlapping, planted.NO_FLIP, oracle.judge)
    assert [how for _, how in judged[len(plain) :]] == ["alone"] * len(overlapping)
    assert "screened" in {how for _, how in judged[: len(plain)]}


def test_members_checked_together_get_the_verdicts_each_gets_alone(monkeypatch):
    """A family's members are checked against its representative's pass together (two
    compiles for all of them) instead of two compiles each, with the same verdicts: the planted
    dropped clone as the pass (`planted.drop_clones`, switched off as attribution switches off
    an Inductor pass), the corpus's wrong programs and exact ones (not this fault) beside."""
    monkeypatch.setenv(screen.KNOB, "1")
    monkeypatch.setattr(attribution, "discover_passes", lambda: [attribution.Candidate(
        "post_grad_passes", "drop_clones", planted, "drop_clones", "function")])  # fmt: skip
    found = {"passes": [{"subsystem": "post_grad_passes", "pass": "drop_clones"}]}
    judged = [oracle.judge(program, planted.DROP_CLONE) for program in CORPUS]
    wrong = [p for p, outcome in zip(CORPUS, judged) if outcome.is_wrong]
    exact = [p for p, outcome in zip(CORPUS, judged) if not outcome.is_wrong and not outcome.error]
    apart = [p for p in wrong if not p.overlapping_inputs()]
    overlapping = [p for p in wrong if p.overlapping_inputs()]
    members = apart[:6] + overlapping[:1] + exact[:2]  # overlapping inputs: checked alone
    assert len(apart) >= 4 and len(exact) >= 2
    fault = len(apart[:6] + overlapping[:1])
    counts = {}
    planted.COMPILES.clear()
    alone = [run._same_fault(program, planted.DROP_CLONE, found) for program in members]
    counts["alone"] = planted.COMPILES[planted.DROP_CLONE]
    planted.COMPILES.clear()
    together = run._same_fault_group("t", members, planted.DROP_CLONE, found, 1)
    counts["together"] = planted.COMPILES[planted.DROP_CLONE]
    assert together == alone
    assert alone == [True] * fault + [False] * 2
    assert counts["together"] < counts["alone"] / 2, counts
