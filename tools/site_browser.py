"""Look at a published asv site the way a person does: in headless Chromium, with no network.

    python -m tools.site_browser [--html html]     (`make history` runs it when Chromium exists)
    python -m tools.site_browser --open-time [PAGE] [--times 5]

`--open-time` opens a page (the verdict page by default) from file:// in fresh offline
contexts and prints how long each open took to its load event, with the page's bytes and
element count: a figure to keep in a log (issue 29's goal: under 2 s), never to assert on.

`Browser` drives Debian's Chromium with Playwright (through its executable path). Every
host but 127.0.0.1 is unresolvable (`--host-resolver-rules`), so a page that still loads
scripts from a CDN fails here exactly as it fails on an offline machine. `site_problems`
returns what is wrong with a site, in words; an empty list means a person would see the
writeback benchmarks and the scratch graph with its unit.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import threading
from pathlib import Path

FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]  # fmt: skip

BENCHMARKS = {
    "snapshot_swap.Correctness.track_wrong_elements": "elements",
    "snapshot_swap.Correctness.track_moved_storages": "tensors",
    "snapshot_swap.Cost.time_warm_call": "seconds",
    "snapshot_swap.Cost.track_scratch_bytes": "bytes",
    "snapshot_swap.Cost.track_full_length_loops": "loops",
    "snapshot_swap.Cost.track_entrypoint_calls": "calls",
}
LOAD_FAILURE = "failed to load"


def chromium() -> str:
    """Debian's Chromium, installed with apt-get when missing (as CI's root can)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise RuntimeError(
            "the site test needs Chromium: install Debian's package (apt-get install chromium)"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", "chromium"]):
        result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1200)
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed: {result.stderr.strip()[-500:]}")
    return shutil.which("chromium")


class Server:
    """html/ served on 127.0.0.1 at a free port, in a thread."""

    def __init__(self, folder: Path):
        handler = functools.partial(_QuietHandler, directory=str(folder))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class Browser:
    """Debian's Chromium, headless, driven by Playwright (never a downloaded browser)."""

    def __init__(self):
        from playwright.sync_api import sync_playwright  # here: `make history` imports this module

        self.driver = sync_playwright().start()
        try:
            self.browser = self.driver.chromium.launch(executable_path=chromium(), args=FLAGS)
            self.page = self.browser.new_page(viewport={"width": 1280, "height": 900})
        except Exception:
            self.driver.stop()
            raise

    def open(self, url: str) -> None:
        self.page.goto("about:blank")
        self.page.goto(url)

    def evaluate(self, expression: str):
        return self.page.evaluate(expression)

    def wait_for(self, expression: str, seconds: float = 30) -> bool:
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            self.page.wait_for_function(expression, timeout=seconds * 1000, polling=50)
        except PlaywrightTimeout:
            return False
        return True

    def screenshot(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=path)
        return path

    def close(self) -> None:
        try:
            self.browser.close()
        finally:
            self.driver.stop()


TEXT = "document.body ? document.body.innerText : ''"
GRAPH = """(() => {
  const plot = $('#main-graph').data('plot');
  if (!plot) return null;
  const points = plot.getData().reduce(
    (n, s) => n + s.data.filter(p => p[1] !== null && !isNaN(p[1])).length, 0);
  return {label: String(plot.getAxes().yaxis.options.axisLabel), points: points};
})()"""


