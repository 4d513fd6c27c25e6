"""`.venv/bin/asv` is asv with this project's machine identity: `make` installs tools/asv over
the asv package's own entry point, so every asv command works as its users type it (the machine
file lives in .asv/, which plain asv would not find)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHIM = ROOT / ".venv" / "bin" / "asv"


@pytest.fixture
def shim():
    if not (ROOT / ".venv" / ".installed-test").is_file():
        pytest.skip("no .venv made by `make test` here: the shim is installed by make")
    return SHIM


def test_make_installs_the_wrapper_as_the_environments_asv(shim):
    assert shim.read_bytes() == (ROOT / "tools" / "asv").read_bytes()
    assert shim.stat().st_mode & 0o111


@pytest.mark.parametrize("where", ["root", "elsewhere"])
def test_asv_as_typed_runs_through_the_projects_machine_wrapper(shim, tmp_path, where):
    cwd = ROOT if where == "root" else tmp_path
    done = subprocess.run([str(shim), "machine", "--yes"], cwd=cwd, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "the machine is registered by this wrapper itself (.asv/asv-machine.json)" in done.stdout


def test_a_failed_setup_cache_prints_why_without_show_stderr(tmp_path):
    """asv says only "skipped (setup_cache failed)" unless asked for every benchmark's output;
    asv run through this project prints the end of the failed setup_cache's output (the 26
    releases' first shard lost a whole build to an error nobody could see)."""
    import json
    import sys

    bench = tmp_path / "benchmarks"
    bench.mkdir()
    (bench / "__init__.py").write_text("")
    (bench / "planted.py").write_text(
        "class Planted:\n"
        "    def setup_cache(self):\n"
        "        print('planted: the first line of a long output')\n"
        "        print('\\n'.join(f'planted line {n}' for n in range(100)))\n"
        "        raise ModuleNotFoundError(\"planted: No module named 'pkg_resources'\")\n"
        "    def track_nothing(self, cache):\n"
        "        return 1\n"
    )
    conf = json.loads((ROOT / "asv.conf.json").read_text())
    conf.update(repo=str(ROOT), benchmark_dir=str(bench), results_dir=str(tmp_path / "results"),
                html_dir=str(tmp_path / "html"), env_dir=str(tmp_path / "env"))  # fmt: skip
    (tmp_path / "asv.conf.json").write_text(json.dumps(conf))
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                            text=True, check=True).stdout.strip()  # fmt: skip
    script = (
        "import sys; from pathlib import Path; from tools import asv_project\n"
        "root = Path(sys.argv[1])\n"
        "asv_project.register('writeback-test', root)\n"
        "sys.exit(asv_project.run_asv(sys.argv[2:], root=root))\n"
    )
    run = [sys.executable, "-c", script, str(tmp_path), "run", "--config",
           str(tmp_path / "asv.conf.json"), "--environment", f"existing:{sys.executable}",
           "--set-commit-hash", commit, "--machine", "writeback-test", "--quick"]  # fmt: skip
    done = subprocess.run(run, cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**__import__("os").environ, "HOME": str(tmp_path)})  # fmt: skip
    output = done.stdout + done.stderr
    assert "skipped (setup_cache failed)" in output, output[-3000:]
    assert "setup_cache of planted" in output, output[-3000:]
    assert "planted: No module named 'pkg_resources'" in output, output[-3000:]
    # its end is printed, the whole of it kept in a file the message names
    assert "planted: the first line" not in output, output[-3000:]
    kept = re.search(r"the whole of it: (\S+\.log)\)", output)
    assert kept, output[-3000:]
    whole = Path(kept.group(1)).read_text()
    assert Path(kept.group(1)).parent == tmp_path / ".asv" / "logs"
    assert "planted: the first line of a long output" in whole
    assert "planted line 99" in whole and "No module named 'pkg_resources'" in whole
