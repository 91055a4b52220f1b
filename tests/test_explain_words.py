"""explain() on pastes cut, retyped or reworded: the right section, all that fit, or none.

Users paste a message cut (anywhere, mid-word too), retyped (a small word
missing or changed, other case, other punctuation) or in their own words around
its distinctive phrase. No wording's pattern matches such a paste; explain()
then reads its words (``inplace_recipes._error_words``). The precision tests
below cut every literal message of the table (every wording's example and its
other forms) at every character, and retype each; the sections a paste may be
are those with a literal that starts with the paste's words. explain() must
name each of them (the first as its section, the others as alternatives) or
none, and never a section whose literals do not fit; a cut that fits one section
and opens with MIN_OPENING weighty words must be found. Measured on 12,438 cuts
and 3,731 retypings: none wrong, none too narrow, 11,268 cuts and every retyping
found (before the words were read: 62 cuts and 30 retypings got a wrong section,
513 cuts one section where two fit, 8,464 cuts and 2,581 retypings were found).
The class tests use explain() alone, so that they run on any version of it.
"""

from __future__ import annotations

import re

import pytest

from inplace_recipes import explain
from inplace_recipes._error_kinds import ERRORS
from inplace_recipes._error_reading import read
from inplace_recipes._error_words import MIN_OPENING, SMALL_WORDS, WEIGHTLESS, literal_words, pasted

FORMS = [(kind.slug, literal) for kind in ERRORS for w in kind.wordings for literal in w.literals]
#: The literals the words reader reads (a retyped paste is found by its words alone).
READ_FORMS = [
    (kind.slug, literal)
    for kind in ERRORS
    for w in kind.wordings
    if w.read_by_words
    for literal in w.literals
]


def _named(text: str) -> list[str]:
    explained = explain(text)
    also = [kind.slug for kind in getattr(explained, "alternatives", ())]
    return ([explained.slug] if explained.slug else []) + also


def _starts(words: tuple[str, ...], cut: bool, literal: tuple[str, ...]) -> bool:
    if len(words) > len(literal):
        return False
    if not words:
        return True
    last = literal[len(words) - 1]
    return literal[: len(words) - 1] == words[:-1] and (
        last == words[-1] or (cut and last.startswith(words[-1]))
    )


def fitting(text: str) -> set[str]:
    """The sections with a literal message that starts with the words of ``text``."""
    words, cut = pasted(read(text))
    return {
        kind.slug
        for kind in ERRORS
        for wording in kind.wordings
        for literal in literal_words(wording)
        if _starts(words, cut, literal)
    }


def _judge(text: str, origin: str) -> str:
    """``"none"``, ``"right"``, or what is wrong with explain()'s sections for ``text``."""
    may_be = fitting(text) | {origin}
    named = _named(text)
    explained = explain(text)
    if not named:
        words, _ = pasted(read(text))
        heavy = sum(word not in WEIGHTLESS for word in words) >= MIN_OPENING
        opening = heavy and len(may_be) == 1 and fitting(text)
        return "missed" if opening else "none"
    if explained.slug is not None and explained.slug not in may_be:
        return f"wrong: {explained.slug} for {sorted(may_be)}"
    if not may_be <= set(named):
        return f"too narrow: {named} for {sorted(may_be)}"
    return "right"


def _retypings(message: str) -> list[str]:
    """``message`` in other case, without punctuation, quoted, with a small word left out or
    changed, after the exception's name."""
    found = [
        message.lower(),
        message.upper(),
        message.title(),
        re.sub(r"[^\w\s]", " ", message),
        re.sub(r"[^\w\s]", "", message),
        f"RuntimeError: {message}",
        f"`{message}`",
        f'"{message}"',
        message.replace(" ", "\n"),
    ]
    parts = re.split(r"(\s+)", message)
    for i, part in enumerate(parts):
        if part.lower() in SMALL_WORDS:
            found.append("".join(parts[:i] + parts[i + 2 :]))
            found += [
                "".join([*parts[:i], other, *parts[i + 1 :]]) for other in ("the", "to", "was")
            ]
    return found


@pytest.mark.slow
@pytest.mark.parametrize(("slug", "literal"), FORMS, ids=[f"{s}: {m[:40]}" for s, m in FORMS])
def test_every_cut_of_a_literal_gets_its_sections_or_none(slug: str, literal: str) -> None:
    """A cut that fits one section and holds an opening of MIN_OPENING weighty words is found."""
    judged = {literal[:n]: _judge(literal[:n], slug) for n in range(1, len(literal) + 1)}
    assert {cut: j for cut, j in judged.items() if j not in ("right", "none")} == {}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("slug", "literal"), READ_FORMS, ids=[f"{s}: {m[:40]}" for s, m in READ_FORMS]
)
def test_every_retyping_of_a_literal_gets_its_section(slug: str, literal: str) -> None:
    judged = {text: _judge(text, slug) for text in _retypings(literal)}
    assert {text: j for text, j in judged.items() if j != "right"} == {}


