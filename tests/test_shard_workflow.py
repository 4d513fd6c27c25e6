"""The CI matrix (.github/workflows/history.yml) and the pieces it calls: the builds listed by
tools/builds.py, the shard split, the workflow checked by actionlint (pinned in
requirements/test.txt), every action pinned by commit SHA and every job's permissions."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tools import builds as builds_file

ROOT = Path(__file__).resolve().parents[1]

WORKFLOW = ROOT / ".github" / "workflows" / "history.yml"
PINNED = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(/[A-Za-z0-9_./-]+)?@[0-9a-f]{40}$")


def _actionlint() -> str:
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    found = shutil.which("actionlint", path=path)
    if found is None:
        pytest.fail("actionlint is not installed: requirements/test.txt pins it (make test "
                    "installs it into .venv/)")  # fmt: skip
    return found


def _lint(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([_actionlint(), "-no-color", str(path)], capture_output=True, text=True)


def _workflow(text: str | None = None) -> dict:
    return yaml.safe_load(text if text is not None else WORKFLOW.read_text())


def unpinned(workflow: dict) -> list[str]:
    """Every `uses:` of the workflow that is not owner/repo@<40-hex commit SHA>."""
    uses = [step["uses"] for job in workflow["jobs"].values() for step in job.get("steps", [])
            if "uses" in step]  # fmt: skip
    uses += [job["uses"] for job in workflow["jobs"].values() if "uses" in job]
    return [use for use in uses if not PINNED.match(use)]


def test_shard_workflow_passes_actionlint():
    result = _lint(WORKFLOW)
    assert result.returncode == 0, result.stdout + result.stderr


def test_shard_workflow_lint_catches_a_broken_workflow(tmp_path):
    broken = WORKFLOW.read_text().replace("${{ matrix.build }}", "${{ matrix.bulid }}")
    path = tmp_path / ".github" / "workflows" / "history.yml"
    path.parent.mkdir(parents=True)
    path.write_text(broken)
    result = _lint(path)
    assert result.returncode != 0 and "bulid" in result.stdout


def test_shard_workflow_pins_every_action_by_commit_sha():
    workflow = _workflow()
    assert unpinned(workflow) == []
    assert len([line for line in WORKFLOW.read_text().splitlines() if "uses:" in line]) >= 9
    tagged = WORKFLOW.read_text().replace("@11bd71901bbe5b1630ceea73d27597364c9af683", "@v4")
    assert unpinned(_workflow(tagged)) == ["actions/checkout@v4"] * 3


def test_shard_workflow_grants_each_job_only_what_it_needs():
    workflow = _workflow()
    assert workflow["permissions"] == {}
    granted = {name: job["permissions"] for name, job in workflow["jobs"].items()}
    assert granted == {
        "builds": {"contents": "read"},
        "measure": {"contents": "read"},
        "merge": {"contents": "read"},
        "deploy": {"pages": "write", "id-token": "write"},
    }


def test_shard_workflow_runs_one_job_per_listed_build_then_merges():
    jobs = _workflow()["jobs"]
    listing = " ".join(step.get("run", "") for step in jobs["builds"]["steps"])
    assert "python -m tools.builds --list-json" in listing
    assert jobs["measure"]["strategy"]["matrix"]["build"] == (
        "${{ fromJSON(needs.builds.outputs.names) }}"
    )
    commands = " ".join(step.get("run", "") for step in jobs["measure"]["steps"])
    assert 'make history BUILDS="$BUILDS" ONLY="$BUILD"' in commands
    assert "WRITEBACK_MACHINE" in commands
    merge = " ".join(step.get("run", "") for step in jobs["merge"]["steps"])
    assert "make merge" in merge
    assert [s["uses"].split("@")[0] for s in jobs["deploy"]["steps"]] == ["actions/deploy-pages"]


def test_shard_builds_are_listed_as_json_by_name():
    result = subprocess.run([sys.executable, "-m", "tools.builds", "--list-json", "builds.txt"],
                            cwd=ROOT, capture_output=True, text=True, check=True)  # fmt: skip
    names = json.loads(result.stdout)
    assert names == [build.name for build in builds_file.read(ROOT / "builds.txt")]
    assert names and len(set(names)) == len(names)


@pytest.mark.parametrize("count", [1, 2, 3, 5, 30])
def test_shard_slices_cover_every_build_once(count):
    items = list(range(26))
    slices = [builds_file.shard(items, index, count) for index in range(1, count + 1)]
    assert sorted(i for part in slices for i in part) == items
    assert max(map(len, slices)) - min(map(len, slices)) <= 1


@pytest.mark.parametrize("text", ["0/2", "3/2", "1", "a/b", "1/0", ""])
def test_shard_rejects_what_is_not_k_of_K(text):
    with pytest.raises(builds_file.BuildsFileError, match="is not k/K"):
        builds_file.parse_shard(text)


def test_shard_takes_every_kth_build_from_the_kth():
    assert builds_file.shard(list("abcdefg"), 2, 3) == ["b", "e"]


def test_shard_accepts_k_of_K():
    assert builds_file.parse_shard("2/3") == (2, 3)


def _step(job: str, step: str) -> dict:
    """The step of `job` with that id or name."""
    steps = _workflow()["jobs"][job]["steps"]
    return next(s for s in steps if step in (s.get("id"), s.get("name")))


def _run_step(step: dict, tmp_path: Path, python: Path, env: dict) -> tuple[int, str]:
    """Run a step's script as plain bash (no -e: the script must stop itself), with `python`
    first on PATH; its exit status and what it wrote to $GITHUB_OUTPUT."""
    script, output = tmp_path / "step.sh", tmp_path / "github_output"
    script.write_text(step["run"])
    output.write_text("")
    path = os.pathsep.join([str(python.parent), os.environ["PATH"]])
    env = {**os.environ, **env, "PATH": path, "RUNNER_TEMP": str(tmp_path),
           "GITHUB_OUTPUT": str(output)}  # fmt: skip
    run = subprocess.run(["bash", str(script)], cwd=ROOT, env=env, capture_output=True, text=True)
    return run.returncode, output.read_text()


def _python_named_python(tmp_path: Path, body: str | None = None) -> Path:
    """`python` in a folder of its own: this interpreter, or a script running `body`."""
    folder = tmp_path / "bin"
    folder.mkdir(parents=True)
    python = folder / "python"
    if body is None:
        python.symlink_to(sys.executable)
    else:
        python.write_text(f"#!/bin/sh\n{body}\n")
        python.chmod(0o755)
    return python


def test_the_build_list_fails_when_the_builds_tool_fails_or_lists_none(tmp_path):
    """An empty matrix would measure nothing and still merge and publish: the step that lists
    the builds fails instead, and hands the matrix nothing."""
    step = _step("builds", "list")
    python = _python_named_python(tmp_path)
    assert _run_step(step, tmp_path, python, {"BUILDS": "builds.txt"}) == (0, (
        f"names={json.dumps([build.name for build in builds_file.read(ROOT / 'builds.txt')])}\n"
    ))  # fmt: skip
    empty = tmp_path / "empty.txt"
    empty.write_text("# no builds\n")
    for builds in (empty, tmp_path / "missing.txt"):
        status, output = _run_step(step, tmp_path, python, {"BUILDS": str(builds)})
        assert status != 0 and output == "", (builds, status, output)
    silent = _python_named_python(tmp_path / "silent", "echo '[]'")  # a tool that lists nothing
    assert _run_step(step, tmp_path, silent, {"BUILDS": "builds.txt"}) == (1, "")


EXPRESSION = re.compile(r"\s*(?:(\|\||&&|==|!=|!|\(|\))|('[^']*')|([A-Za-z_][\w.-]*(?:\(\))?))")


def _evaluate(condition: str, context: dict) -> bool:
    """A job's or step's `if:` under `context` (github.ref, needs.<job>.result, cancelled()):
    the operators this workflow uses, and a failure for anything else."""
    text, python, at = condition.strip().removeprefix("${{").removesuffix("}}").strip(), [], 0
    words = {"||": " or ", "&&": " and ", "==": "==", "!=": "!=", "!": " not ", "(": "(", ")": ")"}
    while at < len(text):
        token = EXPRESSION.match(text, at)
        assert token, f"cannot read {text[at:]!r} of {condition!r}"
        operator, string, name = token.groups()
        python.append(words[operator] if operator else string or repr(context[name]))
        at = token.end()
    return eval("".join(python))  # only the operators, strings and context values read above


def test_the_site_is_deployed_only_when_every_build_was_measured():
    """A measure job that failed (one build missing from the history) stops the deploy, and the
    merge job fails saying why, so the run is red; a complete run on main deploys."""
    jobs = _workflow()["jobs"]
    assert set(jobs["deploy"]["needs"]) >= {"measure", "merge"}
    partial = _step("merge", "a partial history is not published")
    for measured in ("success", "failure", "cancelled", "skipped"):
        context = {
            "github.ref": "refs/heads/main", "cancelled()": False,
            "needs.builds.result": "success", "needs.measure.result": measured,
            "needs.merge.result": "success",
        }  # fmt: skip
        assert _evaluate(jobs["deploy"]["if"], context) == (measured == "success")
        assert _evaluate(partial["if"], context) == (measured != "success")
    run = subprocess.run(["bash", "-c", partial["run"]], env={**os.environ, **partial["env"],
                         "MEASURED": "failure"}, capture_output=True, text=True)  # fmt: skip
    assert run.returncode == 1 and "::error::not every build was measured" in run.stdout
