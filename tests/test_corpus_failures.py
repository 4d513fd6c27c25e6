"""A generated corpus program that fails to compile is counted (`track_failed_programs`),
listed in the report with its first error line, gated by `make expected` and makes
`make history` exit 1, unless `benchmarks/known_failures.py` names it; the corpus's wrong
counts are gated in both directions, and the report shows each family's attribution. The
corpus runs for real, with a fake compiler (eager itself, which crashes on the planted
program)."""

import json
from pathlib import Path

import pytest

from benchmarks import attribution, corpus, known_failures
from benchmarks.corpus import generate, oracle, run
from benchmarks.corpus.program import Input, Program, Statement
from benchmarks.machine import build_folder
from tests import corpus_history
from tests import planted_backends as planted
from tools import asv_project, expected, history, report, results
from tools import ledger as ledger_repo

ROOT = Path(__file__).resolve().parents[1]
CRASH = "RuntimeError: planted: the fake compiler crashed"
PLANTED = Program(
    (Input("boom", (4, 4), "float32", 1),),
    (Statement("add_", None, ("boom",), (1,)),),
    ("boom",),
)
"""A well-defined program the fake compiler cannot compile (it names its input `boom`)."""
IDENTITY = {"installed": True, "torch_version": "2.13.0+cpu", "torch_git_version": "c" * 40}


def _fake_compiler(fn, backend):
    """Eager itself, except for the planted program (or a screening program holding it): a
    call of it raises."""
    if not any("boom" in name for name in fn.__code__.co_varnames):
        return fn

    def crashes(*args):
        raise RuntimeError("planted: the fake compiler crashed\nits traceback's second line")

    return crashes


@pytest.fixture(scope="module")
def record():
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(oracle, "build", _fake_compiler)
        programs = [generate.generate(0, 0), PLANTED, generate.generate(0, 1)]
        planted.no_catalogue(patch)
        return run.run(run.DEFAULT, backends=("inductor",), corpus=programs)


def _build(tmp_path: Path, record: dict, commit: str = "0" * 40) -> results.BuildResult:
    """A build of machine `m` whose results folder (under `tmp_path`) holds the corpus record
    and whose asv values are the record's counts, as the asv class returns them."""
    results_dir = tmp_path / "results"
    folder = results_dir / "generated" / "m" / build_folder(IDENTITY) / "avx2" / "corpus"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{record['corpus']}.json").write_text(json.dumps(record))
    build = results.BuildResult("torch-2.13.0", commit, "m", IDENTITY, results_dir=results_dir,
                               tag="torch-2.13.0")  # fmt: skip
    bench = corpus.Correctness()
    state = {"corpora": {record["corpus"]: record}}
    for name in ("track_wrong_programs", "track_wrong_families", "track_failed_programs"):
        method = getattr(bench, name)
        build.values[f"corpus.Correctness.{name}"] = {
            ("inductor", record["corpus"]): method(state, "inductor", record["corpus"])
        }
    return build


def test_a_program_that_fails_to_compile_is_counted(record):
    assert [row["error"] is not None for row in record["rows"]] == [False, True, False]
    assert record["rows"][1]["error"].startswith(CRASH)
    assert run.count_failed_programs(record, "inductor") == 1
    state = {"corpora": {run.DEFAULT: record}}
    assert corpus.Correctness().track_failed_programs(state, "inductor", run.DEFAULT) == 1
    assert corpus.Correctness.track_failed_programs.unit == "programs"


def test_the_report_lists_it_with_its_first_error_line_as_a_failure(record, tmp_path):
    build = _build(tmp_path, record)
    lines = "\n".join(_corpus_lines(build))
    assert f"Failed to compile or run (1 program(s) of `{run.DEFAULT}`)" in lines
    assert f"- inductor program 1: `{CRASH}` (not a known state" in lines
    assert "second line" not in lines
    failures = report.render([build]).split("## Failures (nobody expected these)", 1)[1]
    assert f"corpus {run.DEFAULT} program 1 (inductor) on torch-2.13.0 (m): {CRASH}" in failures


def test_a_known_failure_is_listed_with_its_reason_and_fails_nothing(record, tmp_path,
                                                                     monkeypatch):  # fmt: skip
    build = _build(tmp_path, record)
    known = known_failures.KnownFailure("RuntimeError: planted", "planted here", ("2.13",))
    monkeypatch.setattr(known_failures, "KNOWN_FAILURES", (known,))
    assert f"- inductor program 1: `{CRASH}` (known: planted here)" in _corpus_lines(build)
    assert "## Failures" not in report.render([build])
    assert history.corpus_failures([build], {build.commit}) == []
    other_release = known_failures.KnownFailure("RuntimeError: planted", "planted", ("2.14",))
    monkeypatch.setattr(known_failures, "KNOWN_FAILURES", (other_release,))
    assert len(history.corpus_failures([build], {build.commit})) == 1


