"""Patch builds: a pull request's diff applied to an installed release (tools/patch.py), as a
builds-file line (tools/builds.py) and on the ledger (tools/ledger.py, asv's view of it).

Diffs are written by `git diff` in a scratch copy of the upstream files; they are applied to
a scratch site-packages holding the wheel's files as pip leaves them (byte code, a dist-info
with RECORD and direct_url.json), which lies inside a git repository as asv's environments
lie inside the project's checkout. No torch is installed.
"""

import base64
import csv
import hashlib
import importlib.util
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.shipped import releases_text
from tests.test_wheel_sha256 import INDUCTOR_IMPORTS
from tools import asv_project, builds, ledger, patch

ROOT = Path(__file__).resolve().parents[1]

PATTERN = "".join(f"x{i} = {i}\n" for i in range(20))
UPSTREAM = {
    "torch/__init__.py": "__version__ = '2.15.0'\n",
    "torch/_inductor/pattern.py": PATTERN,
    "torch/_inductor/gone.py": "GONE = True\n",
    "torch/_inductor/codegen/cpp_prefix.h": "#pragma once\n",
    "test/inductor/test_pattern.py": "def test_x0():\n    pass\n",
    "docs/source/notes.rst": "Notes\n",
    ".github/labeler.yml": "inductor: []\n",
    "torch/csrc/autograd/engine.cpp": "int engine;\n",
    "aten/src/ATen/native/native_functions.yaml": "- func: add\n",
    "torch/_C/__init__.pyi.in": "def _add() -> None: ...\n",
    "CMakeLists.txt": "project(torch)\n",
    "tools/autograd/derivatives.yaml": "- name: add\n",
}
WHEEL = (
    "torch/__init__.py",
    "torch/_inductor/pattern.py",
    "torch/_inductor/gone.py",
    "torch/_inductor/codegen/cpp_prefix.h",
)
"""The files of UPSTREAM the wheel ships."""
FIX = {
    "torch/_inductor/pattern.py": PATTERN.replace("x1 = 1", "x1 = 100").replace(
        "x17 = 17", "x17 = 1700"
    )
}
"""A change in two hunks of one module."""


def _git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout


def git_diff(tmp: Path, changes: dict[str, str | None]) -> bytes:
    """What `git diff` writes for `changes` (path: new text, None: deleted) to UPSTREAM."""
    repo = tmp / "upstream"
    if not repo.exists():
        _write(repo, UPSTREAM)
        _git(repo, "init", "--quiet")
        _git(repo, "add", "-A")
        _git(repo, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "--quiet", "-m", "0")
    _git(repo, "checkout", "--quiet", "--", ".")
    _git(repo, "clean", "--quiet", "-fd")
    for path, text in changes.items():
        if text is None:
            (repo / path).unlink()
        else:
            _write(repo, {path: text})
    _git(repo, "add", "-A")
    diff = _git(repo, "diff", "--cached")
    _git(repo, "reset", "--quiet")
    return diff


