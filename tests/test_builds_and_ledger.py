"""The builds file (every kind, clear errors) and the ledger (deterministic ids)."""

import datetime as dt
import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from tools import builds, ledger

ROOT = Path(__file__).resolve().parents[1]

EVERY_KIND = """
# comment line
release 2.14.1 date=2026-09-30
release 2.15.0 date=2026-10-28 index=https://download.pytorch.org/whl/cpu
nightly 2026-11-05
nightly 2026-11-06 series=2.17 name=n6
wheel /wheels/torch-2.16.0a0+git1234-cp311-cp311-linux_x86_64.whl name=pr-170001 date=2026-11-20
pip "torch==2.15.0 numpy<2" name=with-numpy date=2026-11-21   # trailing comment
"""


def test_every_kind_parses_to_pip_arguments():
    parsed = builds.parse(EVERY_KIND)
    assert [b.name for b in parsed] == [
        "torch-2.14.1", "torch-2.15.0", "nightly-2026-11-05", "n6", "pr-170001", "with-numpy",
    ]  # fmt: skip
    assert parsed[0].pip_args == ("torch==2.14.1",)
    assert parsed[1].pip_args == (
        "torch==2.15.0", "--index-url", "https://download.pytorch.org/whl/cpu",
    )  # fmt: skip
    assert parsed[2].pip_args == (
        "torch==2.16.0.dev20261105", "--pre", "--index-url", builds.NIGHTLY_INDEX,
    )  # fmt: skip
    assert parsed[2].date == dt.date(2026, 11, 5)
    assert parsed[3].pip_args[0] == "torch==2.17.0.dev20261106"
    assert parsed[4].pip_args == (
        "/wheels/torch-2.16.0a0+git1234-cp311-cp311-linux_x86_64.whl",
    )  # fmt: skip
    assert parsed[5].pip_args == ("torch==2.15.0", "numpy<2")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("relase 2.15.0 date=2026-10-28", "unknown kind 'relase'"),
        ("release date=2026-10-28", "needs what to install"),
        ("release 2.15 .0 date=2026-10-28", "not an option of the form key=value"),
        ("release latest date=2026-10-28", "not a release version"),
        ("release 2.15.0", "needs date="),
        ("release 2.15.0 date=28.10.2026", "not a date like"),
        ("release 2.15.0 date=2026-10-28 series=2.16", "takes no option 'series'"),
        ("nightly 2026-11-05", "needs series=2.X"),
        ("wheel /tmp/torch.tar.gz name=x date=2026-11-20", "not a wheel"),
        ("wheel /tmp/torch.whl date=2026-11-20", "needs name="),
        ('pip "torch==2.15.0 date=2026-11-20', "unbalanced quotes"),
        ("pip torch name=bad/name date=2026-11-20", "letters, digits"),
        ("release 2.15.0 date=2026-10-28 sha256=abc", "64 lowercase hex digits"),
        (f"pip torch name=x date=2026-11-20 sha256={'a' * 64}", "takes no option 'sha256'"),
    ],
)
def test_bad_lines_are_named_with_the_fix(line, message):
    with pytest.raises(builds.BuildsFileError, match=message) as caught:
        builds.parse(f"# header\n{line}\n", source="mine.txt")
    assert str(caught.value).startswith("mine.txt:2:")


def test_a_nightly_index_and_a_sha256_reach_the_ledger_only_when_given():
    sha = "0123456789abcdef" * 4
    plain, nightly, wheel = builds.parse(
        "release 2.15.0 date=2026-10-28\n"
        f"nightly 2026-11-05 index=file:///srv/simple sha256={sha}\n"
        f"wheel /w/torch.whl name=pr-1 date=2026-11-20 sha256={sha}\n"
    )
    assert nightly.pip_args == (
        "torch==2.16.0.dev20261105", "--pre", "--index-url", "file:///srv/simple",
    )  # fmt: skip
    assert nightly.as_json()["sha256"] == wheel.as_json()["sha256"] == sha
    # a line without sha256 stores what it stored before, so its ledger id does not change
    assert set(plain.as_json()) == {"name", "date", "kind", "spec", "pip_args"}


def test_order_and_names_are_checked():
    with pytest.raises(builds.BuildsFileError, match="older than torch-2.15.0"):
        builds.parse("release 2.15.0 date=2026-10-28\nrelease 2.14.1 date=2026-09-30\n")
    with pytest.raises(builds.BuildsFileError, match="already used on line 1"):
        builds.parse("release 2.15.0 date=2026-10-28\nrelease 2.15.0 date=2026-10-29\n")
    with pytest.raises(builds.BuildsFileError, match="lists no builds"):
        builds.parse("# nothing\n")