@pytest.mark.parametrize(
    ("paste", "slug"),
    [
        # cut mid-word, after its distinctive first words
        ("one of the variables needed for gradient computation has been modif",
         "saved-tensor-modified"),
        ("RuntimeError: a leaf Variable that requires grad is being used in an in-pl", "leaf"),
        ("Can't detach views in-pl", "detach-view"),
        # a small word left out or changed
        ("view of leaf Variable that requires grad is being used in in-place operation.",
         "view-of-leaf"),
        ("the leaf variable was moved to the graph interior", "graph-interior"),
        ("Some elements marked as dirty during the forward method are not returned as output.",
         "mark-dirty"),
        # other case and punctuation
        ("CANNOT RESIZE VARIABLES THAT REQUIRE GRAD", "resize"),
        ("inplace update to inference tensor outside inference mode is not allowed", "inference-tensor"),
        # a paraphrase that keeps the distinctive phrase
        (("my loop fails: the variables needed for gradient computation were modified in place "
          "somewhere, at version 3 expected version 2"), "saved-tensor-modified"),
        (("torch says more than one element of the written-to tensor refers to a single memory "
          "location"), "expanded"),
        # a pattern's words inside a longer wording, retyped: the longer wording's section
        ("a view on a leaf Variable that requires grad is being used in an in-place operation.",
         "view-of-leaf"),
    ],
)  # fmt: skip
def test_a_paste_cut_retyped_or_reworded_gets_its_section(paste: str, slug: str) -> None:
    assert explain(paste).slug == slug


def test_a_paste_cut_where_two_sections_share_the_words_says_so() -> None:
    """Torch prints this first sentence before the no_grad tail and before a custom Function's."""
    paste = (
        "A view was created in no_grad mode and is being modified inplace with grad mode enabled."
    )
    explained = explain(paste)
    assert explained.slug == "no-grad-view"  # the one more real threads print
    assert [k.slug for k in getattr(explained, "alternatives", ())] == ["custom-function-view"]
    assert "it may also be:" in str(explained)
    assert "A view returned by a custom Function: errors.html#error-custom-function-view" in str(
        explained
    )


def test_a_paste_that_sections_seen_as_often_share_names_them_all_and_chooses_none() -> None:
    paste = "Output 0 of SelectBackward0 is a view of a view which was created in"
    explained = explain(paste)
    assert explained.kind is None
    assert {k.slug for k in getattr(explained, "alternatives", ())} == {
        "no-grad-view",
        "inference-tensor",
    }
    assert str(explained).startswith("The paste ends, or is reworded,")


@pytest.mark.parametrize(
    "message",
    [
        (
            "Trying to backward through the graph a second time (or directly access saved "
            "tensors after they have already been freed)."
        ),
        "element 0 of tensors does not require grad and does not have a grad_fn",
        "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.",
        (
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ),
        "you can only change requires_grad flags of leaf variables.",
        "one of the differentiated Tensors appears to not have been used in the graph.",
        "Function 'MulBackward0' returned nan values in its 0th output.",
        "Trying to resize storage that is not resizable",
        "cannot register a hook on a tensor that doesn't require gradient",
        "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0",
        "a view of a",
        "modified inplace",
        "modified by an inplace operation",
        "the tensor was not modified by an inplace operation",
        "x is unmodified by an in-place operation",
        (
            "Trying to backward through the graph a second time. I had fixed 'modified by an "
            "inplace operation' before."
        ),
        "A view was created",
    ],
)
def test_other_errors_and_short_fragments_get_no_section(message: str) -> None:
    assert _named(message) == []


@pytest.mark.parametrize(
    "paste",
    [
        "RuntimeError: One of the variables has been modified by an inplace operation",
        "my hidden state has been modified by an in-place operation, why?",
        "Error: a tensor has been modified by an in place operation during backward",
    ],
)
def test_the_version_counters_clause_alone_is_its_section(paste: str) -> None:
    """Users retype the error's clause (a title, a first line); before, it got no section
    (its weighty words are 3, short of a distinctive run's 4)."""
    assert explain(paste).slug == "saved-tensor-modified"


def test_no_other_torch_message_has_the_version_counters_clause() -> None:
    """Why the clause alone may name the section: of the in-place, view and version-counter
    messages in torch's own source (the inventory, every release it records), only the
    version counter's matches the clause's pattern. The ONNX exporter's (its pass that removes
    in-place ops) has the clause's words without "has been" and its article ("was modified by
    in-place operation"), so the words reader does not read that wording
    (``read_by_words=False``) and explain() names no section there."""
    import json
    from pathlib import Path

    (clause,) = [
        w
        for kind in ERRORS
        for w in kind.wordings
        if w.example == "has been modified by an inplace operation"
    ]
    assert not clause.read_by_words
    inventory = Path(__file__).parents[1] / "docs" / "measurements" / "error-inventory.json"
    releases = json.loads(inventory.read_text())["releases"]
    texts = {entry["text"] for release in releases.values() for entry in release["entries"]}
    having = {text for text in texts if re.search(clause.pattern, read(text), re.ASCII)}
    version_counter = (
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: ["
    )
    assert len(releases) >= 3
    assert having == {version_counter}
    onnx = "was modified by in-place operation, but we cannot find its updated value."
    assert onnx in texts
    assert explain(onnx).slug is None


def test_a_long_log_is_read_quickly() -> None:
    import time

    log = " ".join(
        f"step {n}: a view of a view modified inplace at version {n}" for n in range(20_000)
    )
    start = time.perf_counter()
    explain(log + " cannot resize variables that require grad")
    assert time.perf_counter() - start < 2.0