def test_the_report_shows_a_familys_attribution(record, tmp_path):
    found = {**attribution.empty_result(""), "method": "ablation", "backend": "inductor",
             "subsystem": "post_grad_passes", "pass": "planted_pass", "seconds": 12.5}  # fmt: skip
    family = {**corpus_history.family("torch-2.13.0", "inductor: planted", [2, 0]),
              "attribution": found}  # fmt: skip
    lines = _corpus_lines(_build(tmp_path, {**record, "families": [family]}))
    assert (
        "  - which pass (attributed on the repro, of program 2): `planted_pass` (ablation, "
        "post_grad_passes), 12.5 s"
    ) in lines


def _corpus_lines(build: results.BuildResult) -> list[str]:
    """The report's corpus lines of `build`, its families followed over it alone."""
    return report.corpus_lines(build, results.family_histories([build]))


def test_make_expected_gates_the_failed_count(record, tmp_path):
    measured = expected.measured_rows([_build(tmp_path, record)])
    failed = [row for row in measured if row.metric == "failed_programs"]
    assert [(r.scenario, r.control, r.backend, r.size, r.expected, r.margin) for r in failed] == [
        ("corpus", run.DEFAULT, "inductor", "-", 1, 0)
    ]
    none_failed = [
        row if row.metric != "failed_programs" else _changed(row, -1) for row in measured
    ]
    assert expected.moved(none_failed, measured) == [
        f"torch-2.13.0/corpus/{run.DEFAULT}/inductor/-/failed_programs: expected 0 +- 0, "
        "measured 1 (up)"
    ]


@pytest.mark.parametrize("metric", ["wrong_programs", "wrong_families"])
@pytest.mark.parametrize(("change", "direction"), [(+1, "down"), (-1, "up")])
def test_make_expected_gates_the_wrong_counts_both_ways(record, tmp_path, metric, change,
                                                       direction):  # fmt: skip
    build = _build(tmp_path, record)
    build.values[f"corpus.Correctness.track_{metric}"] = {("inductor", run.DEFAULT): 2}
    measured = expected.measured_rows([build])
    assert expected.moved(measured, measured) == []
    file = [_changed(row, change) if row.metric == metric else row for row in measured]
    assert expected.moved(file, measured) == [
        f"torch-2.13.0/corpus/{run.DEFAULT}/inductor/-/{metric}: expected {2 + change} +- 0, "
        f"measured 2 ({direction})"
    ]


def _changed(row: expected.Row, by: int) -> expected.Row:
    return expected.Row(*row.key, row.expected + by, row.margin)


def test_make_history_exits_1_after_saving_and_publishing(record, tmp_path, monkeypatch):
    """tools/history.py's main, with asv, publishing and the machine stubbed: the report is
    written and the site published, then the planted failure makes it exit 1."""
    for knob in (*history.KNOBS, "WRITEBACK_CORPORA"):
        monkeypatch.delenv(knob, raising=False)  # a quick run goes elsewhere
    (tmp_path / ".asv").mkdir()
    (tmp_path / "results").mkdir()
    (tmp_path / "asv.conf.json").write_text((ROOT / "asv.conf.json").read_text())  # env_dir
    monkeypatch.setattr(history, "ROOT", tmp_path)
    monkeypatch.setattr(asv_project, "ROOT", tmp_path)  # its configuration: asv.conf.json above
    monkeypatch.setattr(ledger_repo, "DEFAULT_LEDGER", tmp_path / "ledger")
    monkeypatch.setattr(asv_project, "MACHINE_FILE", tmp_path / ".asv" / "machine.json")
    monkeypatch.setattr(asv_project, "prepare", lambda machine, results_dir: "m")
    monkeypatch.setattr(history, "_asv", lambda *args, **kwargs: 0)
    published = []
    monkeypatch.setattr(history, "publish", lambda *args: published.append(1) or [])

    def load(results_dir, ledger, machine=None):
        first = ledger_repo.read_ledger(ledger)[0]
        return [_build(tmp_path / "loaded", record, first.commit)]

    monkeypatch.setattr(results, "load", load)
    argv = ["--builds", str(ROOT / "builds.txt"), "--only", "torch-2.13.0", "--no-site-check"]
    assert history.main(argv) == 1
    assert published and (tmp_path / "results" / "report.md").is_file()
    assert "program 1 (inductor)" in (tmp_path / "results" / "report.md").read_text()
    monkeypatch.setattr(
        known_failures, "KNOWN_FAILURES", (known_failures.KnownFailure(CRASH, "planted"),)
    )
    assert history.main(argv) == 0


