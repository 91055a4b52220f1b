"""Find a message's section by its wording's words: for a paste cut, retyped or reworded.

A wording's pattern matches the message as torch prints it. Users also paste
it cut (anywhere, mid-word too: ``... in no_grad mod``), retyped (a small word
missing or changed: ``leaf Variable that ...``, ``moved to graph interior``; other
case and punctuation), or in their own words around its distinctive phrase.
:func:`words` reduces a message to the words that carry its meaning (lower
case, no punctuation, no small words, numbers and node names as classes), and
:func:`heaviest_runs` finds, in each literal message of the table reduced alike
(:attr:`Wording.literals <inplace_recipes._error_kinds.Wording.literals>`),

- the heaviest run of words that opens the literal (a paste of its start, cut
  after at least :data:`MIN_OPENING` weighty words), and
- the heaviest run found in no other section's literals (a distinctive phrase
  of at least :data:`MIN_PHRASE` weighty words);

the paste's last word may be cut (``mod`` for ``mode``); numbers and unknown
node names weigh nothing. :func:`matches` gives each section its heaviest run;
:func:`inplace_recipes.error_reference.sections` weighs them against the
wordings' patterns: sections whose runs weigh as much are all possible (a paste
cut before the words that tell them apart), ranked by how many threads of the
real-message data set print their wording (``Wording.threads``). These rules are
data and a few lines of code, which the site's error box runs alike
(``docs/_static/error-box.js``).

>>> words("RuntimeError: Leaf Variable has been moved to graph interior")
('leaf', 'variable', 'moved', 'graph', 'interior')
>>> runs = heaviest_runs(*pasted("leaf variable has been moved to graph"))
>>> [(m.kind.slug, m.weight) for m in matches(runs)]
[('graph-interior', 4)]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

from ._error_kinds import _MULTI_OUTPUT_NODES, ERRORS, ErrorKind, Wording
from ._error_reading import Rewrite, read

__all__ = [
    "LITERALS",
    "MAX_WORDS",
    "MIN_OPENING",
    "MIN_PHRASE",
    "SMALL_WORDS",
    "WEIGHTLESS",
    "WORD_FORM",
    "WRAP_WIDTH",
    "Match",
    "heaviest_runs",
    "literal_words",
    "matches",
    "pasted",
    "unwrapped",
    "words",
]

#: Words whose absence, or replacement by another, changes no wording's meaning here.
SMALL_WORDS = frozenset(
    {
        *("a", "an", "the", "of", "in", "into", "to", "onto", "on", "at", "by", "for", "from"),
        *("with", "as", "is", "are", "was", "were", "be", "been", "being", "has", "have", "had"),
        *("do", "does", "did", "it", "its", "this", "that", "these", "those", "which", "who"),
        *("there", "and", "or", "but", "you", "your", "we", "our", "t", "s"),
    }
)
#: "output N of" before a node's name, its small word left out or changed too
_NODE = rf"\b(output [0-9]{{1,6}} )(?:(?:{'|'.join(sorted(SMALL_WORDS))}) )?"
#: The rewrites that give a read message's words, applied in order after ASCII
#: letters are made lower case; what remains is split into runs of letters and ``#``.
WORD_FORM: tuple[Rewrite, ...] = (
    Rewrite("typographic apostrophes: one apostrophe", "[\u2018\u2019]", "'"),
    # RuntimeError:, UserWarning:, torch._dynamo.exc.TorchRuntimeError: ...
    Rewrite(
        "an exception's or a warning's class name",
        r"\b[a-z][a-z0-9_.]{0,200}(?:error|warning|exception)\b",
        " ",
    ),
    Rewrite("cannot, can't, can t, cant, can not: one word", r"\bcan(?:'? ?t| not)\b", "cannot"),
    Rewrite("won't, wont: will not", r"\bwon'? ?t\b", "will not"),
    Rewrite(
        "doesn't, doesnt, ...: not",
        r"\b(do|does|did|is|are|was|were|has|have|had|could|would|should)n'? ?t\b",
        "\\1 not",
    ),
    Rewrite("in-place, in place, inplace: one word", r"\bin[- ]place\b", "inplace"),
    # a node name tells the multi-output, the hook's and the other sections apart:
    # the name as a class, the same in every release's spelling
    Rewrite(
        "a multi-output op's node",
        rf"{_NODE}(?:{_MULTI_OUTPUT_NODES.lower()})(?:backward[0-9]{{0,3}})?\b",
        "\\1multiview",
    ),
    Rewrite(
        "a full backward hook's node",
        rf"{_NODE}backwardhookfunction(?:backward[0-9]{{0,3}})?\b",
        "\\1hooknode",
    ),
    Rewrite("any other node", rf"{_NODE}(?!multiview\b|hooknode\b)[\w:.]{{1,200}}", "\\1node"),
    Rewrite("a number", "[0-9]+", " # "),
    Rewrite("an underscore: a space (no_grad, no grad)", "_", " "),
)
#: Words that count for nothing in a run's weight: any number, any other node.
WEIGHTLESS = frozenset({"#", "node"})
#: A paste's run that opens a wording's literal must weigh this much.
MIN_OPENING = 3
#: A run found in one section's literals only must weigh this much.
MIN_PHRASE = 4
#: The most words of a paste read (its last ones: the error a traceback ends with), so that
#: a long log stays quick to read; the wordings' patterns still search all of it.
MAX_WORDS = 5000


def _all_words(text: str) -> list[str]:
    text = re.sub("[A-Z]+", lambda m: m[0].lower(), text)  # ASCII only, as JavaScript does
    for rewrite in WORD_FORM:
        text = re.sub(rewrite.pattern, rewrite.replacement, text, flags=re.ASCII)
    return re.findall("[a-z]+|#", text)


def words(text: str) -> tuple[str, ...]:
    """The words of ``text`` (as :func:`~inplace_recipes._error_reading.read` gives it)."""
    return tuple(w for w in _all_words(text) if w not in SMALL_WORDS)


def pasted(text: str) -> tuple[tuple[str, ...], bool]:
    """The words of a paste, and whether the last may be cut short (the paste ends inside a
    word). A last word that may be a small word cut short (``i``, ``th``) is left out.

    >>> pasted("A view was created in no_grad mod")
    (('view', 'created', 'no', 'grad', 'mod'), True)
    >>> pasted("Output 0 of Unbind is a view and i")
    (('output', '#', 'multiview', 'view'), False)
    """
    found = _all_words(text)
    cut = re.fullmatch("[A-Za-z0-9]", text[-1:]) is not None and bool(found)
    if cut and any(small.startswith(found[-1]) for small in SMALL_WORDS):
        found, cut = found[:-1], False
    return tuple(w for w in found if w not in SMALL_WORDS)[-MAX_WORDS:], cut


@dataclass(frozen=True)
class Match:
    """A section's heaviest run of words in a paste.

    ``wording`` is the wording whose literal holds it (the most printed of those
    that hold as heavy a run), ``threads`` what those wordings' threads add up to.
    """

    kind: ErrorKind
    wording: Wording
    weight: int
    threads: int


def literal_words(wording: Wording) -> list[tuple[str, ...]]:
    """The words of each of a wording's literal messages (:attr:`Wording.literals`) that the
    words reader reads (none where ``Wording.read_by_words`` is ``False``)."""
    return [_LITERALS[n] for n in _FORMS_OF[id(wording)]]


def _occurs(run: tuple[str, ...], cut: bool, literal: tuple[str, ...]) -> bool:
    """Whether ``run`` is a run of ``literal`` (its last word, if ``cut``, a start of one)."""
    n = len(run)
    for start in range(len(literal) - n + 1):
        last = literal[start + n - 1]
        if literal[start : start + n - 1] == run[:-1] and (
            last == run[-1] or (cut and last.startswith(run[-1]))
        ):
            return True
    return False


def heaviest_runs(paste: tuple[str, ...], cut: bool = False) -> list[tuple[int, int]]:
    """For each literal (:data:`LITERALS`' order), the weight of its heaviest run in ``paste``
    that opens it or is found in no other section's literal, and of its heaviest such run
    that goes on to the end of the literal or of the paste (a run that other words cut
    short may be a coincidence). ``cut``: the paste's last word may be cut short."""
    heaviest = [[0, 0] for _ in _LITERALS]
    before: dict[tuple[int, int], tuple[int, int]] = {}
    for i, word in enumerate(paste):
        open_end = cut and i == len(paste) - 1
        where = _starting(word) if open_end else _WHERE.get(word, ())
        now: dict[tuple[int, int], tuple[int, int]] = {}
        for n, j in where:
            length, weight = before.get((n, j - 1), (0, 0))
            length, weight = length + 1, weight + (word not in WEIGHTLESS)
            now[n, j] = length, weight
            best = heaviest[n]
            clean = j == len(_LITERALS[n]) - 1 or i == len(paste) - 1
            if weight <= best[clean]:  # best[1] <= best[0]: nothing to learn
                continue
            run = paste[i - length + 1 : i + 1]
            opening = j - length + 1 == 0 and weight >= MIN_OPENING
            if opening or (
                weight >= MIN_PHRASE and not any(_occurs(run, open_end, o) for o in _OTHERS[n])
            ):
                best[0] = max(best[0], weight)
                if clean:
                    best[1] = weight
        before = now
    return [(any_run, clean_run) for any_run, clean_run in heaviest]


def _starting(word: str) -> list[tuple[int, int]]:
    return [
        (n, j) for n, lit in enumerate(_LITERALS) for j, w in enumerate(lit) if w.startswith(word)
    ]


def matches(runs: list[tuple[int, int]], clean: bool = False) -> list[Match]:
    """Each section's heaviest run, from :func:`heaviest_runs`, in the table's order.

    ``clean``: only runs that go on to the end of the literal or of the paste.
    """
    found = []
    for kind in ERRORS:
        mine = [
            (max((runs[n][clean] for n in _FORMS_OF[id(w)]), default=0), w) for w in kind.wordings
        ]
        heaviest = max(weight for weight, _ in mine)
        if heaviest:
            best = [w for weight, w in mine if weight == heaviest]
            wording = max(best, key=lambda w: w.threads)  # the first of the most printed
            found.append(Match(kind, wording, heaviest, sum(w.threads for w in best)))
    return found


#: The narrowest terminal whose hard wrapping :func:`unwrapped` undoes.
WRAP_WIDTH = 60


def unwrapped(message: str) -> str:
    """``message`` with a terminal's hard wrapping undone.

    A terminal (or a log viewer) breaks each line where it reaches its width, anywhere, mid-word
    too (``which is o`` / ``utput 0 of``), and keeps every character; an editor's word wrap
    breaks at a space and drops it (``modified`` / ``by an inplace``). A row as long as the
    longest, at least :data:`WRAP_WIDTH` characters, is joined to the next with nothing between
    where only a terminal breaks so: inside a word of the table's literals or a node's name, in
    two pieces that are not both words. Where two rows or more are that long and one of them
    breaks such a word into two pieces that are neither of them a word (``o`` / ``utput``),
    and none breaks between two words with no space (``and`` / ``its``, which a terminal does
    not print), the rows are a terminal's, and each of them is joined to the next. Every other
    line break is left as it is (read as a space). A row with characters two columns wide
    (CJK) holds fewer characters than the terminal's width: its break is left as it is. The
    box does the same (``docs/_static/error-box.js``).

    >>> line = ("one of the variables needed for gradient computation has been modified by an "
    ...         "inplace operation: [torch.FloatTensor [20, 1]], which is output 0 of T")
    >>> rows = [line[n : n + 68] for n in range(0, len(line), 68)]  # a terminal 68 wide
    >>> rows[0][-6:], rows[1][:6], unwrapped("\\n".join(rows)) == line
    ('modifi', 'ed by ', True)
    >>> soft = ("one of the variables needed for gradient computation has been modified\\nby an "
    ...         "inplace operation: [torch.FloatTensor [3]], which is output 0 of\\nSigmoid, is at "
    ...         "version 1; expected version 0 instead.")  # an editor's word wrap
    >>> [len(row) for row in soft.splitlines()], unwrapped(soft) == soft
    ([70, 70, 53], True)
    """
    rows = re.split(r"\r\n?|\n", message)
    width = max(len(row) for row in rows)
    if width < WRAP_WIDTH:
        return message
    splits = [
        _split_word(before, row) if len(before) == width else 0 for before, row in pairwise(rows)
    ]
    every = sum(len(row) == width for row in rows) >= 2 and 2 in splits and -1 not in splits
    joined = [rows[0]]
    for n, row in enumerate(rows[1:]):
        if splits[n] > 0 or (every and len(rows[n]) == width):
            joined[-1] += row
        else:
            joined.append(row)
    return "\n".join(joined)


def _split_word(row: str, after: str) -> int:
    """How surely ``row`` ends and ``after`` starts inside one word of the literals (a small
    word too) or of a node's name (``TBack`` / ``ward``): 2 where neither piece is a word, 1
    where one is, 0 where both are or there is no such word; -1 where the pieces are two
    words and make none (``and`` / ``its``: an editor's break, where a terminal keeps the
    space). Only the ends of the two rows are read (a word is short)."""
    left, right = re.search("[A-Za-z]+$", row[-40:]), re.match("[A-Za-z]+", after[:40])
    if left is None or right is None:
        return 0
    a, b = left[0].lower(), right[0].lower()
    # a node's name goes on in lower case (TBack / ward); a new one starts upper (of / Sigmoid)
    node = right[0][0].islower() and re.fullmatch("[a-z]+backward", a + b) is not None
    words = (a in _VOCABULARY) + (b in _VOCABULARY)
    if not (a + b in _VOCABULARY or node):
        return -1 if words == 2 else 0
    return 2 - words


#: Each literal message of the table: ``(section's number, wording's number, words)``.
LITERALS: list[tuple[int, int, tuple[str, ...]]] = [
    (k, w, words(read(literal)))
    for w, (k, wording) in enumerate(
        (k, wording) for k, kind in enumerate(ERRORS) for wording in kind.wordings
    )
    for literal in (wording.literals if wording.read_by_words else ())
]
_LITERALS = [literal for _, _, literal in LITERALS]
_WORDINGS = [wording for kind in ERRORS for wording in kind.wordings]
_FORMS_OF = {
    id(wording): [n for n, (_, w, _) in enumerate(LITERALS) if w == number]
    for number, wording in enumerate(_WORDINGS)
}
_OTHERS = [[lit for k2, _, lit in LITERALS if k2 != k] for k, _, _ in LITERALS]
#: Every word of the literals (those a terminal may break in two, :func:`unwrapped`).
_VOCABULARY = (frozenset(word for literal in _LITERALS for word in literal) | SMALL_WORDS) - {
    *WEIGHTLESS
}
#: Where each word is in the literals: ``(literal's number, position)``.
_WHERE: dict[str, list[tuple[int, int]]] = {}
for _n, _literal in enumerate(_LITERALS):
    for _j, _word in enumerate(_literal):
        _WHERE.setdefault(_word, []).append((_n, _j))
