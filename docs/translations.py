"""Keep the Chinese edition complete: catalogues in step with the English pages.

``nox -s docs`` extracts every message of the English site (Sphinx's gettext
builder) and runs ``python docs/translations.py check``: it fails, naming each
message, when a catalogue in ``docs/locale/zh_CN/LC_MESSAGES`` lacks a page's
message, leaves it untranslated or fuzzy, keeps one the pages no longer have,
or breaks the glossary (``docs/locale/zh_CN/glossary.md``). An English edit
therefore cannot land without its translation. ``nox -s translations``
brings the catalogues in step (new messages empty, changed ones fuzzy), ready
to translate.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po, write_po

HERE = Path(__file__).parent
LOCALE = HERE / "locale" / "zh_CN"
CATALOGUES = LOCALE / "LC_MESSAGES"
GLOSSARY = LOCALE / "glossary.md"
REFRESH = "nox -s translations"

#: Messages that change at every build and are not prose: left in English.
VOLATILE = (re.compile(r"Total running time of the script"),)
#: Inline code, roles with their targets, links, substitutions and quoted
#: messages: never translated.
_MARKUP = re.compile(
    r"``.*?``"  # reST inline code
    r"|(?:\{[\w:-]+\}|:[\w:-]+:)`[^`]*`"  # MyST and reST roles, target and all
    r"|`[^`]*`_{0,2}"  # MyST inline code, reST links
    r"|\]\([^)]*\)"  # the address of a Markdown link (its text is prose)
    r"|<[^>]*>|https?://\S+|\|[^|]+\|"  # targets, addresses, reST substitutions
    r"|\{\{[^}]*\}\}"  # MyST substitutions: the build's figures, the same in every language
    r'|"[^"]*"'  # quoted text: torch's messages, which stay as torch prints them
)
#: Words that are units or symbols, not prose.
UNITS = frozenset({"B", "KiB", "MiB", "GiB", "ms", "us", "µs", "ns", "e", "x"})
_ENGLISH_RUN = re.compile(r"[A-Za-z]{2,}(?:[\s,;:-]+[A-Za-z]{2,}){2,}")
_CJK = re.compile(r"[\u3400-\u9fff]")


def prose(message: str) -> str:
    """``message`` without markup that stays as it is (code, roles, links).

    >>> prose("Use ``torch.where`` (see :func:`~ir.where`, {doc}`where <w>`) [here](x.html)")
    'Use  (see , ) [here'
    """
    return _MARKUP.sub("", message)


def needs_translation(msgid: str) -> bool:
    """Whether ``msgid`` has words to translate (not code or figures alone).

    >>> needs_translation("`x[i] = v`"), needs_translation("3.8 MiB"), needs_translation("✓ exact")
    (False, False, True)
    """
    if any(pattern.search(msgid) for pattern in VOLATILE):
        return False
    return any(word not in UNITS for word in re.findall(r"[A-Za-zµ]+", prose(msgid)))


def looks_untranslated(msgid: str, msgstr: str) -> bool:
    """A translation with no Chinese where the English has a run of three words or more.

    >>> looks_untranslated("Pick the value with a mask", "Pick the value with a mask")
    True
    >>> looks_untranslated("Pick the value with a mask", "用掩码选择值")
    False
    """
    if not msgstr:
        return True
    return bool(_ENGLISH_RUN.search(prose(msgid))) and not _CJK.search(msgstr)


@dataclass(frozen=True)
class Term:
    """One glossary entry: the English term and the one Chinese rendering of it."""

    english: str
    chinese: str

    def pattern(self) -> re.Pattern[str]:
        words = r"\s+".join(re.escape(w) for w in self.english.split())
        return re.compile(rf"(?<![\w-]){words}(?:e?s)?(?![\w-])", re.IGNORECASE)


def read_glossary(path: Path = GLOSSARY) -> list[Term]:
    """The glossary's table rows ``| English | 中文 | note |``, header and rule skipped."""
    terms = []
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.lstrip().startswith("|") or len(cells) < 2 or set(cells[0]) <= {"-", ":"}:
            continue
        if cells[0].lower() == "english":
            continue
        terms.append(Term(cells[0].strip("`"), cells[1]))
    return terms


