"""The error table on the site: each section's answer on the page, and the table for the box.

One source, :mod:`inplace_recipes._error_kinds`, read three ways:

- ``explain()`` prints an answer's lines (:meth:`Explanation.lines`);
- the ``error-answer`` directive renders a section's words on
  ``errors.md`` (why, each cause and its fix, the sentences filled in from a
  message), so that the page says what ``explain()`` says and the Chinese
  catalogue (``locale/zh_CN/LC_MESSAGES/errors.po``) translates these very
  words; without an argument it renders the words every answer shares;
- the error box (``_static/error-box.js``) runs the same reading rewrites,
  patterns, words of each wording's literal and cause filters on a pasted message, from the table
  :func:`table` exports into ``_static/error-patterns.js`` at each HTML
  build, with each text as the build's edition words it (the catalogue's
  translation in the Chinese edition), and assembles the lines as
  :meth:`Explanation.lines` does.

>>> [kind["slug"] for kind in table()["kinds"]][:2]
['leaf', 'view-of-leaf']
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from inplace_recipes import error_reference
from inplace_recipes._error_kinds import ERRORS, ERRORS_PAGE, LIBRARY_WRITE, NOTES
from inplace_recipes._error_reading import READING, Rewrite
from inplace_recipes._error_words import (
    LITERALS,
    MAX_WORDS,
    MIN_OPENING,
    MIN_PHRASE,
    SMALL_WORDS,
    WEIGHTLESS,
    WORD_FORM,
    WRAP_WIDTH,
)

#: The generated script, under the build's ``_static``.
FILE = "error-patterns.js"
#: The global the box reads the table from.
GLOBAL = "inplaceErrorPatterns"
#: The catalogue that translates the error page, the box's words among them.
CATALOGUE = Path(__file__).parent / "locale" / "zh_CN" / "LC_MESSAGES" / "errors.po"
#: Python-only regex syntax that JavaScript reads differently or not at all:
#: named-group references, comments, \A \Z, inline flags, possessive or atomic groups.
PYTHON_ONLY = re.compile(r"\(\?P[=>]|\(\?#|\\[AZ]|\(\?[aiLmsux]|\(\?>|[*+?}]\+")

Translate = Callable[[str], str]
#: The words that open each section's answer on the page.
ANSWER_LABEL = "What explain() and the error box answer for this section's messages:"
#: The words that open the shared words on the page.
SHARED_LABEL = "Every answer is made of these lines, and ends with the last one:"


def _js(pattern: str, where: str) -> str:
    """``pattern`` as JavaScript writes it (named groups), or ``ValueError``."""
    if PYTHON_ONLY.search(pattern):
        raise ValueError(f"{where}: its pattern uses Python-only syntax: {pattern!r}")
    return pattern.replace("(?P<", "(?<")


def shared_texts() -> list[str]:
    """The words every answer may use, whatever its section."""
    return [
        *error_reference.LINES.values(),
        error_reference.CAUSES_HEADING,
        error_reference.SHOWN_HEADING,
        error_reference.ALSO_HEADING,
        error_reference.UNDECIDED_HEADING,
        error_reference.AUDIT_HINT,
        *(note.template for note in NOTES),
        LIBRARY_WRITE.says,
    ]


def section_texts(slug: str) -> Iterator[str]:
    """Section ``slug``'s own words, in the order the page shows them (title first)."""
    kind = error_reference.error_kind(slug)
    yield kind.title
    yield kind.why
    for detail in kind.details:
        yield detail.template
    for cause in kind.causes:
        yield cause.says
        yield cause.fix


def table(translate: Translate = str) -> dict[str, Any]:
    """What the box needs: the rewrites, each section's patterns and words, the shared words."""
    kinds = []
    for kind in ERRORS:
        kinds.append(
            {
                "slug": kind.slug,
                "title": translate(kind.title),
                "why": translate(kind.why),
                "wordings": [_js(w.pattern, kind.slug) for w in kind.wordings],
                "threads": [w.threads for w in kind.wordings],
                "details": [
                    {"pattern": _js(d.pattern, kind.slug), "template": translate(d.template)}
                    for d in kind.details
                ],
                "causes": [
                    {
                        "when": _js(c.when, kind.slug),
                        "first": _js(c.first_when, kind.slug),
                        "says": translate(c.says),
                        "fix": translate(c.fix),
                    }
                    for c in kind.causes
                ],
            }
        )
    return {
        "reading": [_rewrite(r) for r in READING],
        "words": {
            "form": [_rewrite(r) for r in WORD_FORM],
            "small": sorted(SMALL_WORDS),
            "weightless": sorted(WEIGHTLESS),
            "minOpening": MIN_OPENING,
            "minPhrase": MIN_PHRASE,
            "maxWords": MAX_WORDS,
            "wrapWidth": WRAP_WIDTH,
            "literals": [list(literal) for _, _, literal in LITERALS],
            "section": [section for section, _, _ in LITERALS],
            "wording": [wording for _, wording, _ in LITERALS],
        },
        "errorsPage": ERRORS_PAGE,
        "kinds": kinds,
        "notes": [
            {"pattern": _js(n.pattern, "notes"), "template": translate(n.template)} for n in NOTES
        ],
        "library": {
            "when": _js(LIBRARY_WRITE.when, LIBRARY_WRITE.key),
            "says": translate(LIBRARY_WRITE.says),
            "fix": translate(LIBRARY_WRITE.fix),
        },
        "lines": {name: translate(text) for name, text in error_reference.LINES.items()},
        "causesHeading": translate(error_reference.CAUSES_HEADING),
        "shownHeading": translate(error_reference.SHOWN_HEADING),
        "alsoHeading": translate(error_reference.ALSO_HEADING),
        "undecidedHeading": translate(error_reference.UNDECIDED_HEADING),
        "auditHint": translate(error_reference.AUDIT_HINT),
    }