def _write(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def installed(tmp: Path, changed: dict[str, str] | None = None) -> Path:
    """A site-packages where pip installed the wheel's UPSTREAM files (with `changed` texts),
    byte-compiled them, and wrote torch-2.15.0.dist-info; inside a git repository."""
    project = tmp / "project"
    site = project / ".asv" / "env" / "lib" / "site-packages"
    files = {path: UPSTREAM[path] for path in WHEEL} | (changed or {})
    _write(site, files)
    for path in files:
        if path.endswith(".py"):
            compiled = importlib.util.cache_from_source(str(site / path))
            subprocess.run([sys.executable, "-m", "py_compile", str(site / path)], check=True)
            Path(compiled.replace(".pyc", ".opt-1.pyc")).write_bytes(Path(compiled).read_bytes())
    info = "torch-2.15.0.dist-info"
    meta = {
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: torch\nVersion: 2.15.0\n",
        f"{info}/INSTALLER": "pip\n",
        f"{info}/direct_url.json": '{"archive_info": {}, "url": "file:///w/torch.whl"}',
    }
    _write(site, meta)
    rows = [
        [p, _record_hash((site / p).read_bytes()), str((site / p).stat().st_size)]
        for p in [*files, *meta]
    ] + [[f"{info}/RECORD", "", ""]]
    out = io.StringIO(newline="")
    csv.writer(out).writerows(rows)
    (site / info / "RECORD").write_text(out.getvalue(), newline="")
    _git(project, "init", "--quiet")
    return site


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _record(site: Path) -> dict[str, list[str]]:
    text = (site / "torch-2.15.0.dist-info" / "RECORD").read_text()
    return {row[0]: row for row in csv.reader(io.StringIO(text, newline=""))}


def test_a_good_diff_is_applied_recorded_and_its_byte_code_refreshed(tmp_path):
    fresh = "FRESH = 1\n"
    diff = git_diff(
        tmp_path, {**FIX, "torch/_inductor/fresh.py": fresh, "torch/_inductor/gone.py": None}
    )
    site = installed(tmp_path)
    done = patch.apply(diff, site, name="fix", base="torch-2.15.0")
    touched = ["torch/_inductor/fresh.py", "torch/_inductor/gone.py", "torch/_inductor/pattern.py"]
    assert (done.patched, done.skipped) == (touched, [])
    assert done.diff_sha256 == hashlib.sha256(diff).hexdigest()
    assert (site / "torch/_inductor/pattern.py").read_text() == FIX["torch/_inductor/pattern.py"]
    assert (site / "torch/_inductor/fresh.py").read_text() == fresh
    assert not (site / "torch/_inductor/gone.py").exists()
    marker = json.loads((site / "torch-2.15.0.dist-info" / patch.PATCH_RECORD).read_text())
    assert marker == {"name": "fix", "base": "torch-2.15.0", **done.as_json()}
    assert patch.applied(site) == marker
    # RECORD lists what is there, each with its hash, so that pip uninstalls exactly that
    record = _record(site)
    assert "torch/_inductor/gone.py" not in record
    for path, row in record.items():
        if row[1]:
            data = (site / path).read_bytes()
            assert row[1:] == [_record_hash(data), str(len(data))], path
    assert {"torch/_inductor/fresh.py", f"torch-2.15.0.dist-info/{patch.PATCH_RECORD}"} <= set(
        record
    )
    # byte code: the stale files gone, the patched module compiled from its new source
    cache = site / "torch/_inductor/__pycache__"
    assert sorted(p.name.split(".")[0] for p in cache.iterdir()) == ["fresh", "pattern"]
    (pyc,) = cache.glob("pattern.*.pyc")
    size = int.from_bytes(pyc.read_bytes()[12:16], "little")
    assert size == len(FIX["torch/_inductor/pattern.py"])


def test_files_outside_the_wheel_are_skipped_and_listed_and_the_rest_applied(tmp_path):
    diff = git_diff(
        tmp_path,
        {
            **FIX,
            "test/inductor/test_pattern.py": "def test_x1():\n    pass\n",
            "docs/source/notes.rst": "More notes\n",
            ".github/labeler.yml": "inductor: [x]\n",
        },
    )
    site = installed(tmp_path)
    done = patch.apply(diff, site)
    assert done.patched == ["torch/_inductor/pattern.py"]
    assert done.skipped == [
        ".github/labeler.yml",
        "docs/source/notes.rst",
        "test/inductor/test_pattern.py",
    ]
    assert (site / "torch/_inductor/pattern.py").read_text() == FIX["torch/_inductor/pattern.py"]
    assert not any((site / top).exists() for top in ("test", "docs", ".github"))
    only_tests = git_diff(tmp_path, {"test/inductor/test_pattern.py": "x = 1\n"})
    with pytest.raises(patch.PatchError, match="changes no file of the installed torch"):
        patch.check(only_tests, installed(tmp_path / "again"))


def test_a_diff_that_does_not_apply_names_the_file_and_hunk_and_changes_nothing(tmp_path):
    diff = git_diff(tmp_path, {**FIX, "torch/_inductor/fresh.py": "FRESH = 1\n"})
    local = {"torch/_inductor/pattern.py": PATTERN.replace("x18 = 18", "x18 = 'local'")}
    site = installed(tmp_path, local)
    before = snapshot(site.parent)
    with pytest.raises(patch.PatchError) as caught:
        patch.apply(diff, site)
    assert str(caught.value) == (
        "the diff does not apply: hunk #2 of torch/_inductor/pattern.py (@@ -15,6 +15,6 @@ "
        "x13 = 13) does not match the file; nothing was changed"
    )
    assert snapshot(site.parent) == before


@pytest.mark.parametrize(
    "path",
    [
        "torch/csrc/autograd/engine.cpp",
        "aten/src/ATen/native/native_functions.yaml",
        "torch/_C/__init__.pyi.in",
        "CMakeLists.txt",
        "tools/autograd/derivatives.yaml",
    ],
)
def test_a_diff_that_needs_a_source_build_is_refused_and_changes_nothing(tmp_path, path):
    diff = git_diff(tmp_path, {**FIX, path: UPSTREAM[path] + "changed\n"})
    site = installed(tmp_path)
    before = snapshot(site.parent)
    with pytest.raises(patch.PatchError) as caught:
        patch.apply(diff, site)
    assert str(caught.value) == (
        f"the patch needs a source build: it changes compiled or generated files ({path}), "
        "and a patch build applies Python files to a released wheel"
    )
    assert snapshot(site.parent) == before


def test_a_header_the_wheel_ships_as_it_is_is_patched(tmp_path):
    """Inductor's generated code includes torch/_inductor/codegen/*.h at run time: the wheel
    ships them as they are, so a change to one needs no build."""
    header = "torch/_inductor/codegen/cpp_prefix.h"
    diff = git_diff(tmp_path, {header: "#pragma once\n#define FIXED 1\n"})
    site = installed(tmp_path)
    assert patch.apply(diff, site).patched == [header]
    assert (site / header).read_text().endswith("#define FIXED 1\n")


def test_a_patched_torch_is_not_patched_again(tmp_path):
    site = installed(tmp_path)
    patch.apply(git_diff(tmp_path, FIX), site, name="fix")
    before = snapshot(site)
    other = git_diff(tmp_path, {"torch/__init__.py": "__version__ = 'x'\n"})
    with pytest.raises(patch.PatchError, match="already carries the patch fix"):
        patch.apply(other, site)
    assert snapshot(site) == before


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"just text\n", "not a diff as git writes it"),
        (b"diff --git torch/x.py torch/x.py\n--- torch/x.py\n+++ torch/x.py\n", "lacks git's a/"),
    ],
)
def test_what_is_not_a_diff_git_wrote_is_named(text, message):
    with pytest.raises(patch.PatchError, match=message):
        patch.parse(text.decode())


