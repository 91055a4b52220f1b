"""Open the built site in headless Chromium and check what a reader sees.

Serves docs/_build/html on localhost; fails on a console error, a request to
another host, a broken image, an empty search for ``index_put`` or a code
block without a copy button. Every gallery page (one per script in recipes/)
is opened; the Chinese edition (``zh_CN/``) must have every page, a CJK font
and a language switcher that lands on the same page. Screenshots go to
docs/_build/screenshots/.
"""

from __future__ import annotations

import functools
import http.server
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "docs" / "_build" / "html"
#: Every gallery script, as ``section/plot_name``: each must be a page of the site.
RECIPE_PAGES = sorted(
    f"{script.parent.name}/{script.stem}" for script in (ROOT / "recipes").glob("*/plot_*.py")
)
SITUATIONS = [page for page in RECIPE_PAGES if page.startswith("situations/")]
SHOTS = ROOT / "docs" / "_build" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
LOCAL = {"localhost", "127.0.0.1"}


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    if not (HTML / "index.html").exists():
        pytest.fail("the site is not built: run nox -s docs first")
    handler = functools.partial(_Quiet, directory=str(HTML))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser_context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium")
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            headless=True,
            args=ARGS,
            viewport={"width": 1280, "height": 900},
        )
        yield context
        context.close()


def _open(context: object, url: str, shot: str) -> object:
    """Open ``url``; fail on console errors and requests to other hosts."""
    page = context.new_page()  # type: ignore[attr-defined]
    errors: list[str] = []
    foreign: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))

    def check_request(route: object) -> None:
        request_url = route.request.url  # type: ignore[attr-defined]
        host = urlparse(request_url).hostname
        if urlparse(request_url).scheme in ("http", "https") and host not in LOCAL:
            foreign.append(request_url)
            route.abort()  # type: ignore[attr-defined]
        else:
            route.continue_()  # type: ignore[attr-defined]

    page.route("**/*", check_request)
    page.goto(url, wait_until="networkidle")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{shot}.png"), full_page=True)
    assert not foreign, f"{url} requested other hosts: {foreign}"
    assert not errors, f"{url} logged console errors: {errors}"
    broken = page.evaluate(
        "Array.from(document.images).filter(i => i.complete && i.naturalWidth === 0)"
        ".map(i => i.src)"
    )
    assert not broken, f"{url} has broken images: {broken}"
    return page


def _check_copy_buttons(page: object) -> None:
    missing = page.evaluate(  # type: ignore[attr-defined]
        "Array.from(document.querySelectorAll('div.highlight'))"
        ".filter(d => !d.querySelector('button.copybtn')).length"
    )
    total = page.evaluate("document.querySelectorAll('div.highlight').length")  # type: ignore[attr-defined]
    assert total > 0, "no code blocks found"
    assert missing == 0, f"{missing} of {total} code blocks have no copy button"


def test_landing_page(site: str, browser_context: object) -> None:
    page = _open(browser_context, f"{site}/index.html", "index")
    assert "x[i] = v" in page.inner_text("table.answer-table")  # type: ignore[attr-defined]
    _check_copy_buttons(page)


def test_recipe_page(site: str, browser_context: object) -> None:
    page = _open(browser_context, f"{site}/auto_recipes/by_recipe/plot_where.html", "recipe_where")
    assert page.locator("img.sphx-glr-single-img").count() >= 1  # type: ignore[attr-defined]
    _check_copy_buttons(page)


def test_performance_page_answers_in_its_first_screen(site: str, browser_context: object) -> None:
    """The answer is rendered prose near the top, with code as code, and every figure is one
    image per row, at the content's full width."""
    page = _open(browser_context, f"{site}/auto_recipes/tools/plot_performance.html", "performance")
    answer = page.locator("div.rendered_html p").first  # type: ignore[attr-defined]
    box = answer.bounding_box()
    assert box is not None
    assert box["y"] < page.viewport_size["height"], "the answer is below the first screen"  # type: ignore[attr-defined]
    text = answer.inner_text()
    assert "best_recipe" in text
    assert "``" not in text
    assert answer.locator("code").count() >= 1
    assert page.locator("img.sphx-glr-multi-img").count() == 0  # type: ignore[attr-defined]
    assert page.locator("img.sphx-glr-single-img").count() >= 8  # type: ignore[attr-defined]


def test_search_finds_index_put(site: str, browser_context: object) -> None:
    page = _open(browser_context, f"{site}/search.html?q=index_put", "search_index_put")
    page.wait_for_selector("#search-results ul.search li", timeout=15_000)  # type: ignore[attr-defined]
    hits = page.locator("#search-results ul.search li").count()  # type: ignore[attr-defined]
    assert hits > 0, "the search for index_put found nothing"


