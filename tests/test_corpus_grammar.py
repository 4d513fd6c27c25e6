"""The corpus grammar: the same programs on every build (pinned hashes per grammar version,
definedness by rule, never by whether this build's eager raises) and the shapes the newest
reports need (overlapping and laid-out inputs, `as_strided`, writable `expand`, no-op
arithmetic, scatters written back, foreach lists that alias), each with its rules."""

import random
from collections import Counter

import pytest
import torch

from benchmarks.corpus import generate, oracle
from benchmarks.corpus.program import (
    _RULES,
    FOREACH,
    Eager,
    Input,
    Program,
    RuleGap,
    Statement,
    problem,
)
from benchmarks.corpus.shrink import candidates

A, B = Input("a", (4, 4), "float32", 1), Input("b", (4, 4), "float32", 201)
C = Input("c", (4, 4), "float32", 401)
B_IS_A_TRANSPOSED = Input("b", (4, 4), "float32", 201, (("transpose", ()),), base="a")

GOLDEN = {
    2: {
        (0, 0): "a689925cf887e4ca",
        (0, 3): "8376cce0bdc4fae3",
        (0, 9): "dec7e63f9d04c383",
        (1, 0): "38744e2aa08771c6",
        (1, 3): "5dacdd677af944ac",
        (1, 4): "50be6ef1b483f3ac",
    },
}
"""Program hashes per grammar version (the same on torch 2.13.0, 2.14.1 and 2.15.0), of programs
with overlapping and laid-out inputs, `as_strided`, foreach ops, scatters and no-ops. A change
that makes some (seed, index) generate another program bumps `generate.GRAMMAR_VERSION` and
adds that version's hashes here; a version's hashes are never edited."""


def _program(statements, returns, inputs=(A, B)) -> Program:
    made = tuple(Statement(op, out, tuple(args.split()), params)
                 for op, out, args, params in statements)  # fmt: skip
    return Program(tuple(inputs), made, tuple(returns.split()))


def test_program_hashes_are_pinned_for_this_grammar_version():
    assert generate.GRAMMAR_VERSION in GOLDEN, (
        f"no pinned hashes for grammar version {generate.GRAMMAR_VERSION}: add them to GOLDEN"
    )
    found = {key: generate.generate(*key).hash() for key in GOLDEN[generate.GRAMMAR_VERSION]}
    assert found == GOLDEN[generate.GRAMMAR_VERSION], (
        "the grammar generates other programs: bump generate.GRAMMAR_VERSION and pin its hashes"
    )


def test_the_hash_is_the_program_text_inputs_included():
    program = _program([("add_", None, "b", (1,))], "a b")
    assert program.hash() == _program([("add_", None, "b", (1,))], "a b").hash()
    assert len(program.hash()) == 16
    others = [
        _program([("add_", None, "b", (2,))], "a b"),
        _program([("add_", None, "b", (1,))], "b a"),
        _program([("add_", None, "b", (1,))], "a b", inputs=(A, B_IS_A_TRANSPOSED)),
        _program([("add_", None, "b", (1,))], "a b", inputs=(A, Input("b", (4, 4), "int64", 201))),
    ]
    assert len({p.hash() for p in [program, *others]}) == 5


def test_generation_never_drops_a_statement_because_eager_raised(monkeypatch):
    """A build whose eager raises where the rules say defined makes generation fail loudly; it
    never generates another program (which would give that build other programs)."""
    index = next(i for i in range(50) if "unfold" in generate.generate(0, i).source())

    def raising(*args, **kwargs):
        raise RuntimeError("this build's unfold raises")

    monkeypatch.setattr(torch.Tensor, "unfold", raising)
    with pytest.raises(RuleGap, match="this build's unfold raises"):
        generate.generate(0, index)


def test_the_rules_define_every_program_of_seed0_and_every_shrink_candidate_runs():
    """Over seed 0's first 200 programs and each of their shrink candidates, whatever the rules
    accept runs in eager (a RuleGap would raise); the programs themselves are defined."""
    judged = Counter()
    for index in range(200):
        program = generate.generate(0, index)
        assert problem(program) is None, program.source()
        for candidate in candidates(program):
            judged["defined" if problem(candidate) is None else "undefined"] += 1
    assert judged["defined"] > 1000 and judged["undefined"] > 100, judged


