"""The generated corpus: the generator is deterministic and only writes defined programs, the
oracle's probes catch injected faults, the shrinker and the grouping find a planted fault."""

import pytest
import torch

from benchmarks import attribution
from benchmarks.corpus import generate, oracle, run
from benchmarks.corpus.program import Input, Program, Statement, problem
from benchmarks.corpus.shrink import shrink
from tests import planted_backends as planted

A, B = Input("a", (4, 4), "float32", 1), Input("b", (4, 4), "float32", 101)


def _program(statements, returns, inputs=(A, B)) -> Program:
    made = tuple(Statement(op, out, tuple(args.split()), params)
                 for op, out, args, params in statements)  # fmt: skip
    return Program(tuple(inputs), made, tuple(returns.split()))


FOREACH_SWAP_WITH_NOISE = _program(
    [
        ("view", "t0", "a", (-1,)),
        ("clone", "t1", "b", ()),
        ("transpose", "t2", "b", ()),
        ("clone", "t3", "a", ()),
        ("mul", "t4", "t2", (2,)),
        ("_foreach_copy_", None, "a b t1 t3", ()),
        ("add", "t6", "t0", (1,)),
    ],
    "a t4 t6",
)
"""The reported foreach fault (`_foreach_copy_([a, b], [b.clone(), a.clone()])`), planted
among statements that have nothing to do with it."""


def test_the_generator_is_a_pure_function_of_seed_and_index():
    forward = [generate.generate(0, i).source() for i in range(6)]
    backward = [generate.generate(0, i).source() for i in reversed(range(6))][::-1]
    assert forward == backward
    assert len(set(forward)) == len(forward)
    assert generate.generate(0, 3).hash() == generate.generate(0, 3).hash()
    assert generate.generate(1, 3).source() != generate.generate(0, 3).source()


def test_generated_programs_follow_the_grammar():
    for index in range(40):
        program = generate.generate(0, index)
        assert 2 <= len(program.inputs) <= 3
        assert 3 <= len(program.statements) <= 8, program.source()
        assert 1 <= len(program.returns) <= 3
        assert {i.dtype for i in program.inputs} <= {"float32", "int64"}
        values = [set(t.reshape(-1).tolist()) for t in program.independent().make_inputs()]
        assert all(not (x & y) for k, x in enumerate(values) for y in values[k + 1 :])


@pytest.mark.slow
def test_every_program_of_the_default_corpus_is_defined_and_runs_in_eager():
    for program in run.programs(run.DEFAULT):
        assert problem(program) is None, program.source()
        with torch.no_grad():
            program.function()(*program.make_inputs())


@pytest.mark.parametrize(
    ("statements", "why"),
    [
        ([("slice", "t0", "a", (0, 1, 4)), ("slice", "t1", "a", (0, 0, 3)),
          ("copy_", None, "t0 t1", ())], "overlaps"),
        ([("select", "t0", "a", (0, 0)), ("expand", "t1", "t0", (3, -1)),
          ("fill_", None, "t1", (1,))], "share memory"),
        ([("transpose", "t0", "a", ()), ("add_", None, "a t0", ())], "overlaps"),
        ([("slice", "t0", "a", (0, 0, 2)), ("index_copy_", None, "a t0", ((1, 2),))], "overlaps"),
        ([("_foreach_copy_", None, "a b b a", ())], "overlaps"),
        ([("mul_", None, "a", (3,))] * 13, "exact range"),
    ],
)  # fmt: skip
def test_undefined_programs_are_rejected(statements, why):
    assert why in problem(_program(statements, "a"))


def test_a_source_identical_to_its_destination_is_defined():
    assert problem(_program([("add_", None, "a a", ())], "a")) is None


def _fake_backend(monkeypatch, wrap):
    monkeypatch.setattr(oracle, "build", lambda fn, backend: wrap(fn))


def test_the_oracle_alias_probe_catches_a_copy_where_eager_returns_the_input(monkeypatch):
    _fake_backend(monkeypatch, lambda fn: lambda *a: tuple(t.clone() for t in fn(*a)))
    outcome = oracle.judge(_program([("add_", None, "a", (1,))], "a"), "fake")
    assert outcome.wrong == {"alias_0_a": 16}


