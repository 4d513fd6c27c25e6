"""The report on results recorded by `make history` on this project's machine
(tests/fixtures/history: asv's result files, the install records and the probe records of
torch 2.13.0, 2.14.1 and 2.15.0)."""

import json
import math
import shutil
from pathlib import Path

import pytest

from tests import corpus_history
from tools import builds, ledger, render, report, results

ROOT = Path(__file__).resolve().parents[1]

RECORDED = ROOT / "tests" / "fixtures" / "history" / "results"


@pytest.fixture(scope="module")
def text(tmp_path_factory):
    path = tmp_path_factory.mktemp("ledger") / "ledger"
    ledger.build_ledger(builds.read(ROOT / "builds.txt"), path)
    loaded = results.load(RECORDED, path)
    assert [b.name for b in loaded] == ["torch-2.13.0", "torch-2.14.1", "torch-2.15.0"]
    return report.render(loaded)


def _section(text, heading):
    return text.split(heading, 1)[1].split("\n## ", 1)[0]


def test_each_build_has_its_identity_and_two_tables(text):
    section = _section(text, "## torch-2.15.0 (torch 2.15.0+cu132) on vm")
    assert "upstream commit d0f2af8b66b20da4baa50644c0cd3f887a2eae2e" in section
    assert "| foreach_clones | inductor | wrong: 9 (ret_b 3, in_b 3, view_b 3) |" in section
    assert "| explicit_copies | inductor | exact | exact |" in section
    assert "| explicit_copies | 1,048,576 | 4,194,304 B (4 MiB) | 3 | 1 |" in section
    assert "| stack_buffer | 1,048,576 | 8,388,608 B (8 MiB) | 4 | 1 |" in section
    assert "- N=1,048,576: explicit_copies / stack_buffer = " in section


def test_a_build_lists_only_its_correct_controls_in_the_cost_table(text):
    section = _section(text, "## torch-2.14.1 (torch 2.14.1+cu130) on vm")
    assert "| explicit_copies | inductor | wrong: 9 (ret_a 3, in_a 3, view_a 3) |" in section
    cost = section.split("| correct control |", 1)[1]
    assert "| explicit_copies |" not in cost and "| select_swap | 1,048,576 | 0 B | 1 | 1 |" in cost
    assert "- N=1,048,576: select_swap / stack_buffer = " in section


def test_cost_rows_carry_the_floor_ratio_and_instructions(text):
    section = _section(text, "## torch-2.15.0 (torch 2.15.0+cu132) on vm")
    row = next(
        line for line in section.splitlines() if line.startswith("| explicit_copies | 1,048,576 |")
    )
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[6].endswith(" x") and float(cells[6][:-2]) > 0
    assert int(cells[7].replace(",", "")) > 0


def test_the_matrix_covers_the_catalogue_with_issue_links(text):
    matrix = text.split("## Correctness over all builds", 1)[1]
    link = "[copy_of_mutated_input](https://github.com/pytorch/pytorch/issues/198131)"
    start = f"| aliasing | {link} | inductor | small |"
    row = next(line for line in matrix.splitlines() if line.startswith(start))
    assert row.rstrip(" |").endswith("**exact** (changed)")
    assert "## Stability of the cost figures" in text


def test_the_matrix_marks_where_a_verdict_changes(text):
    matrix = text.split("## Correctness over all builds", 1)[1]
    row = next(
        line
        for line in matrix.splitlines()
        if line.startswith("| snapshot_swap | explicit_copies | inductor | 3 |")
    )
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[4:] == [
        "wrong: 9 (ret_a 3, in_a 3, view_a 3)",
        "wrong: 9 (ret_a 3, in_a 3, view_a 3)",
        "**exact** (changed)",
    ]
    unchanged = next(
        line
        for line in matrix.splitlines()
        if line.startswith("| snapshot_swap | stack_buffer | inductor | 3 |")
    )
    assert "changed" not in unchanged