def test_the_shipped_builds_files_parse():
    default = builds.read(ROOT / "builds.txt")
    assert [b.name for b in default if b.kind == "release"] == [
        "torch-2.13.0",
        "torch-2.14.1",
        "torch-2.15.0",
    ]
    # the fix candidates of patches/, each on the release it targets, its diff as checked in
    patches = {b.name: (b.patch.base, b.patch.sha256) for b in default if b.kind == "patch"}
    assert set(patches) == {p.stem for p in (ROOT / "patches").glob("*.diff")}
    for name, (base, sha256) in patches.items():
        diff = (ROOT / "patches" / f"{name}.diff").read_bytes()
        assert base in ("torch-2.14.1", "torch-2.15.0")
        assert sha256 == hashlib.sha256(diff).hexdigest()
    long = builds.read(ROOT / "builds-long.txt")
    assert long[0].name == "torch-2.1.0" and long[-1].name == "torch-2.15.0"


def _ids(entries):
    return [(e.name, e.commit) for e in entries]


def test_same_file_gives_the_same_ids_anywhere(tmp_path):
    parsed = builds.read(ROOT / "builds.txt")
    first = ledger.build_ledger(parsed, tmp_path / "one")
    second = ledger.build_ledger(parsed, tmp_path / "two")
    again = ledger.build_ledger(parsed, tmp_path / "one")
    assert _ids(first) == _ids(second) == _ids(again)
    assert sorted(_ids(ledger.read_ledger(tmp_path / "two"))) == sorted(_ids(first))


def test_appending_a_build_keeps_earlier_ids_and_tags(tmp_path):
    text = (ROOT / "builds.txt").read_text()
    before = ledger.build_ledger(builds.parse(text, folder=ROOT), tmp_path / "l")
    after = ledger.build_ledger(
        builds.parse(text + "nightly 2026-11-05\n", folder=ROOT), tmp_path / "l"
    )
    assert _ids(after[:-1]) == _ids(before)
    assert after[-1].name == "nightly-2026-11-05"
    tags = subprocess.run(
        ["git", "-C", str(tmp_path / "l"), "tag", "--points-at", after[-1].commit],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert tags == ["nightly-2026-11-05"]


def test_commits_carry_the_build_dates(tmp_path):
    entries = ledger.build_ledger(builds.read(ROOT / "builds.txt"), tmp_path / "l")
    dates = subprocess.run(
        ["git", "-C", str(tmp_path / "l"), "log", "--format=%ad %cd", "--date=short", "main"],
        capture_output=True, text=True, check=True,
    ).stdout.split("\n")  # fmt: skip
    assert dates[0] == "2026-10-28 2026-10-28"
    assert entries[0].build["date"] == "2026-07-08"


def test_a_reinstall_that_installs_nothing_keeps_the_proven_wheel_and_install_time():
    from tools import install_build

    wheel = {"sha256": "ab" * 32, "url": "file:///w.whl", "version": "2.13.0+cpu"}
    earlier = {"torch_version": "2.13.0+cpu", "torch_wheel": wheel, "install_seconds": 15.3}
    kept = install_build._kept(earlier, {"torch_version": "2.13.0+cpu"})
    assert kept == {"torch_wheel": wheel, "install_seconds": 15.3}
    assert install_build._kept(earlier, {"torch_version": "2.14.1"}) == {}
    assert install_build._kept({}, {"torch_version": "x"}) == {}


@pytest.mark.parametrize(
    ("line", "installed", "problem"),
    [
        ("release 2.15.0 date=2026-10-28", "2.15.0+cu132", ""),
        ("release 2.15.0 date=2026-10-28", "2.14.1+cpu", "asked for torch 2.15.0, but 2.14.1+cpu"),
        ("nightly 2026-11-05 series=2.16", "2.16.0.dev20261105+cpu", ""),
        ("nightly 2026-11-05 series=2.16", "2.16.0.dev20261104+cpu",
         "asked for torch 2.16.0.dev20261105, but 2.16.0.dev20261104+cpu"),
        ("wheel /w/torch-2.16.0.dev20261105+cpu-py3-none-any.whl name=w date=2026-11-20",
         "2.16.0.dev20261105+cpu", ""),
        ("wheel /w/torch-2.16.0.dev20261105+cpu-py3-none-any.whl name=w date=2026-11-20",
         "2.16.0.dev20261105+cu128",
         "asked for torch 2.16.0.dev20261105+cpu, but 2.16.0.dev20261105+cu128"),
        ('pip "torch==2.13.0 numpy<2" name=p date=2026-11-21', "2.13.0+cpu", ""),
        ('pip "numpy<2" name=p date=2026-11-21', "2.13.0+cpu", ""),
    ],
)  # fmt: skip
def test_the_torch_that_imports_must_have_the_version_asked_for(line, installed, problem):
    """A release or `torch==` pin is its public version, a nightly's includes its dev date, a
    wheel file's is its full version; pip arguments that pin no torch ask for none."""
    from tools import install_build

    build = builds.parse(line)[0].as_json()
    found = install_build._version_problem(build, build["pip_args"], installed)
    assert found == (f"{problem} is installed" if problem else "")


def test_the_torch_that_imports_must_be_the_installed_distributions():
    from tools import install_build

    here = {"imported": "/env/site-packages/torch/__init__.py",
            "installed": "/env/site-packages/torch/__init__.py"}  # fmt: skip
    assert install_build._import_problem(here) == ""
    shadowed = {**here, "imported": "/project/torch/__init__.py"}
    assert install_build._import_problem(shadowed) == (
        "`import torch` imports /project/torch/__init__.py, not the installed distribution's "
        "/env/site-packages/torch/__init__.py"
    )


def test_an_install_record_that_cannot_be_read_stops_the_install_and_is_left_alone(
    tmp_path, monkeypatch, capsys
):
    from tools import install_build

    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "build.json").write_text(json.dumps(builds.parse(EVERY_KIND)[0].as_json()))
    record = tmp_path / "results" / "builds" / "m" / "c0ffee.json"
    record.parent.mkdir(parents=True)
    record.write_text('{"installed": true, "torch_vers')
    monkeypatch.setenv("ASV_COMMIT", "c0ffee")
    monkeypatch.setenv("WRITEBACK_MACHINE_NAME", "m")
    monkeypatch.setattr(install_build, "_pip", lambda *args: pytest.fail("pip ran"))
    args = ["--build-dir", str(checkout), "--results", str(tmp_path / "results")]
    assert install_build.main(args) == 1
    error = capsys.readouterr().err
    assert f"the install record {record} cannot be read" in error
    assert f"git checkout -- {record}" in error
    assert record.read_text() == '{"installed": true, "torch_vers'