def test_the_oracle_second_call_catches_state_carried_between_calls(monkeypatch):
    calls = []

    def wrong_from_the_second_call(fn):
        def call(*args):
            calls.append(1)
            result = fn(*args)
            if len(calls) == 3:  # a judge's first call is checked, then two in a row
                args[1].add_(1)
            return result

        return call

    _fake_backend(monkeypatch, wrong_from_the_second_call)
    outcome = oracle.judge(_program([("add_", None, "a", (1,))], "a"), "fake")
    assert outcome.wrong == {"second_in_b": 16}


TWO_CLONES = _program([("clone", "t0", "a", ()), ("clone", "t1", "a", ())], "t0 t1")
CLONE_AND_ITS_VIEW = _program([("clone", "t0", "a", ()), ("view", "t1", "t0", (4, 4))], "t0 t1")


@pytest.mark.parametrize(
    ("program", "compiled_returns"),
    [
        (TWO_CLONES, lambda returned: (returned[0], returned[0])),
        (CLONE_AND_ITS_VIEW, lambda returned: tuple(t.clone() for t in returned)),
    ],
    ids=["one-tensor-twice-where-eager-has-two", "two-tensors-where-eager-shares-one"],
)
def test_the_oracle_checks_the_returns_aliasing_of_each_other(monkeypatch, program,
                                                              compiled_returns):  # fmt: skip
    """Every value is right and no return aliases an input; only which returns share storage
    differs: each return's 16 elements change on one side only when the other is written."""
    _fake_backend(monkeypatch, lambda fn: lambda *a: compiled_returns(fn(*a)))
    assert oracle.judge(program, "fake").wrong == {"alias_returns": 32}


def test_the_oracle_passes_returns_that_share_as_in_eager(monkeypatch):
    _fake_backend(monkeypatch, lambda fn: fn)
    assert oracle.judge(CLONE_AND_ITS_VIEW, "fake").wrong == {}


@pytest.fixture
def no_catalogue(monkeypatch):
    """A fake backend's families match no catalogue control (compiled for real)."""
    planted.no_catalogue(monkeypatch)


def test_each_family_is_attributed_once_on_its_representative(monkeypatch, no_catalogue):
    """Two programs with one Inductor fault (a fake compiler that copies every return, so a
    returned input stops aliasing it): one attribution, of the representative, whose check is
    the oracle (the fault is there); the other member joins its family."""
    _fake_backend(monkeypatch, lambda fn: lambda *a: tuple(t.clone() for t in fn(*a)))
    monkeypatch.setenv("WRITEBACK_ATTRIBUTION", "1")
    checked = []

    def fake_attribution(holds):
        checked.append(holds())
        return {**attribution.empty_result("fake"), "pass": "fake_pass", "method": "ablation"}

    monkeypatch.setattr(attribution, "attribute_check", fake_attribution)
    pair = [_program([("add_", None, "a", (k,))], "a") for k in (1, 2)]
    record = run.run("planted", backends=("inductor",), corpus=pair)
    assert checked == [False]
    (family,) = record["families"]
    assert family["members"] == [0, 1] and family["attribution"]["pass"] == "fake_pass"
    assert family["first_wrong"] == "inductor" and family["kinds"] == ["output alias"]
    assert {r["representative"] for r in record["rows"]} == {family["representative"]}


@pytest.mark.usefixtures("no_catalogue")
def test_an_inductor_fault_already_there_under_aot_eager_is_not_attributed(monkeypatch):
    """The same fake fault under both backends: the Inductor rows are already wrong with
    aot_eager (dynamo and AOTAutograd), so no Inductor pass is looked for."""
    _fake_backend(monkeypatch, lambda fn: lambda *a: tuple(t.clone() for t in fn(*a)))
    monkeypatch.setenv("WRITEBACK_ATTRIBUTION", "1")
    monkeypatch.setattr(attribution, "attribute_check", lambda holds: pytest.fail("attributed"))
    pair = [_program([("add_", None, "a", (k,))], "a") for k in (1, 2)]
    record = run.run("planted", backends=("inductor", "aot_eager"), corpus=pair)
    inductor, aot_eager = (next(f for f in record["families"] if f["backend"] == b)
                           for b in ("inductor", "aot_eager"))  # fmt: skip
    assert inductor["first_wrong"] == aot_eager["first_wrong"] == "aot_eager"
    assert "already wrong with aot_eager" in inductor["attribution"]["note"]
    assert inductor["members"] == aot_eager["members"] == [0, 1]