def test_only_the_suites_own_unsupported_is_a_known_state_not_dynamos():
    from benchmarks.compat import Unsupported, exception_name

    class DynamoUnsupported(RuntimeError):  # torch._dynamo.exc.Unsupported's name, elsewhere
        pass

    DynamoUnsupported.__name__ = DynamoUnsupported.__qualname__ = "Unsupported"
    DynamoUnsupported.__module__ = "torch._dynamo.exc"
    ours = f"{exception_name(Unsupported('no API'))}: no API"
    theirs = f"{exception_name(DynamoUnsupported('graph break'))}: graph break"
    assert known_failures.known_failure(ours, "2.15.0") is not None
    assert known_failures.known_failure(theirs, "2.15.0") is None
    assert exception_name(RuntimeError("x")) == "RuntimeError"


AS_STRIDED_SCATTER = (
    "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
    "RuntimeError: as_strided_scatter: sizes [3, 4], strides [6, 1], storage offset 9  and "
    "itemsize 4 requiring a storage size of 100 are out of bounds for storage of size 96"
)
"""Program 481 of seed0-500 on torch 2.13.0, as the corpus recorded it (first lines)."""


def test_a_known_failure_can_name_the_error_behind_a_backend_failure():
    """`BackendCompilerFailed`'s first line only names the backend: an entry's `then` names
    the error behind it, so program 481's failure is known on 2.13 and 2.14 (2.15.0 compiles
    it), and no other backend failure is."""
    other = AS_STRIDED_SCATTER.replace("as_strided_scatter: sizes", "setStorage: sizes")
    aot_eager = AS_STRIDED_SCATTER.replace("'inductor'", "'aot_eager'")
    assert known_failures.known_failure(AS_STRIDED_SCATTER, "2.13.0+cpu") is not None
    assert known_failures.known_failure(aot_eager, "2.14.1+cu130") is not None
    assert known_failures.known_failure(AS_STRIDED_SCATTER, "2.15.0+cu132") is None
    assert known_failures.known_failure(other, "2.13.0+cpu") is None
    assert known_failures.second_line("one line") == ""
    placed = f"{AS_STRIDED_SCATTER}\n\nWhile executing %zero_ (at torch/__init__.py:1735)"
    assert known_failures.headline(placed).endswith("of size 96 (at torch/__init__.py:1735)")
    assert known_failures.headline(AS_STRIDED_SCATTER) == (
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised: RuntimeError: "
        "as_strided_scatter: sizes [3, 4], strides [6, 1], storage offset 9  and itemsize 4 "
        "requiring a storage size of 100 are out of bounds for storage of size 96"
    )


def test_make_historys_failure_line_names_the_error_behind_a_backend_failure():
    """The line `make history` ends with names what failed, not only that a backend raised
    (`...BackendCompilerFailed: backend='inductor' raised:` alone says nothing)."""
    failed = results.FailedProgram(
        "builds-long/torch-2.8.0", "vm-x", "c" * 40, "seed0-500", "inductor", 475,
        f"{AS_STRIDED_SCATTER}\n\nSet TORCH_LOGS (at torch/__init__.py:1666)", None,
    )  # fmt: skip
    line = failed.describe()
    assert line.startswith("corpus seed0-500 program 475 (inductor) on builds-long/torch-2.8.0")
    assert "raised: RuntimeError: as_strided_scatter: sizes [3, 4]" in line, line
    assert line.endswith("(at torch/__init__.py:1666)"), line


def test_a_bare_assert_is_known_only_bare_and_only_where_the_entry_says():
    """An old release's bare `assert` (`AssertionError:` and nothing more) is a known state
    only as the entry gives it: without a message, raised where the entry says (or, in rows
    measured before errors named their place, with no place at all), on its releases."""
    bare = known_failures.KnownFailure(
        "AssertionError:", "planted", ("2.10",), bare=True,
        at=("torch/_functorch/_aot_autograd/runtime_wrappers.py",),
    )  # fmt: skip
    place = " (at torch/_functorch/_aot_autograd/runtime_wrappers.py:1238)"
    assert bare.covers(f"AssertionError: {place}", "2.10.0+cu128")
    assert bare.covers("AssertionError: ", "2.10.0+cu128")  # measured before places were kept
    assert not bare.covers(f"AssertionError: a message{place}", "2.10.0+cu128")
    assert not bare.covers("AssertionError:  (at torch/_inductor/scheduler.py:9)", "2.10.0")
    assert not bare.covers("AssertionError:  (at torch/_functorch/partitioners.py:9)", "2.10.0")
    assert not bare.covers(f"AssertionError: {place}", "2.13.0+cpu")
    wrapped = known_failures.KnownFailure(
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:", "planted",
        ("2.1",), then="AssertionError:", bare=True,
    )  # fmt: skip
    backend = "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
    assert wrapped.covers(f"{backend}AssertionError: \n\nSet TORCH_LOGS", "2.1.0")
    assert not wrapped.covers(f"{backend}AssertionError: n=copy_\n\nSet TORCH_LOGS", "2.1.0")


