"""The Chinese edition's text that no page catalogue reaches (a Sphinx extension).

The gallery runs once, in English, and the zh_CN build reuses its output
(``noxfile.py``: ``docs``). What that output writes outside the pages'
messages is put into Chinese here, from files in ``locale/zh_CN``, and only
when ``language`` is ``zh_CN``:

- the gallery's cards (index pages, the API page's "pages that use" cards):
  their titles and tooltips are each recipe page's title and summary, so
  they take that page's own translation;
- "Total running time of the script", which changes at every build;
- a Chinese caption under each figure (``figures.md``), also its alt text;
- the cells of the HTML tables the package writes (the compatibility matrix,
  the at[] differences, the releases page's claims), the paragraphs the
  performance page generates from the benchmark, and a line that reads the
  printed ``compare_gradients`` table (``generated.md``);
- the few strings the theme (furo) writes without a translation call, after
  the build, from the theme's catalogue ``LC_MESSAGES/sphinx.po``.

Nothing is guessed: a string without a translation stays as it is, and the
browser test (``tests/test_browser_zh.py``) measures what is left.
"""

from __future__ import annotations

import html
import posixpath
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from babel.messages.pofile import read_po

if TYPE_CHECKING:  # docutils comes with Sphinx; the tests import this module without it
    from docutils import nodes

HERE = Path(__file__).parent
LOCALE = HERE / "locale" / "zh_CN"
LANGUAGES = ("zh_CN", "zh-CN")

#: Strings furo writes with no translation call (``page.html``), by the
#: sphinx.po message that translates each. The footer sentence is one pattern.
THEME_LITERALS = {
    'aria-label="Toggle site navigation sidebar"': "Toggle site navigation sidebar",
    'aria-label="Toggle table of contents sidebar"': "Toggle table of contents sidebar",
    'aria-label="Toggle Light / Dark / Auto color theme"': "Toggle Light / Dark / Auto color theme",
}
_FOOTER = re.compile(
    r"Made with\s*(<a href=\"https://www.sphinx-doc.org/\">Sphinx</a>)\s*and\s*"
    r"(<a class=\"muted-link\" href=\"https://pradyunsg.me\">@pradyunsg</a>)'s\s*"
    r"(<a href=\"https://github.com/pradyunsg/furo\">Furo</a>)"
)
#: furo's navigation tree (``navigation.py``) labels each expander in Python.
_TOGGLE_NAVIGATION = re.compile(r'aria-label="Toggle navigation of ([^"]*)"')
_RUNNING_TIME = re.compile(r"\(\s*(\d+) minutes ([\d.]+) seconds\)")
_COMPARE_HEADER = re.compile(r"^recipe\s+forward\s+grad x\s+grad value\s+ok\s*$", re.MULTILINE)
_TOOLTIP = re.compile(r'tooltip="([^"]*)"')
_CARD_TITLE = re.compile(r'(<div class="sphx-glr-thumbnail-title">)(.*?)(</div>)', re.DOTALL)


def _catalogue(path: Path) -> dict[str, str]:
    with path.open("rb") as handle:
        catalog = read_po(handle)
    return {
        str(m.id): str(m.string)
        for m in catalog
        if m.id and isinstance(m.id, str) and isinstance(m.string, str) and m.string
    }


def card_texts(catalogues: Path) -> dict[str, str]:
    """Each message of every page, as Sphinx-Gallery writes it on a card, and its translation.

    Sphinx-Gallery strips the reST of a title or summary (``_sanitize_rst``)
    before writing it into a card; so is each translation here.
    """
    from sphinx_gallery.gen_rst import _sanitize_rst

    texts = {}
    for path in sorted(catalogues.rglob("*.po")):
        for msgid, msgstr in _catalogue(path).items():
            # A literal next to a Chinese character keeps its backquotes there.
            texts[_sanitize_rst(msgid)] = _sanitize_rst(msgstr).replace("``", "")
    return texts


def _generated_tables() -> dict[str, list[list[str]]]:
    """``generated.md``'s tables, by the first cell of their header."""
    import translations  # docs/ is on sys.path (conf.py)

    return {t[0][0]: t[1:] for t in translations._tables(LOCALE / "generated.md") if t}


