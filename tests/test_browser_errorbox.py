"""The error box routes every live message of the error page, in both editions.

Pastes into the box at the top of the error reference, and into the form on
the landing page, in headless Chromium: each error message the page shows
(torch's own, checked live by tests/test_explain.py), the two
``torch.compile`` forms, and full tracebacks raised live by the repros of
tests/test_error_fixes.py. On both pages the box must show explain()'s
lines for the message (the English edition: the very lines; the Chinese one:
as many lines, in Chinese) and link the section. A message that matches
nothing says so and links the reference. Serves docs/_build/html (or ``$INPLACE_SITE``).
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import threading
import traceback
import warnings
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest

from inplace_recipes import explain
from test_error_fixes import REPROS, _gradients, _leaves

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
HTML = Path(os.environ.get("INPLACE_SITE", ROOT / "docs" / "_build" / "html"))
PAGE = ROOT / "docs" / "errors.md"
CHROMIUM = "/usr/bin/chromium"
EDITIONS = ["", "zh_CN/"]
LABEL = re.compile(r"^\((?P<label>[a-z0-9-]+)\)=$", re.MULTILINE)
UNKNOWN = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"


def _sections() -> dict[str, str]:
    text = PAGE.read_text()
    marks = list(LABEL.finditer(text))
    return {
        m["label"]: text[m.end() : marks[i + 1].start() if i + 1 < len(marks) else len(text)]
        for i, m in enumerate(marks)
    }


def _page_messages() -> list[tuple[str, str]]:
    """(message, slug) for every error message the page shows, torch.compile's included."""
    found = []
    for label, text in _sections().items():
        if label.startswith("error-"):
            for message in re.findall(r"^RuntimeError: (.+)$", text, re.MULTILINE):
                found.append((message.removesuffix(" ..."), label.removeprefix("error-")))
    compiled = re.findall(
        r"^(torch\._dynamo\.exc\.\w+: .+?)\n(?:```|\.\.\.\n)",
        _sections()["torch-compile-forms"],
        re.MULTILINE | re.DOTALL,
    )
    assert len(compiled) == 2, compiled
    found += zip(compiled, ["view-of-leaf", "saved-tensor-modified"], strict=True)
    return found


def _tracebacks() -> list[tuple[str, str]]:
    """(full traceback, slug), raised live by each repro of tests/test_error_fixes.py."""
    found = []
    for repro in REPROS:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _gradients(repro.broken, _leaves(repro.shapes))
        except Exception as error:  # noqa: BLE001 - whatever it raised is what a reader pastes
            found.append(("".join(traceback.format_exception(error)), repro.slug))
        else:
            pytest.fail(f"{repro.slug} ({repro.where}) raised nothing")
    return found


MESSAGES = _page_messages()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    for edition in EDITIONS:
        if not (HTML / edition / "errors.html").exists():
            pytest.fail(f"{HTML / edition} has no errors.html: build the site first")
    handler = functools.partial(_Quiet, directory=str(HTML))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=CHROMIUM,
            headless=True,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
        )
        yield browser
        browser.close()


def _open(context: object, url: str) -> object:
    """Open ``url``: no console error, no request to another host."""
    page = context.new_page()  # type: ignore[attr-defined]
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))

    def local_only(route: object) -> None:
        host = urlparse(route.request.url).hostname  # type: ignore[attr-defined]
        if host not in {"127.0.0.1", "localhost"} and route.request.url.startswith("http"):  # type: ignore[attr-defined]
            problems.append(route.request.url)  # type: ignore[attr-defined]
            route.abort()  # type: ignore[attr-defined]
        else:
            route.continue_()  # type: ignore[attr-defined]

    page.route("**/*", local_only)
    page.goto(url, wait_until="load")
    page.problems = problems  # type: ignore[attr-defined]
    return page


def _paste(page: object, message: str) -> None:
    box = page.locator(".error-box form").first  # type: ignore[attr-defined]
    box.locator("textarea").fill(message)
    box.locator("button").click()