def test_skips_and_failures_carry_their_reasons():
    build = results.BuildResult("b", "0" * 40, "m", {"installed": True})
    name = f"{results.CORRECTNESS}.track_wrong_elements"
    build.values[name] = {("x", "inductor", 3): math.nan, ("y", "inductor", 3): None}
    build.probe = {
        ("snapshot_swap", "x", "inductor", 3): {
            "skipped": "torch 2.0.1 has no torch._foreach_copy_"
        },
        ("snapshot_swap", "y", "inductor", 3): {
            "error": "InvalidCxxCompiler: no working C++ compiler"
        },
    }
    assert results.verdict(build, "x", "inductor", 3) == (
        "skipped: torch 2.0.1 has no torch._foreach_copy_"
    )
    assert results.verdict(build, "y", "inductor", 3) == (
        "failed: InvalidCxxCompiler: no working C++ compiler"
    )
    assert results.verdict_state(build, "x", "inductor", 3)[0] == "skipped"
    assert results.verdict_state(build, "y", "inductor", 3)[0] == "failed"
    assert results.verdict_state(build, "z", "inductor", 3)[0] == "not run"


def test_a_wrong_cell_names_every_pass_the_attribution_kept():
    build = results.BuildResult("b", "0" * 40, "m", {"installed": True})
    build.values[f"{results.CORRECTNESS}.track_wrong_elements"] = {("x", "inductor", 3): 9}
    named = [{"subsystem": "joint_graph_passes", "pass": "first"},
             {"subsystem": "post_grad_passes", "pass": "third"}]  # fmt: skip
    found = {"method": "ablation", "subsystem": "joint_graph_passes", "pass": "first",
             "passes": named, "note": "..."}  # fmt: skip
    build.probe = {("snapshot_swap", "x", "inductor", 3): {
        "wrong_elements": {"ret_b": 9, "total": 9}, "attribution": found}}  # fmt: skip
    assert results.verdict(build, "x", "inductor", 3) == "wrong: 9 (ret_b 9); pass: first + third"
    (line,) = report.attribution_lines(build)
    assert line.startswith("- snapshot_swap.x (3): `first + third` (ablation, ")


def test_a_configuration_variants_attribution_is_listed_by_its_variant():
    build = results.BuildResult("b", "0" * 40, "m", {"installed": True})
    bisected = {"method": "compiler_bisector", "backend": "inductor", "pass": "reinplace",
                "subsystem": "post_grad_passes", "bisect_number": 10, "seconds": 9.0}  # fmt: skip
    build.probe = {
        ("snapshot_swap", "x", "inductor", 3): {"attribution": bisected},
        ("snapshot_swap_configs", "x", "cpp_wrapper-fp32", None): {"attribution": bisected},
        ("snapshot_swap_configs", "x", "cpp_wrapper-bf16", None): {
            "attribution": {"note": "attributed at the first wrong input, cpp_wrapper-fp32"}
        },
        ("snapshot_swap_configs", "x", "aoti-fp32", None): {
            "attribution": {"note": "not attributed: AOTInductor is not torch.compile"}
        },
        ("snapshot_swap_configs", "x", "export-fp32", None): {"attribution": None},
    }
    how = "`reinplace` (compiler_bisector, post_grad_passes, #10), 9.0 s"
    assert report.attribution_lines(build) == [
        f"- snapshot_swap.x (3): {how}",
        "- snapshot_swap_configs.x (aoti-fp32): not attributed: AOTInductor is not torch.compile",
        f"- snapshot_swap_configs.x (cpp_wrapper-fp32): {how}",
    ]


def test_no_results_is_said_plainly():
    assert "No results yet" in report.render([])


def test_each_verdict_has_a_state_that_matches_its_words(text, tmp_path):
    path = tmp_path / "ledger"
    ledger.build_ledger(builds.read(ROOT / "builds.txt"), path)
    seen = set()
    for build in results.load(RECORDED, path):
        for scenario in results.scenarios(build):
            for combo in build.values[f"{scenario}.{results.WRONG}"]:
                state, words = results.verdict_state(build, *combo, scenario)
                assert state in render.VERDICT_STATES
                assert words.startswith(state) and words == results.verdict(build, *combo, scenario)
                seen.add(state)
    assert {"exact", "wrong"} <= seen, seen