def cell_rules(rows: list[list[str]]) -> list[tuple[re.Pattern[str], str]]:
    """``| English | 中文 |`` rows as (pattern, replacement); ``{name}`` is a hole.

    A hole named ``n`` (or ``n2``, ...) holds a number, one named ``size`` (or
    ``size2``, ...) a size as the benchmark writes it (``1e3``), any other
    (``{rest}``, ``{peer}``) any text; each hole's text comes back where the
    Chinese names it.

    >>> [(p.pattern, r) for p, r in cell_rules([["error [{n}]", "报错 [{n}]"]])]
    [('^error\\\\ \\\\[(?P<n>\\\\d+)\\\\]$', '报错 [\\\\g<n>]')]
    >>> [(pattern, chinese)] = cell_rules([["{peer} differs at {n} of {n2}", "{peer}：{n2} 中 {n} 个"]])
    >>> pattern.sub(chinese, "jax differs at 3 of 9")
    'jax：9 中 3 个'
    """
    rules = []
    for english, chinese, *_ in rows:
        english, chinese = english.strip("`"), chinese.strip("`")
        pattern = re.escape(english)
        for name in re.findall(r"\{(\w+)\}", english):
            if re.fullmatch(r"n\d*", name):
                hole = rf"(?P<{name}>\d+)"
            elif re.fullmatch(r"size\d*", name):
                hole = rf"(?P<{name}>\d+e\d+)"
            else:
                hole = rf"(?P<{name}>.*?)"
            pattern = pattern.replace(rf"\{{{name}\}}", hole, 1)
            chinese = chinese.replace(f"{{{name}}}", rf"\g<{name}>")
        rules.append((re.compile(f"^{pattern}$", re.DOTALL), chinese))
    return rules


def translate_cells(raw_html: str, rules: list[tuple[re.Pattern[str], str]]) -> str:
    """The text between tags of a generated HTML table, in Chinese where a rule matches it.

    >>> rules = cell_rules([["works", "可用"], ["failed: {rest}", "失败：{rest}"]])
    >>> translate_cells("<td>works</td><td>failed: x &lt; y</td><td>other</td>", rules)
    '<td>可用</td><td>失败：x &lt; y</td><td>other</td>'
    """

    def cell(match: re.Match[str]) -> str:
        text = html.unescape(match.group(1))
        stripped = text.strip()
        for pattern, replacement in rules:
            if pattern.match(stripped):
                chinese = pattern.sub(replacement, stripped)
                return ">" + text.replace(stripped, html.escape(chinese, quote=False)) + "<"
        return match.group(0)

    return re.sub(r">([^<>]*[A-Za-z][^<>]*)<", cell, raw_html)


def _prose_html(text: str) -> str:
    """``text`` as ``performance_prose.Prose`` renders one paragraph of it."""
    out = html.escape(text.strip())
    out = re.sub(r"``(.+?)``", r"<code>\1</code>", out)
    return re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", out)


def prose_rules(rows: list[list[str]]) -> list[tuple[re.Pattern[str], str]]:
    r"""``| paragraph | 中文 |`` rows as rules on a rendered paragraph; holes as in cell_rules.

    The longest English is tried first: a hole matches any text, so a shorter
    entry would also match a paragraph that a longer one spells out, and leave
    the longer one's extra clauses, in English, inside its last hole.

    >>> rules = prose_rules([["``at()`` costs {a}.", "``at()`` 的开销是 {a}。"]])
    >>> translate_prose("<p><code>at()</code> costs 1.03x.</p>\n<p>Other.</p>", rules)
    '<p><code>at()</code> 的开销是 1.03x。</p>\n<p>Other.</p>'
    >>> rules = prose_rules([["goal: {a}", "目标：{a}"], ["goal: {a}; {b} too", "目标：{a}；{b} 也是"]])
    >>> translate_prose("<p>goal: 1x; at() too</p>", rules)
    '<p>目标：1x；at() 也是</p>'
    """
    longest_first = sorted(rows, key=lambda row: -len(row[0]))
    return cell_rules([[_prose_html(en), _prose_html(zh)] for en, zh, *_ in longest_first])