def _read(path: Path) -> Catalog:
    with path.open("rb") as handle:
        return read_po(handle)


def _messages(catalog: Catalog) -> dict[str, tuple[str, bool]]:
    out = {}
    for message in catalog:
        if not message.id or not isinstance(message.id, str):
            continue
        msgstr = message.string if isinstance(message.string, str) else ""
        out[message.id] = (msgstr, message.fuzzy)
    return out


def catalogue_problems(catalogues: Path, templates: Path | None, terms: list[Term]) -> list[str]:
    """Every way the catalogues fall short, one line each (empty when all is well).

    ``templates`` is the gettext builder's output (``.pot`` files); without it
    only the catalogues themselves are checked (translated, not fuzzy, glossary).
    """
    problems: list[str] = []
    pos = {p.relative_to(catalogues).with_suffix(""): p for p in catalogues.rglob("*.po")}
    pots = {}
    if templates is not None:
        pots = {p.relative_to(templates).with_suffix(""): p for p in templates.rglob("*.pot")}
        for page in sorted(set(pots) - set(pos)):
            if any(needs_translation(m) for m in _messages(_read(pots[page]))):
                problems.append(f"{page}: no catalogue {page}.po")
        for page in sorted(set(pos) - set(pots)):
            problems.append(f"{page}.po: the English site has no page {page}")
    for page, path in sorted(pos.items()):
        have = _messages(_read(path))
        if page in pots:
            wanted = {m for m in _messages(_read(pots[page])) if needs_translation(m)}
            problems += [f"{page}: missing: {m!r}" for m in sorted(wanted - set(have))]
            stale = {m for m in set(have) - wanted if needs_translation(m)}
            problems += [f"{page}: no longer on the page: {m!r}" for m in sorted(stale)]
        for msgid, (msgstr, fuzzy) in have.items():
            if not needs_translation(msgid):
                continue
            if fuzzy:
                problems.append(f"{page}: fuzzy: {msgid!r}")
            elif looks_untranslated(msgid, msgstr):
                problems.append(f"{page}: untranslated: {msgid!r}")
            else:
                for term in terms:
                    if term.pattern().search(prose(msgid)) and term.chinese not in msgstr:
                        problems.append(
                            f"{page}: glossary: {term.english!r} is {term.chinese!r} in {msgid!r}"
                        )
    return problems


def prune(catalogues: Path = CATALOGUES) -> int:
    """Drop volatile messages (see :data:`VOLATILE`) from the catalogues; return how many."""
    dropped = 0
    for path in sorted(catalogues.rglob("*.po")):
        catalog = _read(path)
        volatile = [m.id for m in catalog if m.id and any(p.search(str(m.id)) for p in VOLATILE)]
        for msgid in volatile:
            catalog.delete(msgid)
        if volatile:
            with path.open("wb") as handle:
                write_po(handle, catalog, width=0)
            dropped += len(volatile)
    return dropped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["check", "prune"])
    parser.add_argument(
        "--templates", type=Path, help="the gettext builder's output (.pot); omit to skip"
    )
    parser.add_argument("--catalogues", type=Path, default=CATALOGUES)
    args = parser.parse_args(argv)
    if args.command == "prune":
        print(f"dropped {prune(args.catalogues)} volatile messages")
        return 0
    problems = catalogue_problems(args.catalogues, args.templates, read_glossary())
    if problems:
        shown = "\n".join(f"  {p}" for p in problems[:40])
        more = f"\n  ... and {len(problems) - 40} more" if len(problems) > 40 else ""
        print(
            f"The Chinese edition is out of date ({len(problems)} problems):\n{shown}{more}\n"
            f"Run `{REFRESH}`, then translate the empty and fuzzy messages in "
            f"{args.catalogues} (terms: {GLOSSARY.relative_to(HERE.parent)}).",
            file=sys.stderr,
        )
        return 1
    print(f"The Chinese edition is complete: {args.catalogues}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