def _answer(page: object) -> dict[str, object]:
    return page.evaluate(  # type: ignore[attr-defined, no-any-return]
        """() => {
          const answer = document.querySelector(".error-box-answer");
          const link = answer.querySelector("a.error-box-section");
          return {
            slug: answer.dataset.slug,
            href: link ? link.getAttribute("href") : null,
            paragraphs: Array.from(answer.querySelectorAll(":scope > p")).map((p) => p.innerText),
            links: Array.from(answer.querySelectorAll("a")).map((a) => a.getAttribute("href")),
          };
        }"""
    )


def _cjk(text: str) -> int:
    return sum("\u4e00" <= c <= "\u9fff" for c in text)


@pytest.mark.parametrize("start", ["errors.html", "index.html"])
@pytest.mark.parametrize("edition", EDITIONS, ids=["en", "zh_CN"])
def test_the_box_answers_every_message_with_explains_words(
    site: str, context: object, edition: str, start: str
) -> None:
    """English: the lines of explain(message); Chinese: as many lines, in Chinese."""
    page = _open(context, f"{site}/{edition}{start}")
    cases = MESSAGES + _tracebacks()
    assert len(cases) > 40
    english: set[str] = set()  # sections whose answer is not in Chinese
    for message, slug in cases:
        _paste(page, message)
        answer = _answer(page)
        assert answer["slug"] == slug, (message[:120], answer["slug"])
        where = "" if start == "errors.html" else "errors.html"
        assert answer["href"] == f"{where}#error-{slug}"
        shown = [str(p).strip() for p in answer["paragraphs"]]  # type: ignore[attr-defined]
        lines = explain(message).lines()
        if edition:
            assert len(shown) == len(lines), slug
            if not (_cjk(shown[0]) and _cjk(shown[1])):
                english.add(slug)
        else:
            assert shown == lines, slug
    assert not page.problems, page.problems  # type: ignore[attr-defined]
    if edition:
        assert page.evaluate("document.documentElement.lang") == "zh-CN"  # type: ignore[attr-defined]
        assert not english, f"answers not in Chinese (catalogue out of step): {sorted(english)}"


@pytest.mark.parametrize("start", ["errors.html", "index.html"])
@pytest.mark.parametrize("edition", EDITIONS, ids=["en", "zh_CN"])
def test_a_message_matching_nothing_says_so_and_links_the_reference(
    site: str, context: object, edition: str, start: str
) -> None:
    page = _open(context, f"{site}/{edition}{start}")
    _paste(page, UNKNOWN)
    answer = _answer(page)
    assert answer["slug"] == ""
    assert page.url == f"{site}/{edition}{start}"  # type: ignore[attr-defined]
    assert len(answer["paragraphs"]) == 1  # type: ignore[arg-type]
    expected = "#" if start == "errors.html" else "errors.html"
    assert answer["links"] == [expected]
    text = page.inner_text(".error-box-none")  # type: ignore[attr-defined]
    assert answer["paragraphs"][0] == text.strip()  # type: ignore[index]


def test_every_exported_pattern_compiles_as_javascript(site: str, context: object) -> None:
    page = _open(context, f"{site}/errors.html")
    failures = page.evaluate(  # type: ignore[attr-defined]
        """() => {
             const table = window.inplaceErrorPatterns;
             const patterns = table.reading.map((r) => r.pattern)
               .concat(table.notes.map((n) => n.pattern), [table.library.when]);
             for (const kind of table.kinds) {
               patterns.push(...kind.wordings, ...kind.details.map((d) => d.pattern),
                             ...kind.causes.filter((c) => c.when).map((c) => c.when),
                             ...kind.causes.filter((c) => c.first).map((c) => c.first));
             }
             return patterns.filter((p) => {
               try { new RegExp(p); return false; } catch (e) { return true; }
             });
           }"""
    )
    assert failures == []
    count = page.evaluate("window.inplaceErrorPatterns.kinds.length")  # type: ignore[attr-defined]
    from inplace_recipes.error_reference import ERRORS

    assert count == len(ERRORS)