def _rewrite(rewrite: Rewrite) -> dict[str, str]:
    """A rewrite as the box applies it (``$1`` for ``\\1``)."""
    return {
        "pattern": _js(rewrite.pattern, rewrite.why),
        "replacement": re.sub(r"\\(\d)", r"$\1", rewrite.replacement),
        "flags": "gm" if rewrite.multiline else "g",
    }


def patterns() -> list[dict[str, str]]:
    """Each error's slug and pattern (all its wordings), in ``explain()``'s order."""
    return [{"slug": kind.slug, "pattern": _js(kind.pattern, kind.slug)} for kind in ERRORS]


def catalogue_translation(path: Path = CATALOGUE) -> Translate:
    """Translate by the catalogue at ``path``: its msgstr, or the English where it has none."""
    from babel.messages.pofile import read_po  # babel comes with Sphinx

    with path.open("rb") as file:
        catalog = read_po(file)
    done = {
        m.id: m.string
        for m in catalog
        if m.id and isinstance(m.id, str) and m.string and not m.fuzzy
    }
    return lambda text: done.get(text, text)


def script(translate: Translate = str) -> str:
    """The JavaScript that defines the table for the box."""
    body = json.dumps(table(translate), indent=1, ensure_ascii=True)
    return (
        "// Generated by docs/error_patterns.py from inplace_recipes._error_kinds.ERRORS.\n"
        f"window.{GLOBAL} = {body};\n"
    )


def read(text: str) -> dict[str, Any]:
    """The table a generated script defines (the inverse of :func:`script`)."""
    body = text.split(f"window.{GLOBAL} = ", 1)[1].rstrip().removesuffix(";")
    loaded: dict[str, Any] = json.loads(body)
    return loaded


def write(static: Path, translate: Translate = str) -> Path:
    """Write the script into ``static`` (a build's ``_static``); return its path."""
    static.mkdir(parents=True, exist_ok=True)
    path = static / FILE
    path.write_text(script(translate), encoding="utf-8")
    return path


def _build_finished(app: Any, exception: BaseException | None) -> None:
    if exception is None and app.builder.format == "html":
        chinese = str(app.config.language).replace("-", "_") == "zh_CN"
        write(Path(app.outdir) / "_static", catalogue_translation() if chinese else str)


def _answer_directive() -> type:
    from docutils import nodes
    from docutils.parsers.rst import Directive

    class ErrorAnswer(Directive):
        """``{error-answer} slug``: the section's words; without a slug, the shared words."""

        optional_arguments = 1

        def run(self) -> list[Any]:
            source, line = self.state_machine.get_source_and_line(self.lineno)

            def placed(node: Any) -> Any:
                node.source, node.line = source, line  # so that gettext extracts it
                return node

            box = nodes.container(classes=["error-answer"])
            if not self.arguments:
                box["classes"].append("error-answer-shared")
                box += placed(nodes.paragraph(SHARED_LABEL, SHARED_LABEL))
                for text in shared_texts():
                    box += placed(nodes.paragraph(text, text))
                return [box]
            kind = error_reference.error_kind(self.arguments[0])
            box["ids"] = [f"answer-{kind.slug}"]
            box += placed(nodes.paragraph(ANSWER_LABEL, ANSWER_LABEL))
            box += placed(nodes.paragraph(kind.why, kind.why, classes=["error-answer-why"]))
            for detail in kind.details:
                text = detail.template
                box += placed(nodes.paragraph(text, text, classes=["error-answer-detail"]))
            causes = nodes.enumerated_list(classes=["error-answer-causes"])
            for cause in kind.causes:
                item = nodes.list_item()
                item += placed(nodes.paragraph(cause.says, cause.says))
                fix = placed(nodes.literal_block(cause.fix, cause.fix, language="python"))
                item += fix
                causes += item
            box += causes
            return [box]

    return ErrorAnswer


def setup(app: Any) -> dict[str, bool]:
    """Sphinx extension: the answers on the page, the box's scripts and table in every build."""
    app.add_directive("error-answer", _answer_directive())
    app.add_js_file(FILE)
    app.add_js_file("error-box.js")
    app.add_css_file("error-box.css")
    app.connect("build-finished", _build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
