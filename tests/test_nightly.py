"""A nightly proven here: a `nightly` line of a builds file resolves, installs, identifies
and measures a real torch wheel served from a PEP 503 index.

The nightly index is unreachable from these machines, so the test makes one: the local
torch 2.13.0 CPU wheel repacked (once per session, zip members copied as they are) as
2.16.0.dev20261105+cpu - file name, dist-info folder, METADATA, RECORD and torch/version.py
- whose `git_version` is a commit on the `nightly` branch of a small stand-in for upstream's
repository, made the way upstream cuts nightlies. The index is served over HTTP on
127.0.0.1. A builds file line `nightly 2026-11-05 series=2.16 index=<that index>` then goes
through the ledger, the install command and a one-benchmark suite in a real `asv run`; the
install record must hold the nightly's version, git_version and the sha256 of the very wheel
served. tools/upstream_range.py then ranges two nightlies by their main-branch commits.
"""

import base64
import copy
import csv
import functools
import hashlib
import http.server
import io
import json
import os
import struct
import subprocess
import sys
import threading
import urllib.parse
import zipfile
from pathlib import Path

import pytest

from tests.test_history_end_to_end import tools_env

ROOT = Path(__file__).resolve().parents[1]

SOURCE_WHEEL = Path("/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl")
SOURCE_VERSION = "2.13.0+cpu"
# torch's dependencies: the nightly index serves them beside torch, and so does ours, from
# this machine's local PEP 503 mirror (its projects link to ../../files/).
DEPENDENCY_MIRROR = Path("/opt/pypi")
NIGHTLY_VERSION = "2.16.0.dev20261105+cpu"
pytestmark = pytest.mark.slow

SUITE = """
class Nightly:
    def track_nightly_date(self):
        import torch

        return int(torch.__version__.split(".dev")[1].split("+")[0])

    track_nightly_date.unit = "date"
"""


def _git(repo: Path, *args: str, stdin: str | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "upstream", "GIT_AUTHOR_EMAIL": "u@invalid",
           "GIT_COMMITTER_NAME": "upstream", "GIT_COMMITTER_EMAIL": "u@invalid"}  # fmt: skip
    result = subprocess.run(["git", "-C", str(repo), *args], input=stdin, env=env,
                            capture_output=True, text=True, check=True)  # fmt: skip
    return result.stdout.strip()


def make_upstream(folder: Path) -> dict[str, str]:
    """A stand-in for upstream's repository: four main commits and, as upstream cuts them, two
    nightly commits (`commit-tree -p <previous nightly> <main>^{tree}`, message "DATE nightly
    release (<main>)"). Returns every commit by name."""
    repo = folder / "pytorch"
    repo.mkdir()
    _git(repo, "init", "--quiet", "--initial-branch", "main")
    commits = {}
    for number in range(1, 5):
        (repo / "change.txt").write_text(f"main commit {number}\n")
        _git(repo, "add", "change.txt")
        _git(repo, "commit", "--quiet", "-m", f"main commit {number}")
        commits[f"main{number}"] = _git(repo, "rev-parse", "HEAD")
    parent: list[str] = []
    for day, main in (("2026-11-05", "main2"), ("2026-11-06", "main4")):
        message = f"{day} nightly release ({commits[main]})"
        nightly = _git(repo, "commit-tree", *parent, f"{commits[main]}^{{tree}}", "-m", message)
        commits[f"nightly-{day}"], parent = nightly, ["-p", nightly]
    _git(repo, "update-ref", "refs/heads/nightly", parent[1])
    commits["repo"] = str(repo)
    return commits


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def _copy_member_raw(
    source: zipfile.ZipFile, info: zipfile.ZipInfo, target: zipfile.ZipFile, name: str
) -> None:
    """Copy one member's compressed bytes under `name`, without decompressing them
    (zipfile has no public raw copy; this writes the local header and keeps the central
    directory the way ZipFile.write does)."""
    source.fp.seek(info.header_offset)
    header = source.fp.read(zipfile.sizeFileHeader)
    name_length, extra_length = struct.unpack("<HH", header[26:30])
    source.fp.seek(info.header_offset + zipfile.sizeFileHeader + name_length + extra_length)
    copied = copy.copy(info)
    copied.filename = name
    copied.flag_bits &= ~0x08  # sizes and CRC in the local header: no data descriptor follows
    copied.header_offset = target.fp.tell()
    target.fp.write(copied.FileHeader())
    remaining = info.compress_size
    while remaining:
        chunk = source.fp.read(min(remaining, 1 << 20))
        target.fp.write(chunk)
        remaining -= len(chunk)
    target.filelist.append(copied)
    target.NameToInfo[name] = copied
    target.start_dir = target.fp.tell()


