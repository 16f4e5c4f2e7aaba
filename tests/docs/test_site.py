"""The built documentation site: it renders in a real browser, and no internal link is broken.

The site is the one ``make docs`` built into ``site/`` when that is newer than every source
(``mkdocs.yml``, ``docs/``, the library's docstrings); otherwise the test builds it
(``mkdocs build --strict``) into a temporary directory. It is served by ``http.server`` on
127.0.0.1 and opened with headless Chromium (Debian's ``chromium``, installed with apt-get
when missing and we are root, as the TLS tests install stunnel; a missing Chromium fails the
run under ``CI=true``). Screenshots are kept in ``site-check/`` (git-ignored).

Console messages are read from Chromium's log (``--enable-logging=stderr``), which prints
every console message, whatever its level, as a ``CONSOLE`` line: a page of this site must
log nothing at all. Resources that failed to load are seen on the server side (any answer
of 400 or more).
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

import pytest

from kafka_async.testing.plugin import importorskip_or_fail, skip_or_fail
from tests.harness.apt import apt_install

# Marked as a broker-tier test although it needs no broker: it builds the site and drives a
# browser, which is worth doing once per run, not once per CPython of the unit tier.
pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "site"
CHECK_DIR = ROOT / "site-check"
BUILD_DEADLINE = 240.0
BROWSER_DEADLINE = 60.0
APT_DEADLINE = 900.0
_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
_CONSOLE = re.compile(r":CONSOLE[:(]\d*\)?\]\s*(?P<message>.*)$")


# ---------------------------------------------------------------------------------------------
# Chromium
# ---------------------------------------------------------------------------------------------


class ChromiumUnavailableError(RuntimeError):
    """Chromium is not installed and could not be installed (the message says why)."""


def find_chromium() -> str | None:
    """Path of a Chromium binary, or None."""
    for name in _BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def ensure_chromium(*, install: bool = True) -> str:
    """The Chromium binary; installs Debian's ``chromium`` if it is missing and allowed.

    The idiom of :func:`kafka_async.testing.tls.ensure_stunnel`: root and apt-get (a fresh
    Debian CI machine) install it; anything else raises with the reason.
    """
    if not install:
        path = find_chromium()
        if path:
            return path
        raise ChromiumUnavailableError("chromium is not installed (Debian package chromium)")
    return apt_install("chromium", find_chromium, ChromiumUnavailableError, timeout=APT_DEADLINE)


@dataclass
class PageLoad:
    """What Chromium saw of one page."""

    dom: str
    console: list[str]


def chromium_flags(user_data_dir: Path) -> list[str]:
    return [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={user_data_dir}",
        "--enable-logging=stderr",
        "--v=0",
    ]


def console_messages(log: str) -> list[str]:
    """The console messages in Chromium's stderr log."""
    return [m["message"] for line in log.splitlines() if (m := _CONSOLE.search(line))]


def _chromium(binary: str, args: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    profile = tmp / f"profile-{len(list(tmp.glob('profile-*')))}"
    try:
        return subprocess.run(
            [binary, *chromium_flags(profile), *args],
            capture_output=True,
            text=True,
            timeout=BROWSER_DEADLINE,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"chromium {args} did not end within {BROWSER_DEADLINE:.0f} s")


def load_page(binary: str, url: str, tmp: Path) -> PageLoad:
    """The DOM after Chromium ran the page's scripts, and the console messages it logged."""
    done = _chromium(binary, ["--dump-dom", url], tmp)
    assert done.returncode == 0, f"chromium --dump-dom {url}: {done.stderr[-3000:]}"
    return PageLoad(dom=done.stdout, console=console_messages(done.stderr))


def screenshot(binary: str, url: str, out: Path, tmp: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    done = _chromium(binary, ["--window-size=1280,1600", f"--screenshot={out}", url], tmp)
    assert done.returncode == 0, f"chromium --screenshot {url}: {done.stderr[-3000:]}"
    assert out.exists(), f"no screenshot of {url}"
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert out.stat().st_size > 10_000, f"the screenshot of {url} is nearly empty"


# ---------------------------------------------------------------------------------------------
# The site and its server
# ---------------------------------------------------------------------------------------------


def _newest_source() -> float:
    sources = [
        ROOT / "mkdocs.yml",
        *(ROOT / "docs").rglob("*"),
        *(ROOT / "kafka_async").rglob("*.py"),
    ]
    return max(p.stat().st_mtime for p in sources if p.is_file())


def build_site(out: Path) -> Path:
    mkdocs = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(out)]
    try:
        done = subprocess.run(
            mkdocs, cwd=ROOT, capture_output=True, text=True, timeout=BUILD_DEADLINE, check=False
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"mkdocs build did not end within {BUILD_DEADLINE:.0f} s")
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stderr[-6000:]}"
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built site: ``make docs``'s when it is up to date, else a fresh build."""
    index = SITE / "index.html"
    if index.exists() and index.stat().st_mtime >= _newest_source():
        return SITE
    importorskip_or_fail("mkdocs", "the site checks need mkdocs (the docs extra)")
    return build_site(tmp_path_factory.mktemp("site") / "site")


@dataclass
class SiteServer:
    url: str
    errors: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[SiteServer]:
    """The site served on 127.0.0.1 by http.server in a thread; answers >= 400 are recorded."""
    errors: list[str] = []

    class Handler(SimpleHTTPRequestHandler):
        def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
            if int(code) >= 400:
                errors.append(f"{code} {self.path}")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield SiteServer(url=f"http://127.0.0.1:{httpd.server_address[1]}/", errors=errors)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(10)


