"""The timeline (tools/timeline.py) as the report and `make timeline` give it: on the results
recorded by `make history` (tests/fixtures/history: torch 2.13.0, 2.14.1 and 2.15.0), and on
a synthetic long history (tests/long_history.py: the 26 releases of builds-long.txt, where
`explicit_copies` under Inductor is wrong on 2.1.0-2.3.1, exact on 2.4.0-2.8.0 and wrong
again on 2.9.0-2.15.0): the releases where a fault is wrong as ranges, every flip both ways
with its upstream commits, the pass on its wrong side and the `asv find` window that holds it
alone, and since when a row is wrong on the newest build."""

import copy
import math
import subprocess
from pathlib import Path

import pytest

from tests import long_history
from tests.long_history import PASS, git_version
from tests.test_makefile import _called, venv  # noqa: F401 - venv is a fixture
from tools import builds, ledger, report, results, summary, timeline

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "tests" / "fixtures" / "history" / "results"
EXPLICIT = ("snapshot_swap", "explicit_copies", "inductor", 3)
FOREACH = ("snapshot_swap", "foreach_clones", "inductor", 3)
PATTERN = "snapshot_swap.Correctness.track_wrong_elements\\('explicit_copies', 'inductor', 3\\)"
V2141 = "5c4886908584029761b579af026dcfb627c84070"
V2150 = "d0f2af8b66b20da4baa50644c0cd3f887a2eae2e"


@pytest.fixture(scope="module")
def recorded(ledger_path):
    return results.load(RECORDED, ledger_path)


@pytest.fixture(scope="module")
def long(recorded):
    return long_history.long_history(recorded)


def _row(builds: list[results.BuildResult], key: tuple) -> timeline.RowTimeline:
    (line,) = timeline.lines(builds)
    return next(row for row in timeline.row_timelines(line) if row.key == key)


def _names(found) -> list[str]:
    return [build.name for build in found]


def test_the_recorded_history_is_one_line_with_its_fix_and_its_upstream_range(recorded):
    (line,) = timeline.lines(recorded)
    assert line.name == "builds.txt on vm"
    assert _names(line.builds) == ["torch-2.13.0", "torch-2.14.1", "torch-2.15.0"]
    row = _row(recorded, EXPLICIT)
    assert row.states == ("wrong", "wrong", "exact")
    assert row.ranges() == "2.13.0-2.14.1" and not row.wrong_now() and row.since() is None
    (flip,) = row.flips
    assert (flip.kind, flip.before.name, flip.after.name) == ("fixed in", "torch-2.14.1",
                                                              "torch-2.15.0")  # fmt: skip
    assert flip.commits == (V2141, V2150)
    assert flip.commit_range() == "upstream 5c488690..d0f2af8b"
    assert flip.upstream() == (
        f"https://github.com/pytorch/pytorch/compare/{V2141}...{V2150} "
        f"(`git log --oneline {V2141}..{V2150}` in a PyTorch checkout)"
    )
    assert flip.wrong_side.name == "torch-2.14.1"
    assert flip.passes == "no attribution recorded"  # attribution was off when recorded
    assert flip.find_command() == f'.venv/bin/asv find --invert torch-2.15.0 "{PATTERN}"'
    foreach = _row(recorded, FOREACH)
    assert foreach.flips == () and foreach.ranges() == "2.13.0-2.15.0"
    assert foreach.since().name == "torch-2.13.0"
    assert foreach.since_text() == "2.13.0, the first build measured"
    faults = dict(timeline.faults(timeline.row_timelines(line)))
    assert faults["snapshot_swap.explicit_copies inductor 3, 1,048,576"] == "2.13.0-2.14.1"
    assert faults["aliasing.shift_clone inductor large"] == "2.13.0-2.14.1"
    assert not any(name.startswith("snapshot_swap.stack_buffer") for name in faults)


def test_a_patch_build_sits_beside_the_timeline_not_on_it(tmp_path):
    from tests.test_compare import PATCH, patched_history

    loaded = results.load(*patched_history(tmp_path))
    assert PATCH in [b.tag for b in loaded]
    (line,) = timeline.lines(loaded)
    assert _names(line.builds) == ["torch-2.13.0", "torch-2.14.1", "torch-2.15.0"]
    (flip,) = _row(loaded, EXPLICIT).flips
    assert (flip.before.name, flip.after.name) == ("torch-2.14.1", "torch-2.15.0")


