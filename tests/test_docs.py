"""The README and docs/ point at things that exist: every relative link and anchor resolves,
every `make` target and `python -m tools.X` the README names exists, and the README stays one
screen of commands and pointers (at most 250 lines)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def anchors(page: Path) -> set[str]:
    """GitHub's anchors for a Markdown page's headings (outside code blocks)."""
    found, fenced = set(), False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (heading := re.match(r"#{1,6} (.*)", line)):
            text = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower().replace("`", ""))
            found.add(text.replace(" ", "-"))
    return found


def links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    return [a or b for a, b in LINK.findall(text)]


def test_the_anchor_rule_is_githubs():
    page = ROOT / "docs" / "running.md"
    assert "sharding-and-merging-the-history-on-a-ci-matrix" in anchors(page)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_and_anchor_resolves(page):
    assert page.is_file(), page
    broken = []
    for target in links(page):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(f"{target}: no {resolved.relative_to(ROOT)}")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading #{anchor} in {resolved.relative_to(ROOT)}")
    assert not broken, f"{page.name}: " + "; ".join(broken)


def test_every_make_target_and_tool_the_readme_names_exists():
    readme = (ROOT / "README.md").read_text()
    makefile = (ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([a-z][\w-]*):", makefile, re.M))
    named = set(re.findall(r"\bmake ([a-z][\w-]*)", readme))
    assert named, "the README names no make target"
    assert named <= targets, f"README names make targets the Makefile lacks: {named - targets}"
    tools = set(re.findall(r"python -m tools\.(\w+)", readme))
    assert tools, "the README names no tool"
    missing = {t for t in tools if not (ROOT / "tools" / f"{t}.py").is_file()}
    assert not missing, f"README names tools that do not exist: {missing}"


def test_the_readme_is_one_screen_of_commands_and_pointers():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines: move detail into docs/"
    assert "make history" in lines[7] and "make test" in lines[8], "the two commands come first"