def test_the_report_says_where_each_builds_time_went(text):
    lines = _section(text, "## Where the time went").splitlines()
    rows = [line for line in lines if line.startswith("| torch-")]
    assert [row.split(" |")[0] for row in rows] == [
        "| torch-2.13.0 on vm",
        "| torch-2.14.1 on vm",
        "| torch-2.15.0 on vm",
    ]
    # asv kept each setup_cache's seconds in these results; the install records predate
    # install_seconds, so the table says so rather than counting zero
    assert all("not recorded" in row and " s |" in row for row in rows)


def test_the_time_table_sums_each_release_lines_builds(text):
    """How long a whole line took (the long history: 26 builds in shards over sessions) is
    its builds' totals summed, with the shortest and longest build."""
    lines = _section(text, "## Where the time went").splitlines()
    totals = [float(line.split(" | ")[6].removesuffix(" s").replace(",", ""))
              for line in lines if line.startswith("| torch-")]  # fmt: skip
    minutes = round(sum(totals) / 60)
    assert len(totals) == 3 and minutes > 0
    assert (f"- builds.txt on vm: 3 builds, {minutes} min in all (each build's total above, "
            f"summed), {min(totals) / 60:.1f} min to {max(totals) / 60:.1f} min a build"
            in lines)  # fmt: skip


def test_a_result_of_an_older_benchmark_version_is_left_out_and_named(tmp_path):
    """A build not measured again since a benchmark changed keeps its old result file: asv's
    publish leaves that benchmark's results out (its version is not benchmarks.json's), and so
    must the report, saying which benchmark of which build, instead of mixing the two sets."""
    results_dir = tmp_path / "results"
    shutil.copytree(RECORDED, results_dir)
    path = results_dir / "vm" / "9e241e62-virtualenv-py3.11.json"
    data = json.loads(path.read_text())
    column = data["result_columns"].index("version")
    data["results"][f"{results.CORRECTNESS}.track_wrong_elements"][column] = "an-older-one"
    path.write_text(json.dumps(data))
    ledger_path = tmp_path / "ledger"
    ledger.build_ledger(builds.read(ROOT / "builds.txt"), ledger_path)

    loaded = {b.name: b for b in results.load(results_dir, ledger_path)}
    older = loaded["torch-2.14.1"]
    assert older.stale == [f"{results.CORRECTNESS}.track_wrong_elements"]
    assert f"{results.CORRECTNESS}.track_wrong_elements" not in older.values
    assert f"{results.CORRECTNESS}.track_moved_storages" in older.values
    assert loaded["torch-2.15.0"].stale == []
    assert f"{results.CORRECTNESS}.track_wrong_elements" in loaded["torch-2.15.0"].values
    text = report.render(list(loaded.values()))
    section = text.split("## torch-2.14.1", 1)[1].split("\n## ", 1)[0]
    assert "Not shown: 1 benchmark(s) measured on this build with an older version" in section
    assert "Not shown" not in text.split("## torch-2.15.0", 1)[1].split("\n## ", 1)[0]


def test_a_patch_stands_beside_its_base_and_the_timeline_goes_on_without_it(tmp_path):
    """A patch build of 2.14.1 measured as 2.15.0 was (tests/test_compare.py): its column
    follows its base's and is marked against it, 2.15.0's is marked against 2.14.1's, and the
    patch's section names its pull request, its flips both ways and the costs it moved."""
    from tests.test_compare import PATCH, patched_history

    loaded = results.load(*patched_history(tmp_path))
    assert [b.tag for b in loaded] == ["torch-2.13.0", "torch-2.14.1", PATCH, "torch-2.15.0"]
    assert [b and b.tag for b in results.compared_with(loaded)] == [
        None, "torch-2.13.0", "torch-2.14.1", "torch-2.14.1"
    ]  # fmt: skip
    text = report.render(loaded)
    matrix = _section(text, "## Correctness over all builds")
    assert f"| torch-2.14.1 | {PATCH} (patch of torch-2.14.1) | torch-2.15.0 |" in matrix
    start = "| snapshot_swap | explicit_copies | inductor | 3 |"
    row = next(line for line in matrix.splitlines() if line.startswith(start))
    assert [c.strip() for c in row.strip("|").split("|")][5:] == [
        "wrong: 9 (ret_a 3, in_a 3, view_a 3)", "**exact** (changed)", "**exact** (changed)"
    ]  # fmt: skip
    patches = _section(text, "## Patches beside their base")
    link = "[pull request #198132](https://github.com/pytorch/pytorch/pull/198132)"
    assert patches.startswith(f"\n\n### {PATCH} on vm: torch-2.14.1 + fix.diff ({link})\n")
    assert "- fixed: aliasing/copy_of_mutated_input/inductor/small: wrong: 32" in patches
    assert "- BROKEN: corpus toy program 4 (inductor): exact -> wrong: 5" in patches
    assert (
        "- snapshot_swap/explicit_copies/1,048,576 runtime scratch: costed only in HEAD" in patches
    )
    assert "installed `torch==2.14.1`, then fix.diff applied -> torch 2.14.1+cu130" in text