def test_the_command_line_checks_a_diff_and_writes_nothing(tmp_path, capsys):
    site = installed(tmp_path)
    (tmp_path / "fix.diff").write_bytes(git_diff(tmp_path, FIX))
    before = snapshot(site)
    assert patch.main([str(tmp_path / "fix.diff"), "--site", str(site)]) == 0
    assert "patched: torch/_inductor/pattern.py" in capsys.readouterr().out
    assert snapshot(site) == before


# The builds file ----------------------------------------------------------------------------

RELEASES = "release 2.14.1 date=2026-09-30\nrelease 2.15.0 date=2026-10-28 sha256={wheel}\n"
WHEEL_SHA = "ab" * 32


def _builds(tmp: Path, line: str, diff: bytes | None = None) -> list[builds.Build]:
    if diff is not None:
        (tmp / "patches").mkdir(exist_ok=True)
        (tmp / "patches" / "fix.diff").write_bytes(diff)
    path = tmp / "mine.txt"
    path.write_text(RELEASES.format(wheel=WHEEL_SHA) + line + "\n")
    return builds.read(path)


def test_a_patch_line_installs_its_base_and_carries_its_diff(tmp_path):
    diff = git_diff(tmp_path, FIX)
    sha = hashlib.sha256(diff).hexdigest()
    *_, base, fix = _builds(
        tmp_path, f"patch 2.15.0 diff=patches/fix.diff name=fix pr=198132 sha256={sha}", diff
    )
    assert (fix.kind, fix.pip_args, fix.date, fix.sha256) == (
        "patch",
        base.pip_args,
        base.date,
        WHEEL_SHA,
    )
    assert fix.patch == builds.Patch("torch-2.15.0", "patches/fix.diff", sha, diff, 198132)
    assert fix.as_json()["patch"] == {
        "base": "torch-2.15.0",
        "diff": "patches/fix.diff",
        "diff_sha256": sha,
        "pr": 198132,
    }
    assert fix.as_json()["sha256"] == WHEEL_SHA  # the base's wheel, checked as its line says


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "patch 2.13.0 diff=patches/fix.diff name=fix",
            "`patch 2.13.0` needs a `release 2.13.0` line above it in this file",
        ),
        ("patch 2.15.0 diff=patches/none.diff name=fix", "none.diff: no such file"),
        ("patch 2.15.0 diff=patches/fix.diff", "`patch` needs name="),
        ("patch 2.15.0 name=fix", "`patch` needs diff="),
        (
            f"patch 2.15.0 diff=patches/fix.diff name=fix sha256={'0' * 64}",
            f"has sha256 [0-9a-f]{{64}}, the line says sha256={'0' * 64}: the diff changed",
        ),
        ("patch 2.15.0 diff=patches/fix.diff name=fix pr=PR12", "pr='PR12' must be a pull request"),
        (
            "patch 2.15.0 diff=patches/fix.diff name=fix date=2026-10-01",
            r"fix \(2026-10-01\) is older than its base torch-2.15.0",
        ),
        ("patch 2.15.0 diff=patches/fix.diff name=fix index=x", "takes no option 'index'"),
    ],
)
def test_bad_patch_lines_are_named_with_the_fix(tmp_path, line, message):
    with pytest.raises(builds.BuildsFileError, match=message) as caught:
        _builds(tmp_path, line, git_diff(tmp_path, FIX))
    assert str(caught.value).startswith(f"{tmp_path / 'mine.txt'}:3:")