def repack_as_nightly(source: Path, folder: Path, version: str, git_version: str) -> Path:
    """`source` (a torch wheel) renamed as torch `version` with `git_version`: file name,
    dist-info folder, METADATA, torch/version.py and RECORD changed; every other member copied
    as it is, one at a time."""
    old_info, new_info = f"torch-{SOURCE_VERSION}.dist-info/", f"torch-{version}.dist-info/"
    target_path = folder / source.name.replace(f"torch-{SOURCE_VERSION}-", f"torch-{version}-")
    with zipfile.ZipFile(source) as wheel:
        changed = {
            "torch/version.py": _version_py(
                wheel.read("torch/version.py").decode(), version, git_version
            ),  # fmt: skip
            f"{new_info}METADATA": wheel.read(f"{old_info}METADATA")
            .decode()
            .replace(f"\nVersion: {SOURCE_VERSION}\n", f"\nVersion: {version}\n", 1),
        }
        assert f"Version: {version}" in changed[f"{new_info}METADATA"]
        changed[f"{new_info}RECORD"] = _record(
            wheel.read(f"{old_info}RECORD").decode(), old_info, new_info, changed
        )
        with zipfile.ZipFile(target_path, "w") as target:
            for info in wheel.infolist():
                name = info.filename.replace(old_info, new_info, 1)
                if name in changed:
                    target.writestr(name, changed[name], compress_type=zipfile.ZIP_DEFLATED)
                else:
                    _copy_member_raw(wheel, info, target, name)
    return target_path


def _version_py(text: str, version: str, git_version: str) -> str:
    lines = []
    for line in text.splitlines(keepends=True):
        if line.startswith("__version__ = "):
            line = f"__version__ = '{version}'\n"
        elif line.startswith("git_version = "):
            line = f"git_version = '{git_version}'\n"
        lines.append(line)
    assert f"'{version}'" in "".join(lines) and f"'{git_version}'" in "".join(lines)
    return "".join(lines)