def _random_statement(rng: random.Random, env: dict) -> Statement:
    """Any op over any tensors of `env`, with params near the grammar's (and beyond it); an
    indexed or scattered source's rows count is taken from the source half of the time."""
    op = rng.choice(sorted(_RULES))
    two = {"copy_", "index_put_", "index_copy_", "scatter_", "masked_fill_", "slice_scatter",
           "select_scatter", "diagonal_scatter"}  # fmt: skip
    count = 2 if op in two or op == "add_" and rng.random() < 0.5 else 1
    if op in FOREACH:
        pairs = rng.randint(1, 2)
        count = pairs if op == "_foreach_mul_" else 2 * pairs
    args = tuple(rng.choice(sorted(env)) for _ in range(count))
    small = lambda: rng.choice((-1, 0, 1, 2, 3, 4, 5))  # noqa: E731
    length = env[args[-1]].shape[0] if env[args[-1]].dim() and rng.random() < 0.5 else small()
    rows = tuple(rng.sample(range(5), min(5, max(1, length))))
    start = small()
    index = tuple(tuple(rng.randrange(5) for _ in range(min(4, length))) for _ in range(2))
    params = {
        "slice": (rng.choice((0, 1, 2)), small(), small(), *rng.choice(((), (2,), (0,)))),
        "select": (rng.choice((0, 1, 2)), small()),
        "narrow": (rng.choice((0, 1, 2)), small(), small()),
        "unfold": (rng.choice((0, 1, 2)), small(), small()),
        "expand": tuple(rng.choice((-1, 1, 2, 3, 4)) for _ in range(rng.randint(1, 3))),
        "view": tuple(rng.choice((-1, 2, 4, 8, 16)) for _ in range(rng.randint(1, 2))),
        "reshape": tuple(rng.choice((-1, 2, 4, 8, 16)) for _ in range(rng.randint(1, 2))),
        "as_strided": ((small() + 1, small() + 1), (small() + 1, small()), rng.randint(0, 40)),
        "flip": (rng.choice((0, 1, 2)),),
        "slice_scatter": (0, start, start + length),
        "select_scatter": (rng.choice((0, 1)), small()),
        "index_put_": (rows,),
        "index_fill_": (rows, 3),
        "index_copy_": (rows,),
        "scatter_": (index,),
        "clamp_": (0, 50),
        "masked_fill_": (5, -1),
    }.get(op, (2,))
    return Statement(op, None if op.endswith("_") else "out", args, params)


AGREEMENT_INPUTS = (
    A,
    Input("b", (4, 6), "int64", 201),
    Input("c", (6,), "float32", 401),
    Input("d", (8, 4), "float32", 601, (("transpose", ()),)),
    Input("e", (4, 4), "float32", 801, (("slice", (0, 1, 2)),), base="a"),
)
AGREEMENT_SETUP = (
    Statement("select", "s", ("a",), (0, 1)), Statement("expand", "x", ("c",), (3, -1)),
    Statement("unfold", "u", ("c",), (0, 3, 1)), Statement("slice", "r", ("a",), (0, 0, 1)),
    Statement("clone", "k", ("a",)), Statement("diagonal", "g", ("b",)),
)  # fmt: skip
"""Tensors of every kind the rules tell apart: int64 and float, 0- to 2-D, transposed, a row of
another input, expanded, overlapping windows, a clone outside the inputs' storage."""


def test_every_statement_the_rules_accept_runs_in_eager():
    """6000 random statements over tensors of every kind: none the rules accept raises in
    eager (`RuleGap`), and the rules accept some of every op."""
    rng = random.Random(0)
    accepted = Counter()
    run = Eager(AGREEMENT_INPUTS)
    assert run.run(AGREEMENT_SETUP) is None
    start = run.checkpoint()
    for _ in range(6000):
        statement = _random_statement(rng, run.env)
        if run.statement_problem(statement) is None:
            run.run([statement])
            accepted[statement.op] += 1
            run.restore(start)
    assert set(accepted) == set(_RULES), set(_RULES) - set(accepted)
    assert sum(accepted.values()) > 2000