def test_a_row_wrong_fixed_and_wrong_again_over_26_releases(long):
    (line,) = timeline.lines(long)
    assert len(line.builds) == 26 and line.name == "builds-long on vm"
    row = _row(long, EXPLICIT)
    assert row.ranges() == "2.1.0-2.3.1, 2.9.0-2.15.0"
    assert [s.state for s in row.segments] == ["wrong", "exact", "wrong"]
    fixed, broken = row.flips
    assert (fixed.kind, fixed.before.name, fixed.after.name) == ("fixed in", "torch-2.3.1",
                                                                 "torch-2.4.0")  # fmt: skip
    assert (broken.kind, broken.before.name, broken.after.name) == (
        "broken again in", "torch-2.8.0", "torch-2.9.0"
    )  # fmt: skip
    assert fixed.commits == (git_version("2.3.1"), git_version("2.4.0"))
    assert broken.commits == (git_version("2.8.0"), git_version("2.9.0"))
    assert broken.commit_range() == (
        f"upstream {git_version('2.8.0')[:8]}..{git_version('2.9.0')[:8]}"
    )
    assert (fixed.wrong_side.name, broken.wrong_side.name) == ("torch-2.3.1", "torch-2.9.0")
    assert fixed.passes == broken.passes == PASS
    large = _row(long, (*EXPLICIT[:3], 1048576))  # its attribution points to N=3's
    assert [flip.passes for flip in large.flips] == [PASS, PASS]
    assert row.since().name == "torch-2.9.0"
    assert row.since_text() == "2.9.0, broken again after 2.8.0 (also wrong 2.1.0-2.3.1)"
    faults = dict(timeline.faults(timeline.row_timelines(line)))
    assert faults["snapshot_swap.explicit_copies inductor 3, 1,048,576"] == (
        "2.1.0-2.3.1, 2.9.0-2.15.0"
    )


def test_each_flips_asv_find_window_holds_that_flip_alone(long, tmp_path):
    """The range each command names, walked as asv walks it (`git rev-list --first-parent`)
    on the ledger of builds-long.txt: the fix's from the first build to the last exact one,
    the break's from the first exact build to the newest."""
    ledger.build_ledger(builds.read(ROOT / "builds-long.txt"), tmp_path / "ledger",
                        ledger.branch_for(ROOT / "builds-long.txt"))  # fmt: skip
    names = {e.commit: e.name for e in ledger.read_ledger(tmp_path / "ledger")}
    fixed, broken = _row(long, EXPLICIT).flips
    walked = {}
    for flip in (fixed, broken):
        command = flip.find_command()
        assert command.endswith(f' "{PATTERN}"') and ("--invert" in command) == flip.fixed
        spec = command.split()[3 if flip.fixed else 2]
        git = ["git", "-C", str(tmp_path / "ledger"), "rev-list", "--first-parent", spec, "--"]
        listed = subprocess.run(git, capture_output=True, text=True, check=True).stdout.split()
        walked[flip.kind] = [names[commit].removeprefix("torch-") for commit in reversed(listed)]
    releases = [r.name.removeprefix("torch-") for r in long_history.releases()]
    assert walked["fixed in"] == releases[: releases.index("2.8.0") + 1]
    assert walked["broken again in"] == releases[releases.index("2.4.0") :]


def test_a_first_break_a_second_fix_and_builds_without_a_verdict(long):
    """A row exact on the first three releases is `broken in` 2.2.0 before its fix and its
    break again, and exact on the newest release `fixed again in` it; a skipped build inside
    a run neither flips nor breaks it, and one at a run's end moves the end to the build
    before it."""
    edited = copy.deepcopy(long)
    by_name = {build.name: build for build in edited}
    wrong = f"{results.CORRECTNESS}.track_wrong_elements"
    for name in ("torch-2.1.0", "torch-2.1.1", "torch-2.1.2", "torch-2.15.0"):
        by_name[name].values[wrong][EXPLICIT[1:]] = 0
    for name in ("torch-2.5.0", "torch-2.3.1"):
        by_name[name].values[wrong][EXPLICIT[1:]] = math.nan
        by_name[name].probe[EXPLICIT]["skipped"] = "a capability this release lacks"
    row = _row(edited, EXPLICIT)
    assert row.states[:3] == ("exact",) * 3 and row.states[7] == "skipped"
    assert row.ranges() == "2.2.0-2.3.0, 2.9.0-2.14.1"
    assert [(f.kind, f.before.name, f.after.name) for f in row.flips] == [
        ("broken in", "torch-2.1.2", "torch-2.2.0"),
        ("fixed in", "torch-2.3.0", "torch-2.4.0"),
        ("broken again in", "torch-2.8.0", "torch-2.9.0"),
        ("fixed again in", "torch-2.14.1", "torch-2.15.0"),
    ]
    assert row.flips[1].commits == (git_version("2.3.0"), git_version("2.4.0"))
    assert row.flips[0].find_command().startswith(".venv/bin/asv find builds-long/torch-2.3.0 ")
    assert " builds-long/torch-2.8.0..builds-long/torch-2.15.0 " in row.flips[3].find_command()
    assert not row.wrong_now() and row.since_text() == ""


def test_a_flip_without_an_upstream_commit_says_which_build_lacks_it(long):
    edited = copy.deepcopy(long)
    edited[15].identity.pop("torch_git_version")  # 2.8.0
    (_, broken) = _row(edited, EXPLICIT).flips
    assert broken.commits is None
    assert (
        broken.upstream()
        == broken.commit_range()
        == ("no upstream commit recorded for builds-long/torch-2.8.0")
    )


