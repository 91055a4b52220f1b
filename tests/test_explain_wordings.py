"""Every wording of the error table, as its releases print it and as users paste it.

Each :class:`~inplace_recipes._error_kinds.Wording` carries one literal message
of the releases it names; that message must reach its section, and only through
its own wording. The pastes below are the forms real users post: any release's
node names, MSVC's C++ names, wrapping, launcher and logger prefixes, a first
sentence alone, a warning, whole tracebacks with chained exceptions.
"""

from __future__ import annotations

import traceback

import pytest
import torch

from inplace_recipes import explain
from inplace_recipes._error_kinds import ERRORS
from inplace_recipes._error_reading import read

WORDINGS = [(kind, wording) for kind in ERRORS for wording in kind.wordings]
SAVED = (
    "one of the variables needed for gradient computation has been modified by an inplace "
    "operation: [torch.cuda.FloatTensor [16, 1]], which is output 0 of {}, is at version 2; "
    "expected version 1 instead. Hint: enable anomaly detection."
)


@pytest.mark.parametrize(
    ("kind", "wording"), WORDINGS, ids=[f"{k.slug}: {w.releases}" for k, w in WORDINGS]
)
def test_each_wording_reaches_its_section_with_its_literal_message(kind, wording) -> None:  # type: ignore[no-untyped-def]
    for literal in wording.literals:  # the example, and each other form its pattern matches
        explained = explain(literal)
        assert explained.slug == kind.slug, literal
        assert explained.wording == wording, literal
        assert explained.alternatives == (), literal


def test_every_wording_names_its_releases_and_where_it_was_seen() -> None:
    for kind, wording in WORDINGS:
        assert any(c.isdigit() for c in wording.releases), kind.slug
        assert wording.seen in ("live", "cut") or wording.seen.startswith("https://"), kind.slug


def test_a_live_wording_is_a_message_the_page_shows() -> None:
    from test_explain import messages, sections

    shown = {m.removesuffix(" ...") for section in sections().values() for m in messages(section)}
    shown_text = " ".join(" ".join(section.split()) for section in sections().values())
    read_shown = [read(m) for m in shown]
    for kind, wording in WORDINGS:
        if wording.seen == "live":
            head = wording.example.split(" Hint:")[0]
            assert head in shown_text or wording.example in shown, (kind.slug, wording.example)
        elif wording.seen == "cut":  # a live message's first words, as a user pasted them
            start = read(wording.example).removesuffix("...")
            assert any(m.startswith(start) for m in read_shown), (kind.slug, wording.example)


@pytest.mark.parametrize(
    "node",
    ["AsStrided", "AsStridedBackward0", "AsStridedBackward", "torch::autograd::AsStrided",
     "struct torch::autograd::AsStrided", "class torch::autograd::AsStrided"],
)  # fmt: skip
def test_every_releases_node_name_gets_the_same_answer(node: str) -> None:
    assert explain(SAVED.format(node)).lines() == explain(SAVED.format("AsStrided")).lines()
    assert explain(SAVED.format(node)).fix.startswith("loss.backward(); optimizer.step()")


def test_the_windows_copyslices_form_keeps_its_version_details() -> None:
    message = SAVED.format("struct torch::autograd::CopySlices").replace("[16, 1]", "[4, 3, 8]")
    text = str(explain(message))
    assert "The tensor is output 0 of CopySlices (torch.cuda.FloatTensor [4, 3, 8])" in text
    assert "saved at version 1 and is now at version 2" in text


def test_a_backward_hook_function_of_any_release_is_the_hooks_section() -> None:
    for node in ("BackwardHookFunction", "BackwardHookFunctionBackward"):
        message = f"Output 0 of {node} is a view and is being modified inplace."
        assert explain(message).slug == "backward-hook-view"


@pytest.mark.parametrize(
    "paste",
    [
        # wrapped where a terminal or an issue form wrapped it
        (
            "one of the variables needed for gradient computation has been modified\nby an inplace "
            "operation: [torch.FloatTensor [3]], which is output 0 of\nSigmoidBackward0, is at "
            "version 1; expected version 0 instead."
        ),
        # torchrun's prefix on every line
        (
            '[rank0]: Traceback (most recent call last):\n[rank0]:   File "t.py", line 3, in <module>'
            "\n[rank0]: RuntimeError: one of the variables needed for gradient computation has been\n"
            "[rank0]: modified by an inplace operation: [torch.FloatTensor [3]], which is output 0 of"
            "\n[rank0]: SigmoidBackward0, is at version 1; expected version 0 instead."
        ),
        # a logger's time stamp and level
        (
            "2024-05-01 12:00:00,123 ERROR trainer.py:88 - one of the variables needed for gradient "
            "computation has been modified\n2024-05-01 12:00:00,124 ERROR trainer.py:88 - by an "
            "inplace operation: [torch.FloatTensor [3]], which is output 0 of SigmoidBackward0, is "
            "at version 1; expected version 0 instead."
        ),
        # pytest's failure lines
        (
            "E   RuntimeError: one of the variables needed for gradient computation has been\nE   "
            "modified by an inplace operation: [torch.FloatTensor [3]], which is output 0 of "
            "Sigmoid, is at version 1; expected version 0 instead."
        ),
        # Windows line ends and a quote
        (
            "> one of the variables needed for gradient computation has been modified by an\r\n> "
            "inplace operation: [torch.FloatTensor [3]], which is output 0 of SigmoidBackward, is "
            "at version 1; expected version 0 instead."
        ),
    ],
    ids=["wrapped", "torchrun", "logger", "pytest", "quoted"],
)
def test_pastes_as_users_make_them_get_the_clean_messages_answer(paste: str) -> None:
    clean = (
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [torch.FloatTensor [3]], which is output 0 of Sigmoid, is at version 1; "
        "expected version 0 instead."
    )
    assert explain(paste).lines() == explain(clean).lines()