def test_inputs_overlap_as_their_source_says_and_independent_ones_do_not():
    program = _program([], "a", inputs=(A, B_IS_A_TRANSPOSED, C))
    assert "    b = a.transpose(0, 1)\n" in program.inputs_source()
    a, b, c = program.make_inputs()
    assert b.untyped_storage().data_ptr() == a.untyped_storage().data_ptr()
    assert torch.equal(b, a.t()) and not b.is_contiguous()
    a, b, c = program.independent().make_inputs()
    assert b.untyped_storage().data_ptr() != a.untyped_storage().data_ptr()
    assert b.stride() == (1, 4) and b[0, 1].item() == 205
    laid_out = Input("a", (3, 9), "float32", 1, (("slice", (1, 0, 9, 2)), ("transpose", ())))
    (x,) = _program([], "a", inputs=(laid_out,)).make_inputs()
    assert x.shape == (5, 3) and x.stride() == (2, 9)


def test_an_input_views_only_an_earlier_inputs_base_of_its_shape_and_dtype():
    later = (Input("a", (4, 4), "float32", 1, base="b"), B)
    wrong_shape = (A, Input("b", (4, 5), "float32", 201, base="a"))
    for inputs in (later, wrong_shape):
        assert "no earlier input's base like it" in problem(_program([], "a", inputs=inputs))


WRITES_B = [("add_", None, "b", (1,))]


@pytest.mark.parametrize(
    ("statements", "inputs", "why"),
    [
        # overlapping inputs: a write into one is seen through the other; partial overlap is not
        (WRITES_B, (A, B_IS_A_TRANSPOSED), None),
        ([("copy_", None, "a b", ())], (A, B_IS_A_TRANSPOSED), "overlaps"),
        # one element in two layouts: eager rejects a dense source of another layout
        ([("slice", "t0", "a", (0, 1, 2)), ("select", "t1", "a", (0, 1)),
          ("copy_", None, "t0 t1", ())], (A, B), "overlaps"),
        # expand: writable when it shares no element, readable always
        ([("select", "t0", "a", (0, 0)), ("expand", "t1", "t0", (1, -1)),
          ("fill_", None, "t1", (1,))], (A, B), None),
        ([("select", "t0", "a", (0, 0)), ("expand", "t1", "t0", (3, -1)),
          ("mul_", None, "t1", (2,))], (A, B), "share memory"),
        ([("select", "t0", "b", (0, 0)), ("expand", "t1", "t0", (4, -1)),
          ("add_", None, "a t1", ())], (A, B), None),
        # as_strided: of an input's storage, within the tensor's span; written only if no element
        # is shared
        ([("as_strided", "t0", "a", ((2, 2), (1, 4), 5)), ("zero_", None, "t0", ())], (A, B), None),
        ([("as_strided", "t0", "a", ((2, 2), (1, 4), 12)),], (A, B), "leaves 0..15"),
        ([("slice", "t0", "a", (0, 0, 2)), ("as_strided", "t1", "t0", ((2, 2), (1, 4), 5))],
         (A, B), "leaves 0..7"),
        ([("clone", "t0", "a", ()), ("as_strided", "t1", "t0", ((2,), (1,), 0))], (A, B),
         "outside the inputs' storage"),
        ([("as_strided", "t0", "a", ((3, 3), (1, 1), 0)), ("fill_", None, "t0", (2,))], (A, B),
         "share memory"),
        # compile bans a mutation through a chain with as_strided before its last view
        ([("as_strided", "t0", "a", ((2, 2), (1, 4), 5)), ("select", "t1", "t0", (0, 1)),
          ("zero_", None, "t1", ())], (A, B), "a view of an as_strided view"),
        ([("as_strided", "t0", "b", ((2, 2), (1, 4), 5)), ("zero_", None, "t0", ())],
         (A, B_IS_A_TRANSPOSED), "storage two inputs share"),
        # scatter results written back into their source
        ([("slice", "t0", "b", (0, 1, 3)), ("slice_scatter", "t1", "a t0", (0, 1, 3)),
          ("copy_", None, "a t1", ())], (A, B), None),
        ([("diagonal", "t0", "a", ()), ("diagonal_scatter", "t1", "a t0", ()),
          ("copy_", None, "a t1", ())], (A, B), None),
        # foreach lists whose elements alias
        ([("slice", "t0", "a", (0, 0, 2)), ("slice", "t1", "a", (0, 2, 4)),
          ("_foreach_mul_", None, "t0 t1", (2,))], (A, B), None),
        ([("_foreach_copy_", None, "a b c c", ())], (A, B, C), None),
        ([("_foreach_add_", None, "a b a c", ())], (A, B, C), None),
        ([("_foreach_copy_", None, "a b b a", ())], (A, B), "overlaps"),
        ([("_foreach_mul_", None, "a a", (2,))], (A, B), "overlap"),
        ([("slice", "t0", "a", (0, 0, 3)), ("slice", "t1", "a", (0, 2, 4)),
          ("_foreach_mul_", None, "t0 t1", (2,))], (A, B), "overlap"),
        ([("_foreach_copy_", None, "a b", ())], (A, B_IS_A_TRANSPOSED), "overlaps"),
        # shapes and dtypes by rule, not by an eager raise
        ([("add_", None, "b a", ())], (A, Input("b", (4, 4), "int64", 201)), "float"),
        ([("view", "t0", "b", (-1,))], (A, B_IS_A_TRANSPOSED), "non-contiguous"),
        ([("select", "t0", "a", (0, 1)), ("index_copy_", None, "b t0", ((0,),))], (A, B),
         "do not fit"),
    ],
)  # fmt: skip
def test_the_rules_of_each_addition(statements, inputs, why):
    found = problem(_program(statements, "a", inputs=inputs))
    if why is None:
        assert found is None
    else:
        assert found is not None and why in found