def translate_prose(
    raw_html: str,
    rules: list[tuple[re.Pattern[str], str]],
    phrases: list[tuple[str, str]] | None = None,
) -> str:
    """Each ``<p>`` of a page's generated prose, in Chinese where a rule matches all of it.

    ``phrases`` (English, Chinese) are replaced in the text of the holes of a
    translated paragraph: the connecting words of a list (" and ", "for a row, ").

    >>> rules = prose_rules([["counted at {e}.", "计数的大小：{e}。"]])
    >>> translate_prose("<p>counted at 1e3 and 1e4.</p>", rules, [(" and ", "、")])
    '<p>计数的大小：1e3、1e4。</p>'
    """

    def paragraph(match: re.Match[str]) -> str:
        inner = match.group(1)
        for pattern, template in rules:
            if found := pattern.match(inner):
                holes = found.groupdict()
                for english, chinese in phrases or []:
                    holes = {k: v.replace(english, chinese) for k, v in holes.items()}
                text = re.sub(
                    r"\\g<(\w+)>", lambda hole, holes=holes: holes[hole.group(1)], template
                )
                return f"<p>{text}</p>"
        return match.group(0)

    return re.sub(r"<p>(.*?)</p>", paragraph, raw_html, flags=re.DOTALL)


def read_captions() -> dict[str, str]:
    """``figures.md``: image path (relative to docs/) to its Chinese caption."""
    import translations  # docs/ is on sys.path (conf.py)

    return translations.read_captions()


def translate_cards(raw_html: str, texts: dict[str, str]) -> str:
    """``raw_html`` of a gallery card with its tooltip and title in Chinese, where known.

    >>> card = '<div tooltip="A b &amp; c."><div class="sphx-glr-thumbnail-title">T</div>'
    >>> translate_cards(card, {"A b & c.": "甲乙丙。", "T": "标题"})
    '<div tooltip="甲乙丙。"><div class="sphx-glr-thumbnail-title">标题</div>'
    """

    def tooltip(match: re.Match[str]) -> str:
        english = html.unescape(match.group(1))
        return f'tooltip="{html.escape(texts.get(english, english))}"'

    def title(match: re.Match[str]) -> str:
        english = html.unescape(match.group(2))
        chinese = texts.get(english)
        return (
            match.group(0)
            if chinese is None
            else match.expand(rf"\g<1>{html.escape(chinese)}\g<3>")
        )

    return _CARD_TITLE.sub(title, _TOOLTIP.sub(tooltip, raw_html))


def running_time(text: str) -> str:
    """Sphinx-Gallery's ``(0 minutes 3.2 seconds)`` in Chinese.

    >>> running_time(" (0 minutes 12.692 seconds)")
    '（0 分 12.692 秒）'
    """
    return _RUNNING_TIME.sub(r"（\1 分 \2 秒）", text).strip()


def _image_paths(node: nodes.Element, docname: str) -> list[str]:
    """Where an image may be, relative to docs/: Sphinx makes a page's images relative to
    the source folder before this runs; Sphinx-Gallery's ``image-sg`` keeps its ``/...``."""
    uri = str(node.get("uri", ""))
    if uri.startswith("/"):
        return [uri.lstrip("/")]
    return [uri, posixpath.normpath(posixpath.join(posixpath.dirname(docname), uri))]


def _inline(text: str) -> list[nodes.Node]:
    """A caption's text, its `code` as literals."""
    from docutils import nodes

    parts: list[nodes.Node] = []
    for i, piece in enumerate(re.split(r"`([^`]*)`", text)):
        if piece:
            parts.append(nodes.literal(piece, piece) if i % 2 else nodes.Text(piece))
    return parts