def test_a_patch_line_whose_file_is_not_a_git_diff_is_named(tmp_path):
    with pytest.raises(builds.BuildsFileError, match="fix.diff: it is not a diff as git writes"):
        _builds(tmp_path, "patch 2.15.0 diff=patches/fix.diff name=fix", b"not a diff\n")


def test_a_patch_stands_outside_the_timeline_order(tmp_path):
    """A patch of 2.14.1 dated after 2.15.0 may stand between them; the next release is
    checked against the release above it, not against the patch."""
    (tmp_path / "fix.diff").write_bytes(git_diff(tmp_path, FIX))
    parsed = builds.parse(
        "release 2.14.1 date=2026-09-30\npatch 2.14.1 diff=fix.diff name=fix date=2026-11-20\n"
        "release 2.15.0 date=2026-10-28\n",
        folder=tmp_path,
    )
    assert [b.name for b in parsed] == ["torch-2.14.1", "fix", "torch-2.15.0"]
    with pytest.raises(builds.BuildsFileError, match="older than torch-2.14.1"):
        builds.parse(
            "release 2.14.1 date=2026-09-30\npatch 2.14.1 diff=fix.diff name=fix\n"
            "release 2.14.0 date=2026-09-01\n",
            folder=tmp_path,
        )


# The ledger ---------------------------------------------------------------------------------

PATCHED = releases_text() + "patch 2.14.1 diff=fix.diff name=fix pr=198132\n"


def _ledger_of(tmp: Path, text: str, diff: bytes) -> list[ledger.Entry]:
    (tmp / "fix.diff").write_bytes(diff)
    return ledger.build_ledger(builds.parse(text, folder=tmp), tmp / "ledger")


def _ids(entries):
    return [(e.name, e.commit) for e in entries]