@pytest.mark.parametrize("page_name", RECIPE_PAGES)
def test_every_gallery_page(site: str, browser_context: object, page_name: str) -> None:
    """Each script's page loads offline, cleanly, with its executed output."""
    url = f"{site}/auto_recipes/{page_name}.html"
    page = _open(browser_context, url, page_name.replace("/", "_"))
    outputs = page.locator("div.sphx-glr-script-out").count()  # type: ignore[attr-defined]
    assert outputs > 0, f"{url} shows no output: did the script run?"
    _check_copy_buttons(page)
    page.close()  # type: ignore[attr-defined]


def test_situations_section(site: str, browser_context: object) -> None:
    """The gallery index lists every situation page, each citing where users report it."""
    assert len(SITUATIONS) >= 6, SITUATIONS
    page = _open(browser_context, f"{site}/auto_recipes/index.html", "gallery_index")
    links = page.evaluate(  # type: ignore[attr-defined]
        "Array.from(document.querySelectorAll('a')).map(a => a.getAttribute('href'))"
    )
    for name in SITUATIONS:
        assert any(link and link.endswith(f"{name}.html") for link in links), name
    page.close()  # type: ignore[attr-defined]
    for name in SITUATIONS:
        page = _open(browser_context, f"{site}/auto_recipes/{name}.html", name.replace("/", "_"))
        upstream = page.evaluate(  # type: ignore[attr-defined]
            "Array.from(document.querySelectorAll('a[href]')).map(a => a.href)"
            ".filter(h => h.startsWith('https://github.com/pytorch/pytorch/')"
            " || h.startsWith('https://discuss.pytorch.org/')).length"
        )
        assert upstream > 0, f"{name} cites no upstream issue or forum thread"
        page.close()  # type: ignore[attr-defined]


# -- the Chinese edition ------------------------------------------------------
ZH_CN = HTML / "zh_CN"


def test_every_english_page_has_a_chinese_page() -> None:
    skip = {"genindex.html", "search.html", "py-modindex.html"}
    english = {
        p.relative_to(HTML)
        for p in HTML.rglob("*.html")
        if ZH_CN not in p.parents
        and p.name not in skip
        and not {"_static", "_modules", "_images"} & set(p.parts)
    }
    missing = sorted(str(p) for p in english if not (ZH_CN / p).exists())
    assert not missing, f"pages with no Chinese edition: {missing[:10]}"


def test_a_cjk_font_is_installed() -> None:
    """Without one, Chromium draws the Chinese edition as boxes."""
    families = subprocess.run(
        ["fc-list", ":lang=zh", "family"], capture_output=True, text=True, check=True
    ).stdout
    assert families.strip(), "no CJK font: apt-get install -y fonts-noto-cjk"


def test_chinese_landing_page(site: str, browser_context: object) -> None:
    page = _open(browser_context, f"{site}/zh_CN/index.html", "zh_CN_index")
    assert page.evaluate("document.documentElement.lang") == "zh-CN"  # type: ignore[attr-defined]
    text = page.inner_text("article")  # type: ignore[attr-defined]
    chinese = sum("\u4e00" <= c <= "\u9fff" for c in text)
    assert chinese > 100, f"the landing page is not in Chinese ({chinese} CJK characters)"
    assert "x[i] = v" in page.inner_text("table.answer-table")  # type: ignore[attr-defined]
    _check_copy_buttons(page)


@pytest.mark.parametrize(
    ("start", "link", "lands"),
    [
        ("concepts/leaf-tensors.html", "中文", "zh_CN/concepts/leaf-tensors.html"),
        ("zh_CN/concepts/leaf-tensors.html", "English", "concepts/leaf-tensors.html"),
        ("zh_CN/index.html", "English", "index.html"),
        (
            "auto_recipes/by_recipe/plot_where.html",
            "中文",
            "zh_CN/auto_recipes/by_recipe/plot_where.html",
        ),
    ],
)
def test_the_language_switcher_opens_the_same_page(
    site: str, browser_context: object, start: str, link: str, lands: str
) -> None:
    page = _open(browser_context, f"{site}/{start}", "switch_" + start.replace("/", "_"))
    page.locator(".sidebar-lang-switch a", has_text=link).first.click()  # type: ignore[attr-defined]
    page.wait_for_load_state("networkidle")  # type: ignore[attr-defined]
    assert page.url == f"{site}/{lands}"  # type: ignore[attr-defined]


def test_chinese_recipe_page(site: str, browser_context: object) -> None:
    url = f"{site}/zh_CN/auto_recipes/by_recipe/plot_where.html"
    page = _open(browser_context, url, "zh_CN_recipe_where")
    assert page.locator("img.sphx-glr-single-img").count() >= 1  # type: ignore[attr-defined]
    assert "梯度检查" in page.inner_text("article")  # type: ignore[attr-defined]