@pytest.fixture(scope="module")
def chromium() -> str:
    try:
        return ensure_chromium(install=True)
    except ChromiumUnavailableError as exc:
        skip_or_fail(f"the site checks need Chromium: {exc}")


# ---------------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------------

PAGES = {
    "home": ("", "kafka_async", ["Where to go next"]),
    "producer": ("reference/producer/", "Producer", ["send", "enqueue_many", "flush"]),
}


@pytest.mark.parametrize("name", sorted(PAGES))
def test_page_renders_in_chromium(
    name: str, chromium: str, server: SiteServer, tmp_path: Path
) -> None:
    path, heading, words = PAGES[name]
    url = server.url + path
    before = len(server.errors)
    page = load_page(chromium, url, tmp_path)
    dom = page.dom
    title = re.search(r"<title>(.*?)</title>", dom, re.S)
    assert title is not None, f"no title in {url}"
    assert "kafka_async" in title.group(1), f"title of {url}: {title.group(1)}"
    h1 = re.findall(r"<h1[^>]*>(.*?)</h1>", dom, re.S)
    assert any(heading in re.sub(r"<[^>]+>", "", h) for h in h1), f"h1 of {url}: {h1}"
    assert "<pre" in dom, f"no code block in the DOM of {url}"
    assert "<code" in dom, f"no code in the DOM of {url}"
    assert 'class="md-nav' in dom, "the theme's navigation did not render"
    for word in words:
        assert word in dom, f"{word!r} missing from {url}"
    if name == "producer":
        # mkdocstrings rendered the API from the docstrings
        assert "doc-heading" in dom, "no API heading rendered from the docstrings"
        assert "doc-signature" in dom, "no signature rendered from the docstrings"
    assert page.console == [], f"console messages on {url}: {page.console}"
    screenshot(chromium, url, CHECK_DIR / f"{name}.png", tmp_path)
    assert server.errors[before:] == [], f"failed requests from {url}: {server.errors[before:]}"


def test_console_errors_are_seen(chromium: str, tmp_path: Path) -> None:
    """The console check works: a page that logs an error and throws is caught."""
    (tmp_path / "bad.html").write_text(
        "<html><head><title>bad</title></head><body><h1>bad</h1><script>"
        'console.error("broken-on-purpose"); throw new Error("thrown-on-purpose");'
        "</script></body></html>",
        encoding="utf-8",
    )
    page = load_page(chromium, (tmp_path / "bad.html").as_uri(), tmp_path)
    joined = "\n".join(page.console)
    assert "broken-on-purpose" in joined
    assert "thrown-on-purpose" in joined


# ---------------------------------------------------------------------------------------------
# Links
# ---------------------------------------------------------------------------------------------


class _LinkParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for key in ("id", "name") if tag == "a" else ("id",):
            if a.get(key):
                self.ids.add(str(a[key]))
        for key in ("href", "src"):
            value = a.get(key)
            if value and not (tag == "link" and a.get("rel") in ("canonical", "alternate")):
                self.links.append(value)


def _parse(page: Path) -> _LinkParser:
    parser = _LinkParser()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def broken_links(site: Path, prefix: str = "/") -> list[str]:
    """Every internal link or anchor of the site that leads nowhere: ``page -> link (why)``.

    ``prefix`` is the path the site is published under (absolute links start with it).
    External links (a scheme, ``//host``) are not fetched.
    """
    pages = {p.relative_to(site).as_posix(): _parse(p) for p in site.rglob("*.html")}
    broken: list[str] = []
    for name, parsed in sorted(pages.items()):
        base = "/" + name
        for link in parsed.links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith("//"):
                continue
            path, fragment = unquote(parts.path), unquote(parts.fragment)
            if not path:
                target_name = name
            else:
                absolute = urlsplit(urljoin(base, path)).path
                if path.startswith("/"):
                    if not absolute.startswith(prefix):
                        broken.append(f"{name} -> {link} (outside {prefix})")
                        continue
                    absolute = "/" + absolute[len(prefix) :]
                target = site / absolute.lstrip("/")
                if absolute.endswith("/") or target.is_dir():
                    target = target / "index.html"
                if not target.is_file():
                    broken.append(f"{name} -> {link} (no file)")
                    continue
                target_name = target.relative_to(site).as_posix()
            if fragment and target_name in pages and fragment not in pages[target_name].ids:
                broken.append(f"{name} -> {link} (no anchor #{fragment})")
    return broken


def _site_prefix() -> str:
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    m = re.search(r"^site_url:\s*(\S+)", text, re.M)
    path = urlsplit(m.group(1)).path if m else "/"
    return path if path.endswith("/") else path + "/"


def test_no_broken_internal_link(site: Path) -> None:
    pages = list(site.rglob("*.html"))
    assert len(pages) > 20, f"only {len(pages)} pages in {site}"
    broken = broken_links(site, _site_prefix())
    assert broken == [], "broken links:\n" + "\n".join(broken[:50])


def test_link_check_finds_broken_links(tmp_path: Path) -> None:
    """The checker itself: a missing page, a missing anchor, and what is fine."""
    (tmp_path / "a").mkdir()
    (tmp_path / "index.html").write_text(
        '<a href="a/">ok</a><a href="a/#here">ok</a><a href="#top" id="top">ok</a>'
        '<a href="missing/">bad</a><a href="a/#nowhere">bad</a><a href="https://x.org/">ext</a>'
        '<a href="/docs/a/">ok</a>',
        encoding="utf-8",
    )
    (tmp_path / "a" / "index.html").write_text('<h2 id="here">x</h2>', encoding="utf-8")
    assert broken_links(tmp_path, "/docs/") == [
        "index.html -> missing/ (no file)",
        "index.html -> a/#nowhere (no anchor #nowhere)",
    ]