def test_a_patch_forks_from_its_base_and_leaves_the_timeline_as_it_was(tmp_path):
    diff = git_diff(tmp_path, FIX)
    released = ledger.build_ledger(builds.parse(releases_text()), tmp_path / "released")
    entries = _ledger_of(tmp_path, PATCHED, diff)
    repo = tmp_path / "ledger"
    assert _ids(entries[:3]) == _ids(released)
    fix, base = entries[3], entries[1]
    assert (fix.name, fix.tag, fix.asv_branch) == ("fix", "fix", "patch/main/fix")
    assert _git(repo, "rev-parse", "fix^", "patch/main/fix", "main").decode().split() == [
        base.commit,
        fix.commit,
        released[-1].commit,
    ]
    assert _git(repo, "show", "fix:patch.diff") == diff
    assert ledger.branches(repo) == ["main"]
    assert ledger.patch_branches(repo) == ["patch/main/fix"]
    read = ledger.read_ledger(repo)
    assert [(e.name, e.branch) for e in read] == [
        ("torch-2.13.0", "main"),
        ("torch-2.14.1", "main"),
        ("fix", "main"),
        ("torch-2.15.0", "main"),
    ]
    assert read[2].patch == {
        "base": "torch-2.14.1",
        "diff": "fix.diff",
        "diff_sha256": hashlib.sha256(diff).hexdigest(),
        "pr": 198132,
    }


def test_asv_never_steps_through_a_patch_on_the_timeline_and_graphs_it_as_a_branch(tmp_path):
    from asv.config import Config
    from asv.plugins.git import Git

    entries = {e.name: e.commit for e in _ledger_of(tmp_path, PATCHED, git_diff(tmp_path, FIX))}
    repo = Git(str(tmp_path / "ledger"), str(tmp_path / "mirror"))
    timeline = repo.get_hashes_from_range("torch-2.13.0..torch-2.15.0")  # as `asv find` walks
    assert timeline == [entries["torch-2.15.0"], entries["torch-2.14.1"]]
    assert repo.get_branch_commits("main") == [
        entries[n] for n in ("torch-2.15.0", "torch-2.14.1", "torch-2.13.0")
    ]
    assert repo.get_branch_commits("patch/main/fix") == [
        entries[n] for n in ("fix", "torch-2.14.1", "torch-2.13.0")
    ]
    conf = json.loads((ROOT / "asv.conf.json").read_text()) | {"repo": str(tmp_path / "ledger")}
    assert asv_project.with_patch_branches(Config.from_json(conf)).branches == [
        "main",
        "patch/main/fix",
    ]


def test_a_new_diff_moves_only_its_patch_and_a_removed_line_its_branch(tmp_path):
    first = _ledger_of(tmp_path, PATCHED, git_diff(tmp_path, FIX))
    second = _ledger_of(tmp_path, PATCHED, git_diff(tmp_path, {"torch/__init__.py": "x = 1\n"}))
    assert _ids(second[:3]) == _ids(first[:3]) and second[3].commit != first[3].commit
    repo = tmp_path / "ledger"
    assert _git(repo, "rev-parse", "fix").decode().strip() == second[3].commit
    ledger.build_ledger(builds.parse(releases_text()), repo)
    assert ledger.patch_branches(repo) == []
    assert "fix" not in _git(repo, "tag", "--list").decode().split()


# The install command ------------------------------------------------------------------------

TORCH_FILES = {
    "torch/__init__.py": "from . import version\nfrom .version import __version__\n",
    "torch/version.py": "__version__ = '2.15.0'\ngit_version = 'd0f2af8b' * 5\ncuda = None\n",
    "torch/_inductor/__init__.py": "",
    "torch/_inductor/pattern.py": PATTERN,
    **INDUCTOR_IMPORTS,
}
"""A stand-in for the torch 2.15.0 wheel: what tools/install_build.py reads (its identity, and
`torch.utils.cpp_extension`, which Inductor's C++ compile imports), and a module."""