@pytest.mark.parametrize(
    ("torch_version", "numpy"),
    [("2.1.0+cu121", "numpy==1.26.4"), ("2.2.2", "numpy==1.26.4"), ("2.3.0", "numpy==2.4.6"),
     ("2.16.0.dev20261105+cpu", "numpy==2.4.6")],
)  # fmt: skip
def test_a_release_built_against_numpy_1_gets_numpy_1_beside_it(torch_version, numpy):
    from tools import install_build

    groups = install_build.clients(torch_version)
    assert [a for group in groups for a in group if a.startswith("numpy")] == [numpy]
    assert [a for group in groups for a in group if not a.startswith("numpy")] == [
        a for group in install_build.CLIENTS for a in group if not a.startswith("numpy")
    ]


def test_the_clients_installed_are_those_of_the_torch_that_imports(tmp_path, monkeypatch):
    from tools import install_build

    checkout = tmp_path / "checkout"
    checkout.mkdir()
    build = builds.parse("release 2.1.0 date=2023-10-04")[0].as_json()
    (checkout / "build.json").write_text(json.dumps(build))
    found = {"identity": {"torch_version": "2.1.0+cu121", "torch_git_version": "7bcf7da3"}}
    monkeypatch.setattr(install_build, "_install", lambda *args: (None, {}, found))
    installed = []
    monkeypatch.setattr(install_build, "_pip", lambda command, args: installed.append(args) or "")
    monkeypatch.setenv("ASV_COMMIT", "c0ffee")
    monkeypatch.setenv("WRITEBACK_MACHINE_NAME", "m")
    assert install_build.main(["--build-dir", str(checkout), "--results",
                               str(tmp_path / "results")]) == 0  # fmt: skip
    assert installed == [list(group) for group in install_build.clients("2.1.0")]
    assert ["numpy==1.26.4", "cloudpickle==3.1.3", "pyvers==0.2.3"] in installed