def translate_doctree(app: Any, doctree: nodes.document) -> None:
    """Cards, running time and figure captions of one page (``doctree-read``)."""
    from docutils import nodes

    if app.config.language not in LANGUAGES:
        return
    docname = app.env.docname
    texts = app.zh_edition_texts
    for raw in list(doctree.findall(nodes.raw)):
        if "html" in raw.get("format", "") and "sphx-glr-thumb" in raw.astext():
            raw.replace_self(nodes.raw("", translate_cards(raw.astext(), texts), format="html"))
    for strong in list(doctree.findall(nodes.strong)):
        if strong.astext().strip() == "Total running time of the script:":
            paragraph = strong.parent
            rest = paragraph.astext().replace(strong.astext(), "", 1)
            paragraph.replace_self(
                nodes.paragraph(
                    "", "", nodes.strong("", "脚本总运行时间："), nodes.Text(running_time(rest))
                )
            )
    for raw in list(doctree.findall(nodes.raw)):
        if "html" in raw.get("format", "") and "<table" in raw.astext():
            new = translate_cells(raw.astext(), app.zh_edition_cells)
            raw.replace_self(nodes.raw("", new, format="html"))
        elif "html" in raw.get("format", "") and "<p>" in raw.astext():
            new = translate_prose(raw.astext(), app.zh_edition_prose, app.zh_edition_phrases)
            raw.replace_self(nodes.raw("", new, format="html"))
    gloss = app.zh_edition_gloss
    for block in list(doctree.findall(nodes.literal_block)):
        if gloss and _COMPARE_HEADER.search(block.astext()):
            note = nodes.paragraph("", gloss, classes=["zh-output-gloss"])
            block.parent.insert(block.parent.index(block) + 1, note)
    captions = app.zh_edition_captions
    images = list(doctree.findall(nodes.image))
    images += [n for n in doctree.findall(nodes.Element) if type(n).__name__ == "imgsgnode"]
    for image in images:
        caption = next((captions[p] for p in _image_paths(image, docname) if p in captions), None)
        if caption is None:
            continue
        image["alt"] = re.sub(r"`([^`]*)`", r"\1", caption)
        # After the image, or after the paragraph (or reference) that holds it.
        anchor: nodes.Element = image
        while isinstance(anchor.parent, (nodes.paragraph, nodes.reference, nodes.figure)):
            anchor = anchor.parent
        note = nodes.paragraph("", "", *_inline(caption), classes=["zh-figure-caption"])
        anchor.parent.insert(anchor.parent.index(anchor) + 1, note)


def translate_theme(app: Any, exception: Exception | None) -> None:
    """Furo's untranslatable strings in every written page (``build-finished``)."""
    if exception is not None or app.config.language not in LANGUAGES:
        return
    if app.builder.format != "html":
        return
    theme = app.zh_edition_theme
    literals = {
        literal: literal.replace(english, html.escape(theme[english]))
        for literal, english in THEME_LITERALS.items()
        if english in theme
    }
    footer = theme.get("Made with {sphinx} and {author}'s {furo}")
    toggle = theme.get("Toggle navigation of {title}")
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        new = text
        for literal, chinese in literals.items():
            new = new.replace(literal, chinese)
        if footer is not None:
            new = _FOOTER.sub(
                lambda m: footer.format(sphinx=m.group(1), author=m.group(2), furo=m.group(3)),
                new,
            )
        if toggle is not None:
            new = _TOGGLE_NAVIGATION.sub(
                lambda m: f'aria-label="{toggle.format(title=m.group(1))}"', new
            )
        if new != text:
            page.write_text(new, encoding="utf-8")


def load(app: Any) -> None:
    """Read the catalogues once per build (``builder-inited``); kept on the app, not the module."""
    catalogues = LOCALE / "LC_MESSAGES"
    zh = app.config.language in LANGUAGES
    app.zh_edition_texts = card_texts(catalogues) if zh else {}
    app.zh_edition_captions = read_captions() if zh else {}
    app.zh_edition_theme = _catalogue(catalogues / "sphinx.po") if zh else {}
    tables = _generated_tables() if zh else {}
    app.zh_edition_cells = cell_rules(tables.get("English", []))
    app.zh_edition_prose = prose_rules(tables.get("paragraph", []))
    phrases = [(r[0].strip("`"), r[1].strip("`")) for r in tables.get("phrase", [])]
    app.zh_edition_phrases = sorted(phrases, key=lambda pair: -len(pair[0]))
    printed = tables.get("printed table", [])
    app.zh_edition_gloss = printed[0][1] if printed else ""


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", load)
    app.connect("doctree-read", translate_doctree)
    app.connect("build-finished", translate_theme)
    return {"parallel_read_safe": False, "parallel_write_safe": True}