@pytest.fixture(scope="module")
def environment(tmp_path_factory):
    """A throwaway environment and a file:// index serving the stand-in torch wheel (pip's
    index for every install there, so the client libraries fail fast, as they may)."""
    from tests.test_history_end_to_end import write_wheel
    from tests.test_wheel_sha256 import _served

    tmp = tmp_path_factory.mktemp("patch-env")
    subprocess.run([sys.executable, "-m", "venv", str(tmp / "venv")], check=True)
    (tmp / "wheels").mkdir()
    index = _served(tmp / "index", write_wheel(tmp / "wheels", "torch", "2.15.0", TORCH_FILES))
    return tmp / "venv" / "bin" / "python", index


def _install(
    environment, tmp: Path, entry: ledger.Entry
) -> tuple[subprocess.CompletedProcess, dict]:
    """tools/install_build.py in the environment on asv's checkout of `entry`: (the run, its
    install record)."""
    python, index = environment
    checkout = tmp / "checkouts" / entry.commit
    if not checkout.exists():
        checkout.mkdir(parents=True)
        _git(tmp / "ledger", "--work-tree", str(checkout), "checkout", entry.commit, "--", ".")
    env = {
        **os.environ,
        "ASV_COMMIT": entry.commit,
        "WRITEBACK_MACHINE": "t",
        "PIP_INDEX_URL": index,
    }
    run = subprocess.run(
        [
            python,
            "-m",
            "tools.install_build",
            "--build-dir",
            str(checkout),
            "--results",
            str(tmp / "results"),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    record = tmp / "results" / "builds" / "t" / f"{entry.commit}.json"
    return run, json.loads(record.read_text())


def _value(environment, name: str) -> str:
    python, _ = environment
    code = f"import torch._inductor.pattern as p; print(p.{name})"
    return subprocess.run([python, "-c", code], capture_output=True, text=True).stdout.strip()


@pytest.mark.slow
def test_the_install_command_applies_a_patch_and_restores_the_release_after_it(
    environment, tmp_path
):
    diff = git_diff(tmp_path, {**FIX, "test/inductor/test_pattern.py": "x = 1\n"})
    (tmp_path / "fix.diff").write_bytes(diff)
    # the same fix written against another version of the file: its second hunk's context
    (tmp_path / "stale.diff").write_bytes(diff.replace(b" x16 = 16\n", b" x16 = 'other'\n"))
    release, fix, broken = ledger.build_ledger(
        builds.parse(
            "release 2.15.0 date=2026-10-28\npatch 2.15.0 diff=fix.diff name=fix pr=198132\n"
            "patch 2.15.0 diff=stale.diff name=stale\n",
            folder=tmp_path,
        ),
        tmp_path / "ledger",
    )

    run, first = _install(environment, tmp_path, release)
    assert first["installed"], run.stderr
    assert "patch" not in first and "torch_patch" not in first
    run, record = _install(environment, tmp_path, fix)
    assert record["installed"], run.stderr
    sha = hashlib.sha256(diff).hexdigest()
    assert record["patch"] == {
        "base": "torch-2.15.0",
        "diff": "fix.diff",
        "diff_sha256": sha,
        "pr": 198132,
        "patched": ["torch/_inductor/pattern.py"],
        "skipped": ["test/inductor/test_pattern.py"],
    }
    assert record["torch_patch"] == sha and record["torch_version"] == "2.15.0"
    assert (_value(environment, "x1"), _value(environment, "x17")) == ("100", "1700")

    path = tmp_path / "results" / "builds" / "t" / f"{fix.commit}.json"
    written = path.read_bytes()
    run, _ = _install(environment, tmp_path, fix)  # asv installs a build again: the same torch
    assert "carries this patch, as applied" in run.stdout, run.stdout + run.stderr
    assert path.read_bytes() == written
    assert _value(environment, "x1") == "100"

    run, again = _install(environment, tmp_path, release)  # pip would keep the patched 2.15.0
    assert "first: it carries the patch fix" in run.stdout
    assert again == first and _value(environment, "x1") == "1", run.stdout + run.stderr
    run, failed = _install(environment, tmp_path, broken)
    assert run.returncode == 1 and failed["installed"] is False
    assert failed["error"] == (
        "the diff does not apply: hunk #2 of torch/_inductor/pattern.py (@@ -15,6 +15,6 @@ "
        "x13 = 13) does not match the file; nothing was changed"
    )
    assert _value(environment, "x1") == "1"


def test_asv_publish_graphs_a_patch_as_its_own_branch_off_the_timeline(tmp_path):
    """`asv publish` (through tools/asv_project.py) of the recorded history with a patch of
    2.14.1 (tests/test_compare.py): the timeline's graphs leave the patch out, the patch's
    branch is the timeline up to its base, then the patch."""
    from tests.test_compare import patched_history

    results_dir, ledger_path = patched_history(tmp_path)
    conf = json.loads((ROOT / "asv.conf.json").read_text())
    conf.update(repo=str(ledger_path), benchmark_dir=str(ROOT / "benchmarks"),
                results_dir=str(results_dir), html_dir=str(tmp_path / "html"),
                env_dir=str(tmp_path / "env"))  # fmt: skip
    (tmp_path / "asv.conf.json").write_text(json.dumps(conf))
    assert asv_project.run_asv(["publish", "--config", str(tmp_path / "asv.conf.json")]) == 0
    index = json.loads((tmp_path / "html" / "index.json").read_text())
    assert index["params"]["branch"] == ["main", "patch/main/fix-copy"]
    revision = {commit: int(r) for r, commit in index["revision_to_hash"].items()}
    tags = {e.tag: revision[e.commit] for e in ledger.read_ledger(ledger_path)}
    graphs = tmp_path / "html" / "graphs"
    drawn = {
        path.relative_to(graphs).parts[1]: [point[0] for point in json.loads(path.read_text())]
        for path in graphs.glob("*/branch-*/**/snapshot_swap.Cost.track_scratch_bytes.json")
    }
    assert drawn == {
        "branch-main": [tags[t] for t in ("torch-2.13.0", "torch-2.14.1", "torch-2.15.0")],
        "branch-patch_main_fix-copy": [
            tags[t] for t in ("torch-2.13.0", "torch-2.14.1", "fix-copy")
        ],
    }


PROBE_SUITE = """
class Probe:
    def track_value(self):
        try:
            from torch import _writeback_probe
        except ImportError:
            return 0
        return _writeback_probe.VALUE

    track_value.unit = "value"
"""


@pytest.mark.slow
def test_asv_measures_a_patch_build_and_the_release_after_it_as_released(tmp_path):
    """asv runs the real install command on the ledger's commits in one environment, the
    local torch 2.13.0: the patch build (a new module under torch/) measures its patch, the
    build after it a pristine torch again."""
    from tests.test_history_end_to_end import _run, _value, toy_project

    (tmp_path / "probe.diff").write_bytes(
        git_diff(tmp_path, {"torch/_writeback_probe.py": "VALUE = 7\n"})
    )
    (tmp_path / "builds.txt").write_text(
        "release 2.13.0 date=2026-01-01\npatch 2.13.0 diff=probe.diff name=probe\n"
        'pip "torch==2.13.0" name=after date=2026-01-02\n'
    )
    env, asv = toy_project(tmp_path, PROBE_SUITE)
    commits = {e.name: e.commit for e in ledger.read_ledger(tmp_path / "ledger")}
    (tmp_path / "hashes").write_text("".join(f"{commits[n]}\n" for n in ("torch-2.13.0", "probe",
                                                                          "after")))  # fmt: skip
    run = _run(asv + ["run", f"HASHFILE:{tmp_path / 'hashes'}", "--machine", "t"], cwd=tmp_path,
               env=env, check=False)  # fmt: skip
    values = [_value(tmp_path, commits[n]) for n in ("torch-2.13.0", "probe", "after")]
    assert values == [0, 7, 0], run.stdout[-4000:] + run.stderr[-4000:]
    record = json.loads((tmp_path / "results/builds/t" / f"{commits['probe']}.json").read_text())
    assert record["patch"]["patched"] == ["torch/_writeback_probe.py"]
    assert record["torch_version"] == "2.13.0+cpu" and record["torch_patch"]