def test_a_program_whose_inputs_overlap_is_defined_on_independent_inputs_too():
    grows = [("mul_", None, "b", (3,))] * 11 + [("add_", None, "a", (1,))]
    shared = Input("b", (4, 4), "float32", 90001, base="a")
    found = problem(_program(grows, "a", inputs=(A, shared)))
    assert found.startswith("on independent inputs:") and "exact range" in found


def test_the_oracle_calls_again_on_independent_inputs_after_overlapping_ones(monkeypatch):
    """A fake compiler that keeps what it learned on the first call (that `b` is `a`'s
    transpose, so writing `b` through `a` suffices) is wrong only once the inputs no longer
    overlap: the unaliased coordinates say so, the others do not."""

    def specialized_to_the_first_call(fn):
        def call(a, b):
            a.t().add_(1)  # the write into `b`, through `a`, as if they still overlapped
            return (b,)

        return call

    monkeypatch.setattr(oracle, "build", lambda fn, backend: specialized_to_the_first_call(fn))
    outcome = oracle.judge(_program(WRITES_B, "b", inputs=(A, B_IS_A_TRANSPOSED)), "fake")
    assert set(outcome.wrong) == {"unaliased_ret_0_b", "unaliased_in_a", "unaliased_in_b"}
    assert outcome.wrong["unaliased_in_a"] == 16


def test_the_default_corpus_draws_every_op_and_the_shapes_of_the_reports():
    """Seed 0's first 200 programs: every op, and at least 20 each of a no-op of an input
    returned, a scatter written back into its source, overlapping inputs, laid-out inputs."""
    programs = [generate.generate(0, index) for index in range(200)]
    ops = Counter(s.op for p in programs for s in p.statements)
    assert set(ops) == set(_RULES), set(_RULES) - set(ops)
    returned_noops = [
        s for p in programs for s in p.statements
        if (s.op, s.params) in {("add", (0,)), ("mul", (1,)), ("sub", (0,))}
        and s.out in p.returns and s.args[0] in {i.name for i in p.inputs}
    ]  # fmt: skip
    written_back = [
        p for p in programs
        for s, t in zip(p.statements, p.statements[1:])
        if s.op.endswith("_scatter") and t.op == "copy_" and t.args == (s.args[0], s.out)
    ]  # fmt: skip
    overlapping = [p for p in programs if p.overlapping_inputs()]
    laid_out = [p for p in programs if any(i.view and not i.base for i in p.inputs)]
    assert min(len(returned_noops), len(written_back), len(overlapping), len(laid_out)) >= 20
