"""Look at a published asv site the way a person does: in headless Chromium, with no network.

    python -m tools.site_browser [--html html]     (`make history` runs it when Chromium exists)

`Browser` drives Debian's Chromium over the DevTools protocol (websocket-client). Every
host but 127.0.0.1 is unresolvable (`--host-resolver-rules`), so a page that still loads
scripts from a CDN fails here exactly as it fails on an offline machine. `site_problems`
returns what is wrong with a site, in words; an empty list means a person would see the
writeback benchmarks and the scratch graph with its unit.
"""

from __future__ import annotations

import base64
import functools
import http.server
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import websocket

FLAGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--remote-allow-origins=*", "--window-size=1280,900",
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
    def __init__(self):
        self.profile = Path(tempfile.mkdtemp(prefix="writeback-chromium-"))
        self.process = subprocess.Popen(
            [chromium(), *FLAGS, "--remote-debugging-port=0",
             f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        port = self._port()
        pages = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list"))
        target = next(p for p in pages if p["type"] == "page")
        self.ws = websocket.create_connection(target["webSocketDebuggerUrl"], timeout=60)
        self.ids = itertools.count(1)

    def _port(self) -> int:
        active = self.profile / "DevToolsActivePort"
        for _ in range(300):
            if active.is_file() and active.read_text().strip():
                return int(active.read_text().split()[0])
            if self.process.poll() is not None:
                raise RuntimeError(f"Chromium exited at start (code {self.process.returncode})")
            time.sleep(0.1)
        raise RuntimeError("Chromium did not open its DevTools port within 30 s")

    def send(self, method: str, **params) -> dict:
        call_id = next(self.ids)
        self.ws.send(json.dumps({"id": call_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == call_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def open(self, url: str) -> None:
        self.send("Page.navigate", url="about:blank")
        self.send("Page.navigate", url=url)

    def evaluate(self, expression: str):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")

    def wait_for(self, expression: str, seconds: float = 30) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.evaluate(expression):
                return True
            time.sleep(0.25)
        return False

    def screenshot(self, path: Path) -> Path:
        data = self.send("Page.captureScreenshot", format="png")["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        self.ws.close()
        self.process.terminate()
        self.process.wait(timeout=30)
        shutil.rmtree(self.profile, ignore_errors=True)


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


def main(argv: list[str] | None = None) -> int:
    import argparse
    import sys

    root = Path(__file__).resolve().parents[1]
    parser = argparse.ArgumentParser(
        prog="python -m tools.site_browser", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--html", type=Path, default=root / "html")
    parser.add_argument("--screenshots", type=Path, default=root / "test-artifacts" / "site")
    args = parser.parse_args(argv)
    server, browser = Server(args.html), Browser()
    try:
        problems = site_problems(browser, server.url, args.screenshots)
    finally:
        browser.close()
        server.close()
    for problem in problems:
        print(
            f"writeback: site check: {problem} (screenshot in {args.screenshots})", file=sys.stderr
        )
    if not problems:
        print("site check: Chromium, offline, shows every benchmark and the scratch graph in bytes")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
