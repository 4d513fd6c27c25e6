"""The published site, as a person sees it: headless Chromium with no network.

A site is published from the results recorded by `make history` (tests/fixtures/history),
made self-contained by tools/offline_site.py, served on 127.0.0.1 and opened in Chromium,
which cannot resolve any other host. Two broken sites show that the check can fail: one
left with asv's CDN links, one whose scratch results are missing. Screenshots of a failing
page are kept in test-artifacts/.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools import builds, ledger, offline_site
from tools.site_browser import BENCHMARKS, Browser, Server, site_problems

ROOT = Path(__file__).resolve().parents[1]

RECORDED = ROOT / "tests" / "fixtures" / "history" / "results"
ARTIFACTS = ROOT / "test-artifacts"
pytestmark = pytest.mark.slow


def publish(tmp: Path, results: Path, self_contained: bool) -> Path:
    """`asv publish` of `results` (over the default ledger) into tmp/html."""
    ledger.build_ledger(builds.read(ROOT / "builds.txt"), tmp / "ledger")
    conf = json.loads((ROOT / "asv.conf.json").read_text())
    conf.update(
        repo=str(tmp / "ledger"),
        benchmark_dir=str(ROOT / "benchmarks"),
        results_dir=str(results),
        html_dir=str(tmp / "html"),
        env_dir=str(tmp / "env"),
    )
    (tmp / "asv.conf.json").write_text(json.dumps(conf))
    published = subprocess.run(
        [sys.executable, "-m", "asv", "publish", "--config", str(tmp / "asv.conf.json")],
        cwd=tmp, capture_output=True, text=True,
    )  # fmt: skip
    assert published.returncode == 0, published.stdout + published.stderr
    if self_contained:
        modules = offline_site.install_assets()
        assert modules is not None, "npm is needed to make the site self-contained"
        assert offline_site.vendor(tmp / "html", modules) == len(offline_site.CDN_FILES)
    return tmp / "html"


@pytest.fixture(scope="module")
def browser():
    opened = Browser()
    yield opened
    opened.close()


def _check(browser, html: Path, name: str) -> list[str]:
    server = Server(html)
    try:
        return site_problems(browser, server.url, ARTIFACTS / name)
    finally:
        server.close()


def test_the_site_works_offline(browser, tmp_path):
    html = publish(tmp_path, RECORDED, self_contained=True)
    index = json.loads((html / "index.json").read_text())
    assert {name: index["benchmarks"][name]["unit"] for name in BENCHMARKS} == BENCHMARKS
    assert "https://cdn" not in (html / "index.html").read_text()
    assert _check(browser, html, "offline") == []


def test_the_check_fails_for_asvs_cdn_links_without_network(browser, tmp_path):
    html = publish(tmp_path, RECORDED, self_contained=False)
    problems = _check(browser, html, "cdn")
    assert "the page says its external JavaScript dependencies failed to load" in problems
    assert (ARTIFACTS / "cdn" / "summarylist.png").stat().st_size > 0


def test_the_check_fails_when_scratch_results_are_missing(browser, tmp_path):
    results = tmp_path / "results"
    shutil.copytree(RECORDED, results)
    for path in (results / "vm").glob("*-*.json"):
        data = json.loads(path.read_text())
        data["results"].pop("snapshot_swap.Cost.track_scratch_bytes")
        path.write_text(json.dumps(data))
    html = publish(tmp_path, results, self_contained=True)
    problems = _check(browser, html, "missing")
    assert problems and all("scratch" in p for p in problems), problems


def test_open_time_reports_each_open_of_a_page_with_its_size_and_elements(tmp_path):
    """`python -m tools.site_browser --open-time PAGE`: one line per open, with the page's
    bytes and element count as Chromium counts them, and the load event's time in seconds."""
    page = tmp_path / "page.html"
    page.write_text("<!DOCTYPE html><html><head></head><body><p>a</p><p>b</p></body></html>")
    run = subprocess.run(
        [sys.executable, "-m", "tools.site_browser", "--open-time", str(page), "--times", "2"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 2
    for line in lines:
        assert line.startswith(f"{page}: {page.stat().st_size} bytes, 5 elements, opened from "
                               "file:// in "), line  # fmt: skip
        assert float(line.split(" in ")[1].split(" s ")[0]) > 0
    missing = subprocess.run(
        [sys.executable, "-m", "tools.site_browser", "--open-time", str(tmp_path / "none")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert missing.returncode == 2 and "no page at" in missing.stderr and not missing.stdout
