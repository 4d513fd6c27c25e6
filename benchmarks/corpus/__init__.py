"""The generated aliasing corpus: programs from a seeded grammar, judged exactly, shrunk and
sorted into families by fault. Pieces with one job each, on a program as data (`program.py`):

    generate.py   program `i` of a corpus: a pure function of (seed, i)
    oracle.py     a program compiled for a backend against the plain eager call, exactly
    screen.py     many programs in one compile, every suspect judged again alone
    shrink.py     a wrong program -> the smallest still wrong
    families.py   what a fault is: where it first goes wrong, its pass, coordinates, op
    repro.py      the paste-ready script that prints WRONG where the program is wrong
    catalogue.py  which catalogue controls have a family's fault
    run.py        a named corpus on the installed torch: rows, families and their attributions

The asv class below tracks, per backend and named corpus, how many programs are wrong, in how
many families, and how many failed to compile or run: the corpus metrics of
`benchmarks/metrics.py`, each counted by `run.count_<name>`. The record is computed once per build
in `setup_cache` and kept beside the generated code
(`<artifacts>/<machine>/<build>/<isa>/corpus/<corpus>.json`), compiled in an emptied Inductor
cache of its own (machine, build, ISA, `corpus`). Each Inductor family is attributed once
(`run.py`).
"""

from __future__ import annotations

from .. import artifacts, metrics, pool
from ..compat import Unsupported, build_key, cxx_compiler_problem, set_single_thread
from ..machine import machine_name
from ..probes.probe import isa
from . import run


def _count(benchmark, metric, record, backend, corpus) -> int:
    """A corpus metric's value: `run.count_<name>` of the named corpus's record, per backend."""
    return getattr(run, f"count_{metric.name}")(record["corpora"][corpus], backend)


@metrics.asv_benchmarks(metrics.CORPUS, _count)
class Correctness:
    """Wrong programs and families of each named corpus, per backend; a number, never a raise
    for a wrong result, so `asv find` can bisect it. Corpora other than the default are skips
    unless `$WRITEBACK_CORPORA` names them (the parameter space stays the same)."""

    params = [list(run.BACKENDS), list(run.CORPORA)]
    param_names = ["backend", "corpus"]
    # seconds for setup_cache: the default corpus (seed0-500) took 303 s on torch 2.13.0 on
    # the AMD avx2 machine, 166 s of it judging (writeback-3); each wrong Inductor family adds
    # one attribution
    timeout = 3600
    # writeback-3: families by fault (first wrong backend, pass, coordinate kinds, op), not by
    # op sequence; rows carry program_hash and their repro. writeback-4: every in-place
    # foreach op is one essential op; a family's members are checked against its pass
    # together, the shrinker drops what the screen clears at once, catalogue controls are
    # checked against a family's pass together (families and catalogue matches can differ)
    version = "writeback-4"

    def setup_cache(self):
        set_single_thread()
        record = {"machine": machine_name(), "build": build_key(), "isa": isa(), "corpora": {},
                  "skipped": {}}  # fmt: skip
        where = (record["machine"], record["build"], record["isa"])
        artifacts.fresh_inductor_cache(artifacts.inductor_cache(*where, "corpus"))
        for name in run.CORPORA:
            if reason := run.enabled(name):
                record["skipped"][name] = reason
                continue
            record["corpora"][name] = run.run(
                name, backends=_runnable_backends(), workers=pool.workers_wanted()
            )
            folder = artifacts.scenario_dir(artifacts.root(), *where, "corpus")
            artifacts.save_json(folder / f"{name}.json", record["corpora"][name])
        return record

    def setup(self, record, backend, corpus):
        if corpus in record["skipped"]:
            raise Unsupported(record["skipped"][corpus])
        if backend not in record["corpora"][corpus]["backends"]:
            raise Unsupported(f"{backend} cannot run here: {cxx_compiler_problem()}")


def _runnable_backends() -> tuple[str, ...]:
    return tuple(b for b in run.BACKENDS if b != "inductor" or not cxx_compiler_problem())