def site_problems(browser: Browser, url: str, screenshots: Path) -> list[str]:
    """What a person would find wrong: the benchmark list, then the scratch graph."""
    problems = []
    browser.open(url + "#/summarylist")
    browser.wait_for(f"({TEXT}).includes('snapshot_swap') || ({TEXT}).includes('{LOAD_FAILURE}')")
    text = browser.evaluate(TEXT) or ""
    if LOAD_FAILURE in text:
        problems.append("the page says its external JavaScript dependencies failed to load")
    problems += [f"benchmark list lacks {name}" for name in BENCHMARKS if name not in text]
    if problems:
        browser.screenshot(screenshots / "summarylist.png")
        return problems

    browser.open(url + "#snapshot_swap.Cost.track_scratch_bytes")
    if not browser.wait_for(f"typeof $ !== 'undefined' && ({GRAPH}) !== null"):
        problems.append("no graph rendered for snapshot_swap.Cost.track_scratch_bytes")
    else:
        graph = browser.evaluate(GRAPH)
        if graph["label"] != "bytes":
            problems.append(f"scratch graph's y axis is labelled {graph['label']!r}, not 'bytes'")
        if graph["points"] == 0:
            problems.append("scratch graph has no data points")
    if problems:
        browser.screenshot(screenshots / "scratch_graph.png")
    return problems


def open_times(browser, page: Path, times: int) -> list[dict]:
    """`page` opened `times` times from file:// by `browser` (Playwright's: `Browser().browser`,
    or a test's), each in a fresh context with no network and
    a 1280x900 window: seconds to the load event (as the test measures it), the
    browser's own milliseconds to DOMContentLoaded and to the end of the load event, and
    how many elements the page has."""
    import time

    opens = []
    for _ in range(times):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        try:
            context.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:")
                          else r.abort())  # fmt: skip
            tab = context.new_page()
            start = time.perf_counter()
            tab.goto(page.resolve().as_uri(), wait_until="load")
            seconds = time.perf_counter() - start
            timing = tab.evaluate(NAVIGATION)
        finally:
            context.close()
        opens.append({"seconds": seconds, "bytes": page.stat().st_size, **timing})
    return opens


NAVIGATION = """(() => {
  const n = performance.getEntriesByType('navigation')[0];
  return {dom_content_loaded_ms: n.domContentLoadedEventEnd, load_ms: n.loadEventEnd,
          elements: document.getElementsByTagName('*').length};
})()"""


def main(argv: list[str] | None = None, browser: Browser | None = None) -> int:
    """The check, printed; 1 when a person would find something wrong. `browser`: one already
    started (`make history` starts it while asv publishes), closed here."""
    import argparse
    import sys

    root = Path(__file__).resolve().parents[1]
    parser = argparse.ArgumentParser(
        prog="python -m tools.site_browser", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--html", type=Path, default=root / "html")
    parser.add_argument("--screenshots", type=Path, default=root / "test-artifacts" / "site")
    parser.add_argument(
        "--open-time",
        nargs="?",
        type=Path,
        metavar="PAGE",
        const=root / "html" / "writeback" / "index.html",
        help="time opening PAGE (default: the verdict page) instead",
    )
    parser.add_argument("--times", type=int, default=5, help="opens to time (default 5)")
    args = parser.parse_args(argv)
    if args.open_time is not None and not args.open_time.is_file():
        browser and browser.close()
        print(f"writeback: no page at {args.open_time}: write it with `make merge` or "
              "`.venv/bin/python -m tools.verdict_page`", file=sys.stderr)  # fmt: skip
        return 2
    browser = browser or Browser()
    if args.open_time is not None:
        try:
            opens = open_times(browser.browser, args.open_time, args.times)
        finally:
            browser.close()
        for o in opens:
            print(f"{args.open_time}: {o['bytes']:,} bytes, {o['elements']:,} elements, "
                  f"opened from file:// in {o['seconds']:.3f} s (DOMContentLoaded at "
                  f"{o['dom_content_loaded_ms']:.0f} ms, load done at "
                  f"{o['load_ms']:.0f} ms)")  # fmt: skip
        return 0
    try:
        server = Server(args.html)
        try:
            problems = site_problems(browser, server.url, args.screenshots)
        finally:
            server.close()
    finally:
        browser.close()
    for problem in problems:
        print(
            f"writeback: site check: {problem} (screenshot in {args.screenshots})", file=sys.stderr
        )
    if not problems:
        print("site check: Chromium, offline, shows every benchmark and the scratch graph in bytes")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
