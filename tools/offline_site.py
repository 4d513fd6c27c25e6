"""Make asv's published site work without internet: serve its JavaScript and CSS from html/.

    python -m tools.offline_site [--html html]

asv 0.6.6 writes an index.html that loads jQuery, flot and its plugins, stupidtable,
blueimp-md5 and Bootstrap from public CDNs; offline (lab and CI networks, an archived
artifact) the page shows only "One or more external (JavaScript) dependencies of airspeed
velocity failed to load" (asv issue 669). This installs the same packages, pinned in
site/package.json and site/package-lock.json, with npm into .asv/site-assets, copies the
files into html/vendor/, and points index.html at them. Where npm is missing it says so and
leaves the CDN links.

stupidtable is the one version change: cdnjs serves 1.0.1, the npm registry has only
`stupid-table-plugin` 1.1.3 (the same plugin and API). flot 0.8.3 comes unminified from npm.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT / ".asv" / "site-assets"

# The CDN address in asv 0.6.6's index.html -> the file in node_modules that replaces it.
CDN_FILES = {
    "https://code.jquery.com/jquery-3.3.1.min.js": "jquery/dist/jquery.min.js",
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.min.js": "flot/jquery.flot.js",
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.time.min.js":
        "flot/jquery.flot.time.js",
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.selection.min.js":
        "flot/jquery.flot.selection.js",
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.categories.min.js":
        "flot/jquery.flot.categories.js",
    "https://cdn.jsdelivr.net/npm/flot-orderbars@1.0.0/js/jquery.flot.orderBars.js":
        "flot-orderbars/js/jquery.flot.orderBars.js",
    "https://cdnjs.cloudflare.com/ajax/libs/stupidtable/1.0.1/stupidtable.min.js":
        "stupid-table-plugin/stupidtable.min.js",
    "https://cdnjs.cloudflare.com/ajax/libs/blueimp-md5/2.19.0/js/md5.min.js":
        "blueimp-md5/js/md5.min.js",
    "https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/js/bootstrap.min.js":
        "bootstrap/dist/js/bootstrap.min.js",
    "https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/css/bootstrap.min.css":
        "bootstrap/dist/css/bootstrap.min.css",
}  # fmt: skip
EXTRA_DIRS = ("bootstrap/dist/fonts",)  # bootstrap.min.css loads ../fonts/ relative to itself
_CDN_TAG = re.compile(r'<(script|link)\b[^>]*(?:src|href)="(https://[^"]+)"[^>]*>')


class SiteError(RuntimeError):
    pass


def install_assets(dest: Path = ASSETS) -> Path | None:
    """npm-install the pinned packages and return node_modules; None (said why) without npm."""
    npm = shutil.which("npm")
    if npm is None:
        print("writeback: npm not found, so html/ keeps asv's CDN links and needs internet to "
              "show graphs. Install Node.js and npm (Debian/Ubuntu: apt-get install npm) and "
              "run `make history` again to make it self-contained.", file=sys.stderr)  # fmt: skip
        return None
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy2(ROOT / "site" / name, dest / name)
    modules = dest / "node_modules"
    if not _installed(modules):
        result = subprocess.run(
            [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
            cwd=dest, capture_output=True, text=True,
        )  # fmt: skip
        if result.returncode != 0:
            last = (result.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise SiteError(f"npm ci of the site assets failed: {last}")
    return modules


def vendor(html: Path, modules: Path) -> int:
    """Copy the assets into html/vendor/ and point index.html at them; return how many."""
    index = html / "index.html"
    text = index.read_text()
    vendor_dir = html / "vendor"
    for relative in list(CDN_FILES.values()) + list(EXTRA_DIRS):
        source, target = modules / relative, vendor_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)
        else:
            shutil.copy2(source, target)

    replaced = 0

    def local(match: re.Match) -> str:
        nonlocal replaced
        tag, url = match.group(0), match.group(2)
        if url not in CDN_FILES:
            return tag
        replaced += 1
        tag = tag.replace(url, f"vendor/{CDN_FILES[url]}")
        # the CDN's integrity hashes describe the CDN's files, not these
        return re.sub(r'\s(integrity|crossorigin|referrerpolicy)="[^"]*"', "", tag)

    text = _CDN_TAG.sub(local, text)
    leftover = [url for _, url in _CDN_TAG.findall(text)]
    if leftover:
        raise SiteError(
            f"index.html still loads from the internet: {', '.join(leftover)} "
            "(a new asv version? add it to CDN_FILES in tools/offline_site.py)"
        )
    index.write_text(text)
    return replaced


def _installed(modules: Path) -> bool:
    return all((modules / relative).exists() for relative in CDN_FILES.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.offline_site", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--html", type=Path, default=ROOT / "html")
    args = parser.parse_args(argv)
    try:
        modules = install_assets()
        if modules is None:
            return 0
        count = vendor(args.html, modules)
    except SiteError as exc:
        print(f"writeback: {exc}", file=sys.stderr)
        return 1
    print(f"html/ is self-contained: {count} scripts and styles served from html/vendor/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