def test_every_corpus_failure_committed_is_a_known_state():
    """The corpus failures of every build in results/ are known states (the triage of the long
    history's old releases: `benchmarks/known_failures.py`); a new kind fails here and in
    `make merge` alike, until it is looked at."""
    unknown = []
    root = Path(__file__).resolve().parents[1] / "results" / "generated"
    for path in sorted(root.glob("*/*/*/corpus/*.json")):
        build = path.relative_to(root).parts[1]
        version = build.split("-")[1]
        for row in json.loads(path.read_text())["rows"]:
            if row.get("error") and not known_failures.known_failure(row["error"], version):
                unknown.append(f"{build} program {row['program']} ({row['backend']}): "
                               f"{known_failures.headline(row['error'])}")  # fmt: skip
    assert not unknown, "\n".join(unknown[:20])


def test_a_corpus_error_says_where_it_was_raised():
    """A bare `assert` in an old release's compiler raises AssertionError without a message:
    the corpus row names the frame that raised it, from torch/ on where it is torch's."""
    from benchmarks.corpus.oracle import error_text

    def inner():
        assert False  # noqa: B011, PT015  a bare assert, as torch 2.1's passes have

    try:
        inner()
    except AssertionError as exc:
        text = error_text(exc)
    assert text.startswith("AssertionError: ")
    assert text.endswith(f"(at test_corpus_failures.py:{inner.__code__.co_firstlineno + 1})")
    assert known_failures.first_line(text).startswith("AssertionError: ")


def test_where_an_error_was_raised_is_one_text_for_corpus_and_probes():
    """The corpus's errors and the probes' name the place the same way (`compat.raised_at`):
    torch's files from `torch/` on, and never FX's generated code, whose `<eval_with_key>.N`
    differs from one compile to the next."""
    import torch.utils._pytree as pytree

    from benchmarks.compat import raised_at
    from benchmarks.corpus.oracle import error_text
    from benchmarks.probes.probe import _describe_error

    generated = {}
    exec(compile("def forward(f):\n    return f()\n", "<eval_with_key>.7", "exec"), generated)

    def raising():
        pytree.tree_unflatten([1, 2], pytree.tree_flatten([1])[1])

    try:
        generated["forward"](raising)
    except ValueError as exc:
        at = raised_at(exc)
        corpus, probe = error_text(exc), _describe_error(exc)
    assert at.startswith(" (at torch/utils/_pytree.py:"), at
    assert corpus.endswith(at) and probe.endswith(at), (corpus, probe)

    def only_generated():
        exec(compile("raise KeyError(1)\n", "<eval_with_key>.8", "exec"), {})

    try:
        only_generated()
    except KeyError as exc:
        assert (
            raised_at(exc)
            == f" (at test_corpus_failures.py:{only_generated.__code__.co_firstlineno + 1})"
        )


def test_a_module_inductor_generated_is_no_place_either(tmp_path, monkeypatch):
    """Inductor's generated wrapper is a real file in its cache, named by a hash of its
    source: `NameError: name 'buf1'` raised there (torch 2.1) would get a text per program.
    The place is the innermost frame outside the cache."""
    import importlib.util

    from benchmarks.compat import raised_at

    cache = tmp_path / "inductor-cache"
    module = cache / "r7" / "cr7ctbq5iczqoepyyv7na3k3vcd.py"
    module.parent.mkdir(parents=True)
    module.write_text("def call(args):\n    return buf1\n")
    spec = importlib.util.spec_from_file_location("generated_wrapper", module)
    generated = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generated)
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(cache))

    def run():
        return generated.call([])

    try:
        run()
    except NameError as exc:
        at = raised_at(exc)
        monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR")
        elsewhere = raised_at(exc)
    assert at == f" (at test_corpus_failures.py:{run.__code__.co_firstlineno + 1})", at
    assert elsewhere.startswith(" (at cr7ctbq5"), "outside the cache it is a real file"