def _record(text: str, old_info: str, new_info: str, changed: dict[str, str]) -> str:
    """RECORD with the dist-info paths renamed and the changed files' hashes and sizes."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for path, digest, size in csv.reader(io.StringIO(text)):
        path = path.replace(old_info, new_info, 1)
        if path == f"{new_info}RECORD":
            digest, size = "", ""
        elif path in changed:
            data = changed[path].encode()
            digest, size = _record_hash(data), str(len(data))
        writer.writerow([path, digest, size])
    return out.getvalue()


def _sha256(path: Path) -> str:
    with path.open("rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


@pytest.fixture(scope="session")
def upstream(tmp_path_factory):
    return make_upstream(tmp_path_factory.mktemp("upstream"))


@pytest.fixture(scope="session")
def nightly_wheel(tmp_path_factory, upstream):
    """The repacked nightly, once per session, in its index's project folder
    (`<root>/simple/torch/`): (its path, its sha256)."""
    if not SOURCE_WHEEL.is_file():
        pytest.skip(f"the local torch wheel {SOURCE_WHEEL} is not on this machine")
    project = tmp_path_factory.mktemp("index") / "simple" / "torch"
    project.mkdir(parents=True)
    wheel = repack_as_nightly(
        SOURCE_WHEEL, project, NIGHTLY_VERSION, upstream["nightly-2026-11-05"]
    )
    return wheel, _sha256(wheel)


@pytest.fixture(scope="session")
def nightly_index(nightly_wheel):
    """The PEP 503 index holding the nightly and its dependencies, served on 127.0.0.1 (a
    free port): its URL."""
    if not (DEPENDENCY_MIRROR / "simple" / "filelock").is_dir():
        pytest.skip(f"no local mirror of torch's dependencies at {DEPENDENCY_MIRROR}")
    wheel, sha256 = nightly_wheel
    project, root = wheel.parent, wheel.parents[2]
    (root / "files").symlink_to(DEPENDENCY_MIRROR / "files")
    for dependency in (DEPENDENCY_MIRROR / "simple").iterdir():
        if dependency.name != "torch":
            (root / "simple" / dependency.name).symlink_to(dependency)
    href = f"{urllib.parse.quote(wheel.name)}#sha256={sha256}"
    (project / "index.html").write_text(
        f'<!DOCTYPE html>\n<html><body>\n<a href="{href}">{wheel.name}</a>\n</body></html>\n'
    )
    (root / "simple" / "index.html").write_text(
        '<html><body><a href="torch/">torch</a></body></html>\n'
    )
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_the_repacked_wheel_is_a_nightly_with_a_consistent_record(nightly_wheel, upstream):
    wheel, _ = nightly_wheel
    assert wheel.name == f"torch-{NIGHTLY_VERSION}-cp311-cp311-manylinux_2_28_x86_64.whl"
    info = f"torch-{NIGHTLY_VERSION}.dist-info/"
    with zipfile.ZipFile(wheel) as archive:
        assert archive.testzip() is None
        names = archive.namelist()
        assert not [n for n in names if f"torch-{SOURCE_VERSION}.dist-info" in n]
        assert f"\nVersion: {NIGHTLY_VERSION}\n" in archive.read(f"{info}METADATA").decode()
        version_py = archive.read("torch/version.py").decode()
        assert f"__version__ = '{NIGHTLY_VERSION}'" in version_py
        assert f"git_version = '{upstream['nightly-2026-11-05']}'" in version_py
        rows = list(csv.reader(io.StringIO(archive.read(f"{info}RECORD").decode())))
        assert sorted(row[0] for row in rows) == sorted(names)
        for path in ("torch/version.py", f"{info}METADATA", "torch/__init__.py"):
            digest, size = next((row[1], row[2]) for row in rows if row[0] == path)
            data = archive.read(path)
            assert (digest, size) == (_record_hash(data), str(len(data))), path


@pytest.fixture(scope="module")
def nightly_history(tmp_path_factory, nightly_index):
    """A ledger of two nightlies from that index; `asv run` of the first with the real install
    command and a one-benchmark suite."""
    tmp = tmp_path_factory.mktemp("nightly-history")
    (tmp / "builds.txt").write_text(
        "# both nightlies live on a local index; only the first is on it and measured\n"
        f"nightly 2026-11-05 series=2.16 index={nightly_index}\n"
        f"nightly 2026-11-06 series=2.16 index={nightly_index}\n"
    )
    (tmp / "bench").mkdir()
    (tmp / "bench" / "__init__.py").write_text("")
    (tmp / "bench" / "nightly.py").write_text(SUITE)
    _run([sys.executable, "-m", "tools.ledger", "--builds", "builds.txt",
          "--ledger", "ledger"], cwd=tmp, env=tools_env())  # fmt: skip
    conf = json.loads((ROOT / "asv.conf.json").read_text())
    conf["install_command"] = [
        c.replace("in-dir={conf_dir}", f"in-dir={ROOT}") for c in conf["install_command"]
    ]
    conf.update(repo="ledger", benchmark_dir="bench", env_dir="env", results_dir="results",
                html_dir="html")  # fmt: skip
    (tmp / "asv.conf.json").write_text(json.dumps(conf))
    env = {**os.environ, "HOME": str(tmp), "WRITEBACK_MACHINE": "t"}
    asv = [sys.executable, "-m", "asv"]
    _run(asv + ["machine", "--yes", "--machine", "t"], cwd=tmp, env=env)
    run = _run(asv + ["run", "nightly-2026-11-05^!", "--machine", "t", "--show-stderr"], cwd=tmp,
               env=env, check=False)  # fmt: skip
    return tmp, run


def _run(args, cwd, env=None, check=True):
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)
    if check and result.returncode != 0:
        raise AssertionError(f"{args} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return result


def _commits(tmp: Path) -> dict[str, str]:
    from tools import ledger

    return {e.name: e.commit for e in ledger.read_ledger(tmp / "ledger")}


def test_a_nightly_line_installs_identifies_and_measures_the_nightly(
    nightly_history, nightly_wheel, nightly_index, upstream
):
    tmp, run = nightly_history
    commit = _commits(tmp)["nightly-2026-11-05"]
    record_path = tmp / "results" / "builds" / "t" / f"{commit}.json"
    assert record_path.is_file(), run.stdout[-4000:] + run.stderr[-4000:]
    record = json.loads(record_path.read_text())
    assert record["installed"], record.get("error")
    assert record["pip_args"] == [
        "torch==2.16.0.dev20261105", "--pre", "--index-url", nightly_index,
    ]  # fmt: skip
    assert record["torch_version"] == NIGHTLY_VERSION
    assert record["torch_git_version"] == upstream["nightly-2026-11-05"]
    wheel, sha256 = nightly_wheel
    assert record["torch_wheel"]["sha256"] == sha256
    assert record["torch_wheel"]["version"] == NIGHTLY_VERSION
    assert record["torch_wheel"]["url"].startswith(nightly_index)
    results = list((tmp / "results" / "t").glob(f"{commit[:8]}-*.json"))
    assert len(results) == 1, run.stdout[-4000:]
    data = json.loads(results[0].read_text())
    value = data["results"]["nightly.Nightly.track_nightly_date"][
        data["result_columns"].index("result")
    ]
    assert value == [20261105]


def _write_record(tmp: Path, commit: str, **fields) -> None:
    path = tmp / "results" / "builds" / "t" / f"{commit}.json"
    path.write_text(json.dumps({"installed": True, **fields}))


def _upstream_range(tmp: Path, *args: str):
    return _run([sys.executable, "-m", "tools.upstream_range", *args, "--ledger", "ledger",
                 "--results", "results"], cwd=tmp, env=tools_env())  # fmt: skip


@pytest.fixture(scope="module")
def two_nightlies(nightly_history, upstream):
    """The ledger with an install record for both nightlies: the first as installed (its
    git_version a nightly-branch commit), the second written here naming its main commit (a
    nightly's git_version may name either)."""
    tmp, _ = nightly_history
    _write_record(tmp, _commits(tmp)["nightly-2026-11-06"], name="nightly-2026-11-06",
                  torch_version="2.16.0.dev20261106+cpu",
                  torch_git_version=upstream["main4"])  # fmt: skip
    return tmp


def test_upstream_range_of_nightlies_runs_between_their_main_commits(two_nightlies, upstream):
    tmp = two_nightlies
    main2, main4, first = upstream["main2"], upstream["main4"], upstream["nightly-2026-11-05"]
    resolved = _upstream_range(tmp, "nightly-2026-11-05", "nightly-2026-11-06",
                               "--pytorch-repo", upstream["repo"]).stdout  # fmt: skip
    assert f"nightly-branch commit {first}, cut from main commit {main2}" in resolved
    assert f"upstream commit {main4} (a main-branch commit)" in resolved
    assert f"compare/{main2}...{main4}" in resolved
    assert f"git log --oneline {main2}..{main4}" in resolved
    listed = _git(Path(upstream["repo"]), "log", "--format=%s", f"{main2}..{main4}").splitlines()
    assert listed == ["main commit 4", "main commit 3"]

    unresolved = _upstream_range(tmp, "nightly-2026-11-05", "nightly-2026-11-06").stdout
    assert "a nightly: this may be its `nightly` branch commit" in unresolved
    assert "--pytorch-repo" in unresolved
    assert f"compare/{first}...{main4}" in unresolved


def test_upstream_range_says_how_to_fetch_a_nightly_it_cannot_find(two_nightlies, upstream,
                                                                   tmp_path):  # fmt: skip
    tmp = two_nightlies
    empty = tmp_path / "empty"
    empty.mkdir()
    _git(empty, "init", "--quiet")
    result = subprocess.run(
        [sys.executable, "-m", "tools.upstream_range", "nightly-2026-11-05",
         "nightly-2026-11-06", "--ledger", "ledger", "--results", "results",
         "--pytorch-repo", str(empty)],
        cwd=tmp, env=tools_env(), capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 2
    assert f"commit {upstream['nightly-2026-11-05']} is not in {empty}" in result.stderr
    assert "fetch origin main nightly" in result.stderr