@pytest.mark.slow
def test_a_terminals_hard_wrap_gets_the_clean_messages_answer() -> None:
    """A terminal 60 columns wide or more breaks each line at its width, mid-word too
    (``which is o`` / ``utput 0 of TBackward``), as a paste of unseen8 shows. Every literal of
    the table of 130 characters or more, wrapped at every width that gives two full rows:
    the clean message's answer for all but 9 of 3,990 (before: 353 differed). None of the 9
    breaks a word of the table into two pieces that are not words: they break at brackets and
    dots (``[`` / ``torch``), into two words (``no`` / ``t``, ``refer`` / ``s``), or inside a
    2.13 node's name without its Backward (``S`` / ``igmoid``), as an editor's wrap could."""
    tried = differ = 0
    for _, wording in WORDINGS:
        for clean in wording.literals:
            if len(clean) < 130:
                continue
            for width in range(60, len(clean) // 2 + 1):
                rows = [clean[n : n + width] for n in range(0, len(clean), width)]
                tried += 1
                differ += explain("\n".join(rows)).lines() != explain(clean).lines()
    assert tried == 3990
    assert differ <= 9


def test_a_paste_wrapped_mid_word_reads_the_node_it_names() -> None:
    """Wrapped inside "output", the message still names a weight's transpose: the step first."""
    clean = (
        "RuntimeError: one of the variables needed for gradient computation has been modified by"
        " an inplace operation: [torch.FloatTensor [20, 1]], which is output 0 of TBackward, is "
        "at version 2; expected version 1 instead. Hint: the backtrace further above shows the "
        "operation that failed to compute its gradient. The variable in question was changed in "
        "there or anywhere later. Good luck!"
    )
    width = clean.index("utput 0 of")
    wrapped = "\n".join(clean[n : n + width] for n in range(0, len(clean), width))
    assert wrapped.splitlines()[0].endswith("which is o")
    assert explain(wrapped).causes[0].key == "step-between"
    assert explain(wrapped).lines() == explain(clean).lines()


@pytest.mark.parametrize(
    ("sentence", "slug"),
    [
        ("Output 0 of SplitBackward0 is a view and is being modified inplace.", "multi-output-view"),
        ("Output 1 of UnbindBackward is a view and is being modified inplace.", "multi-output-view"),
        ("A view was created in no_grad mode...", "no-grad-view"),
        ("a view of a leaf Variable that requires grad is being used in an in-place operation.",
         "view-of-leaf"),
    ],
)  # fmt: skip
def test_a_first_sentence_alone_is_enough(sentence: str, slug: str) -> None:
    assert explain(sentence).slug == slug


def test_torch_1_7s_deprecation_warning_is_the_multi_output_section() -> None:
    warning = (
        "/usr/lib/python3.8/site-packages/mylib/attn.py:91: UserWarning: Output 0 of "
        "SplitBackward is a view and is being modified inplace. This view is an output of a "
        "function that returns multiple views. Inplace operators on such views are being "
        "deprecated and will be forbidden starting from version 1.8. Consider using `unsafe_` "
        "version of the function that produced this view or don't modify this view inplace."
    )
    explained = explain(warning)
    assert explained.slug == "multi-output-view"
    assert explained.causes[0].key == "library-write"  # the warning's location is a library


def test_a_custom_functions_view_of_an_input_without_grad_is_not_the_no_grad_section() -> None:
    message = (
        "A view was created in no_grad mode and is being modified inplace with grad mode "
        "enabled. This view was created inside a custom Function (or because an input was "
        "returned as-is) and the autograd logic to handle view+inplace would override the custom "
        "backward associated with the custom Function, leading to incorrect gradients."
    )
    assert explain(message).slug == "custom-function-view"


def test_torch_0_4s_leaf_message_lists_the_plain_write_before_mark_dirty() -> None:
    old = "a leaf Variable that requires grad has been used in an in-place operation."
    keys = [cause.key for cause in explain(old).causes]
    assert keys.index("own-write") < keys.index("marked-leaf")


def test_a_whole_traceback_with_chained_exceptions_is_read() -> None:
    def inner() -> None:
        a = torch.ones(3, requires_grad=True)
        a.add_(1)

    try:
        try:
            inner()
        except RuntimeError as error:
            raise ValueError("training step failed") from error
    except ValueError as chained:
        paste = "".join(traceback.format_exception(chained))
    assert "The above exception was the direct cause" in paste
    assert explain(paste).slug == "leaf"


def test_reading_removes_only_what_a_paste_adds() -> None:
    assert read("a  b\n\tc") == "a b c"
    assert read("[rank12]: x\n[default3]: y") == "x y"
    assert read("output 0 of MulBackward0, is") == "output 0 of Mul, is"
    assert read("Output 3 of CustomOpBackward is") == "Output 3 of CustomOp is"
    assert read("MulBackward0 alone") == "MulBackward0 alone"  # only after "output N of"