def _foreach_from_clones(program) -> bool:
    """The planted fault's condition: a foreach copy whose sources are all clones."""
    clones = {s.out: s.args[0] for s in program.statements if s.op == "clone"}
    return any(
        s.op == "_foreach_copy_" and all(a in clones for a in s.args[len(s.args) // 2 :])
        for s in program.statements
    )


def test_the_shrinker_keeps_only_what_the_fault_needs():
    small = shrink(FOREACH_SWAP_WITH_NOISE, _foreach_from_clones)
    assert [s.op for s in small.statements] == ["clone", "_foreach_copy_"]
    assert problem(small) is None


def test_the_shrinker_drops_every_statement_the_screen_clears_in_one_judgement():
    """Three statements nothing reads, beside the swap: the screen (here the fault's own
    condition) flags each alone drop as still wrong, so the first program judged drops all
    three at once; the result is the one the step-by-step shrink reaches."""
    noisy = _program(
        [
            ("add", "t0", "a", (1,)),
            ("mul", "t1", "b", (2,)),
            ("clone", "t2", "b", ()),
            ("clone", "t3", "a", ()),
            ("add", "t4", "b", (3,)),
            ("_foreach_copy_", None, "a b t2 t3", ()),
        ],
        "a",
    )
    judged = []

    def still_wrong(program) -> bool:
        judged.append(program)
        return _foreach_from_clones(program)

    small = shrink(noisy, still_wrong, lambda ps: [_foreach_from_clones(p) for p in ps])
    assert [s.op for s in judged[0].statements] == ["clone", "clone", "_foreach_copy_"]
    assert small.statements == shrink(noisy, _foreach_from_clones).statements
    assert problem(small) is None


@pytest.mark.slow
def test_the_corpus_finds_shrinks_and_files_a_planted_foreach_swap():
    record = run.run("planted", backends=("inductor",), corpus=[FOREACH_SWAP_WITH_NOISE])
    (planted,) = record["rows"]
    assert planted["wrong_elements"] > 0, planted
    (family,) = record["families"]
    assert family["shrunk"].count("\n    ") - 1 <= 3, family["shrunk"]
    assert planted["family"] == family["family"] and planted["representative"] == 0
    assert run.count_wrong_families(record, "inductor") == 1


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_a_family_names_the_catalogue_control_with_the_same_fault(monkeypatch, workers):
    """The planted foreach swap is wrong under Inductor through the same pass as the swap's
    own `foreach_clones` control on this build: the family names it (matched by running the
    control, not by its spelling). With two workers the controls are judged beside the
    representative and the pass checks run in the workers: the same match."""
    monkeypatch.setenv("WRITEBACK_ATTRIBUTION", "1")
    record = run.run(
        "planted", backends=("inductor",), corpus=[FOREACH_SWAP_WITH_NOISE], workers=workers
    )
    (family,) = record["families"]
    if family["first_wrong"] != "inductor" or not family["passes"]:
        pytest.skip(f"this build's fault is not attributed to an Inductor pass: {family}")
    assert "snapshot_swap.foreach_clones" in family["catalogue"].split(", "), family


def test_a_family_no_entry_could_match_is_new_without_a_pass_check(monkeypatch):
    """Only a family with a candidate control gets a pass check (a pool task: forking workers
    for a family no entry could match would be work for nothing); the other is `new`."""
    from benchmarks.corpus import catalogue

    handed = []

    def fake_run(function, tasks, workers, **_):
        handed.extend(names for _, names, _ in tasks)
        return [[True] * len(names) for _, names, _ in tasks]

    monkeypatch.setattr(catalogue.pool, "run", fake_run)
    family = {"passes": ["reinplace_inplaceable_ops"], "attribution": {}, "first_wrong": "inductor"}
    matched = {**family, "backend": "inductor", "kinds": ["input after the call"]}
    unmatched = {**family, "backend": "aot_eager", "first_wrong": "aot_eager",
                 "kinds": ["input after the call"]}  # fmt: skip
    wrong = {"inductor": {"snapshot_swap.foreach_clones": {"in_a": 16}},
             "aot_eager": {}}  # fmt: skip
    catalogue.match([matched, unmatched], ("inductor", "aot_eager"), wrong=wrong, workers=2)
    assert handed == [["snapshot_swap.foreach_clones"]]
    assert matched["catalogue"] == "snapshot_swap.foreach_clones"
    assert unmatched["catalogue"] == "new"