def test_the_report_lists_every_flip_with_its_commits_pass_and_bisect(recorded, long):
    text = report.render(long_history.both_lines(recorded))
    section = text.split("\n## Timeline\n", 1)[1].split("\n## ", 1)[0]
    lines = section.split("\n### ")
    assert lines[1].startswith("builds.txt on vm: 3 builds, torch-2.13.0 to torch-2.15.0\n")
    long_line = lines[2]
    assert long_line.startswith(
        "builds-long on vm: 26 builds, builds-long/torch-2.1.0 to builds-long/torch-2.15.0\n"
    )
    assert ("- snapshot_swap.explicit_copies inductor 3, 1,048,576: 2.1.0-2.3.1, 2.9.0-2.15.0"
            in long_line)  # fmt: skip
    flips = long_line.split("- snapshot_swap.explicit_copies inductor 3\n", 1)[1].splitlines()
    assert flips[0] == (
        f"  - fixed in 2.4.0 (after 2.3.1): upstream {git_version('2.3.1')[:8]}.."
        f"{git_version('2.4.0')[:8]}; pass on the wrong side (2.3.1): {PASS}; bisect it "
        f'alone: `.venv/bin/asv find --invert builds-long/torch-2.8.0 "{PATTERN}"`'
    )
    assert flips[1] == (
        f"  - broken again in 2.9.0 (after 2.8.0): upstream {git_version('2.8.0')[:8]}.."
        f"{git_version('2.9.0')[:8]}; pass on the wrong side (2.9.0): {PASS}; bisect it "
        "alone: `.venv/bin/asv find builds-long/torch-2.3.1..builds-long/torch-2.15.0 "
        f'"{PATTERN}"`'
    )
    older, newer = git_version("2.8.0"), git_version("2.9.0")
    assert (f"- builds-long/torch-2.8.0..builds-long/torch-2.9.0: https://github.com/pytorch/"
            f"pytorch/compare/{older}...{newer} (`git log --oneline {older}..{newer}` in a "
            "PyTorch checkout)") in long_line  # fmt: skip
    recorded_line = lines[1]
    assert "- snapshot_swap.explicit_copies inductor 3, 1,048,576: 2.13.0-2.14.1" in recorded_line
    assert "  - fixed in 2.15.0 (after 2.14.1): upstream 5c488690..d0f2af8b; " in recorded_line


def test_make_timeline_prints_each_faults_ranges(recorded, long, tmp_path, capsys):
    text = timeline.render(long_history.both_lines(recorded))
    assert ("builds-long on vm: 26 builds, builds-long/torch-2.1.0 to builds-long/torch-2.15.0\n"
            "  snapshot_swap.foreach_clones inductor 3, 1,048,576: 2.1.0-2.15.0\n"
            "  snapshot_swap.explicit_copies inductor 3, 1,048,576: 2.1.0-2.3.1, 2.9.0-2.15.0\n"
            ) in text  # fmt: skip
    assert timeline.main(["--results", str(RECORDED), "--ledger", str(tmp_path / "ledger")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("builds.txt on vm: 3 builds, torch-2.13.0 to torch-2.15.0\n"
                          "  snapshot_swap.foreach_clones inductor 3, 1,048,576: "
                          "2.13.0-2.15.0\n")  # fmt: skip
    assert "  snapshot_swap.explicit_copies inductor 3, 1,048,576: 2.13.0-2.14.1\n" in out


def test_make_timeline_runs_the_tool(venv):  # noqa: F811 - the fixture
    assert _called(venv, "timeline")["argv"] == ["-m", "tools.timeline"]


def test_a_builds_file_that_is_missing_is_named(tmp_path, capsys):
    missing = tmp_path / "nowhere.txt"
    args = ["--builds", str(missing), "--ledger", str(tmp_path / "ledger")]
    assert timeline.main(args) == 2
    assert f"{missing}: no such builds file" in capsys.readouterr().err


def test_each_build_is_compared_with_the_one_before_it_in_its_own_builds_file(recorded):
    """The recorded builds (builds.txt) among the 26 of builds-long.txt, by date: torch-2.13.0
    of builds.txt is the first of its line, compared with nothing (not with builds-long's
    2.12.1, a day older), in the matrix's marks and in the summary."""
    both = long_history.both_lines(recorded)
    against = {b.tag: c and c.tag for b, c in zip(both, results.compared_with(both))}
    assert against["torch-2.13.0"] is None
    assert against["torch-2.14.1"] == "torch-2.13.0"
    assert against["builds-long/torch-2.13.0"] == "builds-long/torch-2.12.1"
    text = summary.summary(both, ROOT / "results" / "report.md", None)
    first = text.split("torch-2.13.0 (torch 2.13.0+cpu): ", 1)[1].splitlines()
    assert first[1].startswith("  wrong: snapshot_swap.")  # its own list, not "the same as"