def test_the_summary_compares_a_patch_with_its_base_and_the_next_release_with_the_last(
    tmp_path,
):
    from tests.test_compare import PATCH, patched_history
    from tools import summary

    text = summary.summary(results.load(*patched_history(tmp_path)), tmp_path / "r.md", None)
    assert f"{PATCH} (torch 2.14.1+cu130), a patch of torch-2.14.1: 10 wrong verdicts" in text
    after = text.split("torch-2.15.0 (torch 2.15.0+cu132)", 1)[1]
    assert "fixed since torch-2.14.1: snapshot_swap.explicit_copies" in after


def test_the_model_follows_each_corpus_family_over_the_builds(tmp_path):
    older, newer = corpus_history.two_builds(tmp_path / "results")
    histories = results.family_histories([older, newer])
    assert list(histories) == [corpus_history.CORPUS]
    families = histories[corpus_history.CORPUS]
    alias, noop, stale, unfold = (corpus_history.ALIAS, corpus_history.NOOP,
                                  corpus_history.STALE, corpus_history.UNFOLD)  # fmt: skip
    assert list(families) == [alias, noop, stale, unfold]  # inductor's first, newest first
    assert {name: h.counts for name, h in families.items()} == {
        alias: (2, 3),
        noop: (0, 1),
        stale: (1, 0),
        unfold: (1, None),
    }
    assert families[alias].members == ((1, 4), (1, 4, 5)) and families[alias].newest_count == 3
    assert (families[alias].first_build, families[alias].last_build) == (older, newer)
    assert (families[stale].first_build, families[stale].last_build) == (older, older)
    assert families[noop].first_build is newer
    assert families[alias].passes == (corpus_history.PASS,)
    assert families[alias].catalogue == "aliasing.copy_of_mutated_input"
    assert families[alias].repro == corpus_history.repro("torch-2.15.0", alias)
    assert families[unfold].repro == corpus_history.repro("torch-2.13.0", unfold)
    assert families[unfold].passes == () and "aot_eager" in families[unfold].attribution["note"]
    assert results.family_histories([newer])[corpus_history.CORPUS][alias].counts == (3,)


def test_the_report_shows_each_family_with_its_builds_pass_and_repro(tmp_path):
    builds_ = corpus_history.two_builds(tmp_path / "results")
    text = report.render(builds_)
    newest = _section(text, "## torch-2.15.0 (torch 2.15.0) on m")
    assert "Generated corpus `seed0-50` (8 programs; inductor: 4 wrong), 2 families:" in newest
    family = newest.split(f"- **{corpus_history.ALIAS}**: 3 program(s) (1, 4, 5)\n", 1)[1]
    family = family.split("\n- **", 1)[0].splitlines()
    assert family[:4] == [
        "  - wrong on 2 of the 2 build(s) of m that judged it: first torch-2.13.0, last "
        "torch-2.15.0",
        "  - which pass (attributed on the repro, of program 1): `reinplace_inplaceable_ops` "
        "(ablation, post_grad_passes), 3.5 s",
        "  - catalogue: aliasing.copy_of_mutated_input",
        "  - shrunk (program 1): `t0=clone(i0) [inductor:]`",
    ]
    script = corpus_history.repro("torch-2.15.0", corpus_history.ALIAS).rstrip().splitlines()
    fence = family.index("    ```python")
    assert family[fence + 1 : fence + 1 + len(script)] == [f"    {s}".rstrip() for s in script]
    assert family[fence + 1 + len(script)] == "    ```"
    older = _section(text, "## torch-2.13.0 (torch 2.13.0) on m")
    assert "(8 programs; inductor: 3 wrong, aot_eager: 1 wrong), 3 families:" in older
    stale = older.split(f"- **{corpus_history.STALE}**", 1)[1].splitlines()
    assert stale[1] == "  - wrong on 1 of the 2 build(s) of m that judged it: torch-2.13.0"
    unfold = older.split(f"- **{corpus_history.UNFOLD}**", 1)[1].splitlines()
    assert unfold[1].startswith("  - wrong on 1 of the 1 build(s) of m")
    assert unfold[2].startswith("  - which pass (attributed on the repro, of program 2): not "
                                "attributed: already wrong with aot_eager")  # fmt: skip


