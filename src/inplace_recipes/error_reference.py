"""Say in plain words what an autograd in-place error means, and how to fix it.

:func:`explain` reads a message as users paste it (any torch release's
wording, wrapped, prefixed, inside a traceback: see
:mod:`inplace_recipes._error_reading`), finds its section of the error
reference (``errors.html``) in the table of :mod:`inplace_recipes._error_kinds`,
and answers with the causes that fit what the message says and the fix for
each. A paste that no wording's pattern matches, because it is cut or
retyped, is found by its wording's words (:mod:`inplace_recipes._error_words`);
where those words fit several sections, the answer says so. The site's error
box gives the same answer, from the same table.

>>> import torch
>>> a = torch.ones(3, requires_grad=True)
>>> try:
...     a[0] = 0.0
... except RuntimeError as error:
...     print(explain(error).slug)
view-of-leaf
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from ._error_kinds import (
    ERRORS,
    ERRORS_PAGE,
    LIBRARY_WRITE,
    NOTES,
    Cause,
    Detail,
    ErrorKind,
    Wording,
)
from ._error_reading import message_of, read
from ._error_words import MIN_PHRASE, Match, heaviest_runs, matches, pasted, unwrapped

__all__ = ["ERRORS", "ErrorKind", "Explanation", "error_kind", "explain"]

#: The last lines of an answer that lists several causes: the audit finds which.
AUDIT_HINT = (
    "To find the line: inplace_recipes.audit names the line of each in-place write (python -m "
    "inplace_recipes audit your_script.py); a line inside another library, or inside torch, is "
    "not your code: upgrade that library, or report it there with the fix above."
)
#: The line that opens the list of causes.
CAUSES_HEADING = "Causes that fit this message, the most frequent first:"
#: That line when the paste itself shows a cause (the line that wrote, a library's file, a word
#: such as DistributedDataParallel): that cause comes first.
SHOWN_HEADING = (
    "Causes that fit this message, first the one the paste shows, then the most frequent:"
)
#: The answer's first line for a message that no section covers.
NOT_RECOGNISED = "Not recognised as an autograd in-place error"
#: The line after the title when the paste fits other sections as well; one line each follows.
ALSO_HEADING = (
    "The paste ends, or is reworded, before the words that tell these sections apart; it may "
    "also be:"
)
#: The first line when the paste fits several sections that are seen equally often.
UNDECIDED_HEADING = (
    "The paste ends, or is reworded, before the words that tell these sections apart, which "
    "real threads print equally often; it may be any of:"
)
#: How an answer's lines are written; ``{name}`` is filled in (the box fills them alike).
LINES = {
    "title": "{title}.",
    "cause": "Cause: {says}",
    "fix": "Fix: {fix}",
    "numbered": "{n}. {says} Fix: {fix}",
    "section": "{title}: {url}",
}


def fill(template: str, values: dict[str, str]) -> str:
    """``template`` with each ``{name}`` replaced by ``values[name]`` (no other syntax).

    >>> fill("{n}. {says}", {"n": "1", "says": "A {brace} stays."})
    '1. A {brace} stays.'
    """
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m[1], m[0]), template)


@dataclass(frozen=True)
class Explanation:
    """What :func:`explain` found; ``str()`` is the plain-words answer.

    ``kind`` is ``None`` for a message the error reference does not cover.
    ``causes`` are the section's causes that fit the message, the most
    frequent first, after any that the paste shows (``shown``: the line that
    wrote, a library's file; see ``Cause.first_when``); ``fix`` is the first
    one's fix (the fix shown first).
    ``alternatives`` are the other sections that a cut or reworded paste fits
    as well, the most frequent first; when ``kind`` is ``None`` they are the
    sections it fits, seen equally often, and the answer does not choose.
    """

    message: str
    kind: ErrorKind | None
    details: str = ""
    fix: str = ""
    causes: tuple[Cause, ...] = ()
    wording: Wording | None = None
    alternatives: tuple[ErrorKind, ...] = ()
    shown: bool = False

    @property
    def recognized(self) -> bool:
        """Whether the message is one of the error reference's errors."""
        return self.kind is not None

    @property
    def slug(self) -> str | None:
        """The section's anchor without the ``error-`` prefix, or ``None``."""
        return None if self.kind is None else self.kind.slug

    @property
    def url(self) -> str | None:
        """The section's address relative to the site root, or ``None``."""
        return None if self.kind is None else self.kind.url

    @property
    def fix_class(self) -> str | None:
        """The kind of the first fix (``"torch-no-grad"``, ``"out-of-place-rewrite"``, ...), or ``None``."""
        return self.causes[0].fix_class if self.causes else None

    def lines(self) -> list[str]:
        """The answer's lines without its link: what the site's error box shows."""
        others = [
            fill(LINES["section"], {"title": kind.title, "url": kind.url})
            for kind in self.alternatives
        ]
        if self.kind is None:
            return [UNDECIDED_HEADING, *others] if others else []
        lines = [fill(LINES["title"], {"title": self.kind.title})]
        if others:
            lines += [ALSO_HEADING, *others]
        lines.append(self.kind.why)
        if self.details:
            lines.append(self.details)
        if len(self.causes) == 1:
            values = {"says": self.causes[0].says, "fix": self.causes[0].fix}
            lines += [fill(LINES["cause"], values), fill(LINES["fix"], values)]
        else:
            lines.append(SHOWN_HEADING if self.shown else CAUSES_HEADING)
            lines += [
                fill(LINES["numbered"], {"n": str(n), "says": c.says, "fix": c.fix})
                for n, c in enumerate(self.causes, 1)
            ]
        lines.append(AUDIT_HINT)
        return lines

    def __str__(self) -> str:
        if self.kind is None and self.alternatives:
            return "\n".join(self.lines())
        if self.kind is None:
            first = self.message.strip().splitlines()[0] if self.message.strip() else ""
            return f"{NOT_RECOGNISED}: {first[:200]!r}\nKnown errors: {ERRORS_PAGE}"
        return "\n".join([*self.lines(), f"See: {self.kind.url}"])


def _search(pattern: str, text: str) -> re.Match[str] | None:
    # ASCII: \w and \b as JavaScript reads them, so that the box matches alike
    return re.search(pattern, text, re.ASCII)


def _filled(details: tuple[Detail, ...], text: str) -> list[str]:
    """Each detail whose pattern matches ``text``, filled in from the match."""
    filled = []
    for detail in details:
        found = _search(detail.pattern, text)
        if found:
            filled.append(fill(detail.template, found.groupdict()))
    return filled


def _pattern(text: str) -> tuple[ErrorKind, Wording] | None:
    """The first section whose wording's pattern matches ``text``, and that wording."""
    for kind in ERRORS:
        wording = next((w for w in kind.wordings if _search(w.pattern, text)), None)
        if wording is not None:
            return kind, wording
    return None


def sections(text: str) -> list[Match]:
    """The sections an already read message may be, the most frequent first.

    The section whose pattern matches, with each section whose run of words, as
    heavy, goes on to the end of the paste or of its literal (a paste cut before
    the words that tell them apart); unless the message holds a heavier run of
    another section's words that goes on so, or one heavier by
    :data:`~inplace_recipes._error_words.MIN_PHRASE` words (the pattern matched
    part of a longer or retyped wording: ``a view on a leaf Variable ...``).
    Without a pattern, the sections whose runs of words weigh the most
    (:func:`~inplace_recipes._error_words.matches`).
    """
    runs = heaviest_runs(*pasted(text))
    found = matches(runs)
    exact = _pattern(text)
    if exact is not None:
        kind, wording = exact
        heavy = {m.kind.slug: m for m in found}
        own = heavy.get(kind.slug, Match(kind, wording, 0, wording.threads))
        clean = {m.kind.slug: m for m in matches(runs, clean=True)}
        found = []
        for other in ERRORS:
            run, clean_run = heavy.get(other.slug), clean.get(other.slug)
            if other is kind:
                continue
            if run is not None and run.weight >= own.weight + MIN_PHRASE:
                found.append(run)
            elif clean_run is not None and clean_run.weight > own.weight:
                found.append(clean_run)
        if not found:
            ties = [m for m in clean.values() if m.kind is not kind and m.weight == own.weight]
            mine = Match(kind, wording, own.weight, own.threads)
            return _ranked([mine, *(ties if own.weight else [])])
    heaviest = max((m.weight for m in found), default=0)
    return _ranked([m for m in found if m.weight == heaviest])


def _ranked(found: list[Match]) -> list[Match]:
    order = {kind.slug: n for n, kind in enumerate(ERRORS)}
    return sorted(found, key=lambda m: (-m.threads, order[m.kind.slug]))


def answer(text: str) -> Explanation:
    """The explanation of an already read message (see :func:`explain`)."""
    found = sections(text)
    if len(found) > 1 and found[0].threads == found[1].threads:
        return Explanation(text, None, alternatives=tuple(m.kind for m in found))
    if not found:
        return Explanation(text, None)
    kind, wording = found[0].kind, found[0].wording
    causes = tuple(c for c in kind.causes if not c.when or _search(c.when, text))
    causes = causes or kind.causes  # a message too short to tell: every cause fits
    shown = tuple(c for c in causes if c.first_when and _search(c.first_when, text))
    causes = shown + tuple(c for c in causes if c not in shown)
    if _search(LIBRARY_WRITE.when, text):
        causes = (LIBRARY_WRITE, *causes)
        shown = (LIBRARY_WRITE, *shown)
    details = " ".join(_filled(kind.details, text) + _filled(NOTES, text))
    others = tuple(m.kind for m in found[1:])
    return Explanation(
        text, kind, details, causes[0].fix, causes, wording, others, shown=bool(shown)
    )


def explain(error: BaseException | str) -> Explanation:
    """Explain an autograd in-place error (an exception or its message).

    Never raises for an unknown message, nor for an exception whose ``str()``
    fails: the result then says it is not recognised (``recognized`` is
    ``False``). Anything else than an exception or a str is a ``TypeError``.
    The answer names the causes that fit what the message says (its node, a
    leaf, its release's form), the most frequent first, with the fix for
    each; a message that ``torch.compile`` wrapped is explained as the eager
    error inside it.

    >>> print(explain("leaf variable has been moved into the graph interior").url)
    errors.html#error-graph-interior
    >>> explain("CUDA out of memory").recognized
    False
    """
    message = message_of(error)
    explained = answer(read(unwrapped(message)))
    return dataclasses.replace(explained, message=message)


def error_kind(slug: str) -> ErrorKind:
    """The :class:`ErrorKind` with this slug (``KeyError`` if none)."""
    return _BY_SLUG[slug]


_BY_SLUG = {kind.slug: kind for kind in ERRORS}