def test_a_corpus_record_of_an_older_version_is_not_followed(tmp_path):
    """A record whose families are keyed by op sequence (no `first_wrong`, `kinds`,
    `skeleton`) names no family of the current version: the report says so and still lists
    its failed programs; the model counts the build as not measured."""
    older, newer = corpus_history.two_builds(tmp_path / "results")
    record = json.loads(next(tmp_path.glob("results/generated/m/*2.13.0*/*/corpus/*")).read_text())
    old_rows = [{k: v for k, v in row.items() if k != "program_hash"} for row in record["rows"]]
    old_rows[0]["error"] = "RuntimeError: planted"
    old_families = [{"backend": "inductor", "family": "t0=clone(i0)", "programs": 2,
                     "members": [1, 4], "repro": "import torch\n", "catalogue": "new",
                     "representative": 1, "attribution": None}]  # fmt: skip
    older = corpus_history.build(
        tmp_path / "results", "2.13.0", "a", {**record, "rows": old_rows, "families": old_families}
    )
    assert results.family_histories([older]) == {}
    counts = results.family_histories([older, newer])[corpus_history.CORPUS]
    assert counts[corpus_history.ALIAS].counts == (None, 3)
    lines = report.corpus_lines(older, {})
    assert "Families not shown: recorded by an older version of the corpus" in lines[2]
    assert (
        "- inductor program 0: `RuntimeError: planted` (not a known state: fails "
        "`make history`)" in lines
    )


def _failed_export(version: str) -> results.BuildResult:
    """A build whose `export` variant of one control failed as torch 2.2.0's `.module()` does."""
    build = results.BuildResult("b", "0" * 40, "m", {"installed": True, "torch_version": version},
                                tag="torch-" + version)  # fmt: skip
    build.values["snapshot_swap_configs.Correctness.track_wrong_elements"] = {
        ("select_swap", "export-fp32"): None}  # fmt: skip
    error = ("ValueError: tree_unflatten(leaves, treespec): `leaves` has length 4 but the spec "
             "refers to a pytree that holds 2 items (TreeSpec(tuple, None, [*, (at "
             "_pytree.py:552)")  # fmt: skip
    build.probe = {("snapshot_swap_configs", "select_swap", "export-fp32", None): {"error": error}}
    return build


def test_a_known_fault_of_a_build_is_listed_apart_and_fails_no_history():
    """A benchmark failure `benchmarks/known_failures.py` names for its release stays a failure
    (asv's, the report's) but is listed as known and does not make `make history` exit 1; the
    same failure on another release does."""
    from tools import history

    known = _failed_export("2.2.0+cu121")
    (failure,) = results.failures([known])
    assert failure.known.startswith("torch 2.2's torch.export takes a program that mutates")
    text = report.render([known])
    assert "## Failures (nobody expected these)" not in text
    assert "select_swap, export-fp32) on torch-2.2.0+cu121 (m): ValueError: tree_unflatten(" in (
        _section(text, "## Known failures (faults of the builds")
    )
    assert history.failed_at_end([], [known], {known.commit}) == 0
    other = _failed_export("2.4.1+cu121")
    assert results.failures([other])[0].known is None
    assert "## Known failures" not in report.render([other])
    assert history.failed_at_end([], [other], {other.commit}) == 1
