"""explain() on real users' messages: the right section, and a first fix that fits the cause.

``tests/data/real_errors.json`` holds messages that users posted in public
threads (GitHub issues and pull requests, torch 0.2 to 2.x), each as the
user pasted it, with the thread's cause and the fix that worked, collected by
someone else than the author of the table. A third (``split == "held_out"``,
drawn by a hash of the id) was never looked at while the table was tuned;
it is scored separately. ``tests/data/fresh_errors.json`` (82 messages from
other threads, collected by another researcher while the reader of cut and
retyped pastes was built, all held out) was scored once, after that design was
committed.

The right section is read off the collector's ``message_family`` (a regex
family over the message, assigned by the collector's script), narrowed by
what the message itself says: a view of a custom Function (``inside a custom
Function``) belongs to that section, written under no_grad or not; one of a
full backward hook (``BackwardHookFunction``) to the hook's; a first sentence
alone of no multi-output op to the multi-output sections or the custom
Function's (torch prints it before either tail); a message the family regex
could not tell (``"other"``) to the section judged by hand (:data:`BY_HAND`). A first fix fits
when it fixes the cause that the thread found (:data:`CAUSE_FITS`), or when the
thread's fix is an instance of its class (:data:`FITS`); messages whose thread
names no fix (``fix_class`` empty or ``other``) are not judged.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from inplace_recipes import explain
from inplace_recipes._error_kinds import ERRORS
from inplace_recipes._error_reading import read

DATA = Path(__file__).parent / "data" / "real_errors.json"
ITEMS: list[dict[str, Any]] = json.loads(DATA.read_text())["items"]
#: A second set, collected by another researcher after the table and its reader were done,
#: from threads that are not in the first (split "fresh_held_out": all of it held out).
FRESH = Path(__file__).parent / "data" / "fresh_errors.json"
FRESH_ITEMS: list[dict[str, Any]] = json.loads(FRESH.read_text())["items"]
#: A third set, collected on 2026-12-02 by a researcher who neither ran nor read the package,
#: from threads in neither set (split "unseen"), after ``Cause.first_when`` was committed;
#: scored once.
UNSEEN = Path(__file__).parent / "data" / "unseen_errors.json"
UNSEEN_ITEMS: list[dict[str, Any]] = json.loads(UNSEEN.read_text())["items"]
#: A fourth set, collected on 2026-12-02 (second session) by another researcher who neither
#: ran nor read the package, from threads in none of the three (split "unseen2"), after the
#: fixes of the unseen set's misses were committed; scored once. Its "other" messages carry
#: the collector's own judgement (``expected_section_by_hand``; ``None``: no section fits,
#: so any section is wrong there).
UNSEEN2 = Path(__file__).parent / "data" / "unseen2_errors.json"
UNSEEN2_ITEMS: list[dict[str, Any]] = json.loads(UNSEEN2.read_text())["items"]
#: A fifth set, collected the same day by a third researcher the same way, from threads in
#: none of the four (split "unseen5"; three items that are not posts in a thread, split
#: "unseen5_not_a_thread", reported apart); the same rules, fixed before its one scoring.
UNSEEN5 = Path(__file__).parent / "data" / "unseen5_errors.json"
UNSEEN5_ITEMS: list[dict[str, Any]] = json.loads(UNSEEN5.read_text())["items"]
#: A sixth set, collected on 2026-12-03 by a fourth researcher who neither ran nor read the
#: package, from threads in none of the five (split "unseen6"; 59 items, 57 of them the
#: version-counter message: the other sections' public threads were used up); the same
#: rules, fixed before its one scoring. Four messages cut by the stored excerpt are kept.
UNSEEN6 = Path(__file__).parent / "data" / "unseen6_errors.json"
UNSEEN6_ITEMS: list[dict[str, Any]] = json.loads(UNSEEN6.read_text())["items"]
#: A seventh set, collected on 2026-12-03 by a fifth researcher who neither ran nor read the
#: package, from threads in none of the six (split "unseen7"; 50 items, one per thread, 25
#: with a fix the thread found: the threads with both a paste and a fix were mostly used up);
#: the same rules, fixed before its one scoring, after the Broadcast rule of 8a9628f.
UNSEEN7 = Path(__file__).parent / "data" / "unseen7_errors.json"
UNSEEN7_ITEMS: list[dict[str, Any]] = json.loads(UNSEEN7.read_text())["items"]
#: An eighth set, collected on 2026-12-06 by three collectors who neither ran nor read the
#: package, following one written protocol (in the file's provenance), from threads in none
#: of the seven (split "unseen8"; 116 items, 115 of them GitHub threads: the stored forum and
#: Q&A pages held one report that no set had); committed with the same rules before its one
#: scoring, after the design of 8683c09.
UNSEEN8 = Path(__file__).parent / "data" / "unseen8_errors.json"
UNSEEN8_ITEMS: list[dict[str, Any]] = json.loads(UNSEEN8.read_text())["items"]
ALL_ITEMS = (
    ITEMS
    + FRESH_ITEMS
    + UNSEEN_ITEMS
    + UNSEEN2_ITEMS
    + UNSEEN5_ITEMS
    + UNSEEN6_ITEMS
    + UNSEEN7_ITEMS
    + UNSEEN8_ITEMS
)

#: The section(s) each message family belongs to.
FAMILY = {
    "version-counter": "saved-tensor-modified",
    "multi-output-view": "multi-output-view",
    "view-of-leaf": "view-of-leaf",
    "custom-function-view": "custom-function-view",
    "inference-tensor": "inference-tensor",
    "leaf-inplace": "leaf",
    "no-grad-view": "no-grad-view",
    "detach-view": "detach-view",
    "leaf-moved-interior": "graph-interior",
    "functorch-captured-mutation": "captured-mutation",
    "resize": "resize",
    "vmap-inplace": "vmap",
}
#: A rewrite of the write itself (out of place, into a clone, detach()).
REWRITES = frozenset({"out-of-place-rewrite", "clone-before-write", "detach"})
#: The thread's fix classes that a first fix of each class fits.
FITS = {
    "out-of-place-rewrite": REWRITES | {"inplace-false"},
    "clone-before-write": REWRITES,
    "detach": REWRITES,
    "torch-no-grad": frozenset({"torch-no-grad"}),
    # "or the forward again after the step": recomputing is that fix
    # (and "move-forward-call": calling the forward where the step no longer precedes it)
    "reorder-step-after-backward": frozenset(
        {"reorder-step-after-backward", "retain-graph-or-recompute", "move-forward-call"}
    ),
    # DDP's threads fix it with broadcast_buffers=False or by where they call the forward
    "broadcast-buffers-false": frozenset({"broadcast-buffers-false", "move-forward-call"}),
    "library-patch": frozenset({"library-patch", "upgrade-or-downgrade"}),
    "other": frozenset({"other"}),
}
#: The first fixes that fix each cause the threads found, whatever fix the thread chose
#: (``.data`` or ``torch.no_grad()`` for an edit on purpose; a downgrade of torch instead).
CAUSE_FITS = {
    "params-edited-on-purpose": frozenset({"torch-no-grad"}),
    "optimizer-step-between-forward-and-backward": frozenset({"reorder-step-after-backward"}),
    "second-backward-reuse": frozenset({"reorder-step-after-backward"}),
    "ddp-buffers": frozenset({"broadcast-buffers-false"}),
    "own-inplace-op": REWRITES | {"inplace-false"},
    "view-write": REWRITES,
    "leaf-write": REWRITES,
    "no-grad-view": REWRITES | {"torch-no-grad"},
    "inference-tensor": frozenset({"clone-before-write"}),
}
#: Causes outside the user's code: every answer ends saying how to tell and what to do
#: (upgrade the library, or report it there with the fix above), so a rewrite fits there.
OUTSIDE = frozenset({"library-internal", "torch-or-compiler-bug"})


#: The sections of messages whose family the collector's regex could not tell (``"other"``),
#: judged by hand from the message and the thread's cause (fresh set, after its one scoring).
BY_HAND = {
    "gh-pytorch-53348": {"graph-interior"},  # "... moved into the graph interio": cut mid-word
    "gh-functorch-105": {"vmap"},  # "vmap: aten::copy_(self, *extra_args) is not possible ..."
    "gh-functorch-247": {"vmap"},  # "vmap: aten::logical_or_(self, *extra_args) ..."
    "gh-gla-gcn-5": {"saved-tensor-modified"},  # "variabLes needed for gradient C omputation"
    # unseen set, judged by its collector before the scoring (expected_section_by_hand)
    "gh-pytorch-37345": {"leaky-relu"},  # in-place leaky_relu_ with a non-positive slope
    "gh-k2-1210": {"inference-tensor"},  # "Inference tensors do not track version counter."
}
#: A multi-output op's node, in any release's spelling.
_MULTI_NODE = re.compile(
    r"Output \d+ of (?:Unbind|Split|SplitWithSizes|Chunk|UnsafeSplit|UnsafeChunk)(?:Backward\d*)?\b"
)


def right_sections(item: dict[str, Any]) -> set[str]:
    """The sections that cover the item's message."""
    message = " ".join(item["message"].split())
    family = item["message_family"]
    if family == "other" and item["id"] in BY_HAND:
        return BY_HAND[item["id"]]
    if family == "other":  # the fourth set's collector named a section (or none)
        judged = item["expected_section_by_hand"]
        return set() if judged is None else {judged}
    if family == "multi-output-view" and (
        "multiple views" in message or _MULTI_NODE.search(message)
    ):
        return {"multi-output-view", "multi-output-view-base"}
    if family == "multi-output-view":
        # the first sentence alone ("Output 0 of X is a view and is being modified inplace."),
        # of no multi-output op: torch prints it before a custom Function's tail as well
        return {"multi-output-view", "multi-output-view-base", "custom-function-view"}
    if family in ("custom-function-view", "no-grad-view") and "BackwardHookFunction" in message:
        return {"backward-hook-view"}
    if family in ("custom-function-view", "no-grad-view") and "inside a custom Function" in message:
        return {"custom-function-view"}
    if family == "custom-function-view" and "BackwardHookFunction" not in message:
        return {"custom-function-view"}
    return {FAMILY[family]}


def fits(item: dict[str, Any], fix_class: str | None) -> bool:
    """Whether a first fix of ``fix_class`` fits the thread's fix."""
    wanted = item["fix_class"]
    if fix_class is None:
        return False
    if wanted in ("library-patch", "upgrade-or-downgrade") and item["cause_class"] in OUTSIDE:
        return fix_class in REWRITES | {"library-patch"}
    if fix_class in CAUSE_FITS.get(item["cause_class"], frozenset()):
        return True
    return wanted in FITS.get(fix_class, frozenset())


def score(split: str) -> dict[str, Any]:
    """Right and wrong sections, and first fixes that fit, over one split."""
    items = [i for i in ALL_ITEMS if i["split"] == split]
    right = wrong = judged = fitting = 0
    misses: Counter[str] = Counter()
    for item in items:
        explained = explain(item["message"])
        if explained.slug in right_sections(item) or (
            explained.slug is None and not right_sections(item)
        ):
            right += 1  # (a message that no section fits is right without one)
        elif explained.slug is not None:
            wrong += 1
            misses[f"{item['id']}: {explained.slug}"] += 1
        else:
            misses[f"{item['id']}: none"] += 1
        if item["fix_class"] not in (None, "other") and explained.slug in right_sections(item):
            judged += 1
            fitting += fits(item, explained.fix_class)
        elif item["fix_class"] not in (None, "other"):
            judged += 1
    return {
        "items": len(items),
        "right": right,
        "wrong": wrong,
        "judged": judged,
        "fitting": fitting,
        "misses": sorted(misses),
    }


def _keeps_its_rates(split: str, *, items: int, right: int, judged: int, fitting: int) -> None:
    """No wrong section in ``split``, and at least the right sections and fitting first
    fixes measured for it (over the same items and judged messages)."""
    result = score(split)
    assert result["wrong"] == 0, result
    assert result["items"] == items, result
    assert result["judged"] == judged, result
    assert result["right"] >= right, result
    assert result["fitting"] >= fitting, result


def test_the_data_set_is_what_the_collector_made() -> None:
    assert len(ITEMS) >= 130
    assert {i["split"] for i in ITEMS} == {"tune", "held_out"}
    assert all(i["message_family"] in FAMILY for i in ITEMS)
    assert len(FRESH_ITEMS) == 82
    assert {i["split"] for i in FRESH_ITEMS} == {"fresh_held_out"}
    assert not {i["source"] for i in FRESH_ITEMS} & {i["source"] for i in ITEMS}
    assert len(UNSEEN_ITEMS) == 63
    assert {i["split"] for i in UNSEEN_ITEMS} == {"unseen"}
    assert not {i["source"] for i in UNSEEN_ITEMS} & {i["source"] for i in ITEMS + FRESH_ITEMS}
    others = {i["id"] for i in FRESH_ITEMS + UNSEEN_ITEMS if i["message_family"] not in FAMILY}
    assert others == set(BY_HAND)
    assert len(UNSEEN2_ITEMS) == 61
    assert {i["split"] for i in UNSEEN2_ITEMS} == {"unseen2"}
    earlier = {_thread(i["source"]) for i in ITEMS + FRESH_ITEMS + UNSEEN_ITEMS}
    assert not {_thread(i["source"]) for i in UNSEEN2_ITEMS} & earlier
    assert len(UNSEEN5_ITEMS) == 65
    assert {i["split"] for i in UNSEEN5_ITEMS} == {"unseen5", "unseen5_not_a_thread"}
    earlier |= {_thread(i["source"]) for i in UNSEEN2_ITEMS}
    assert not {_thread(i["source"]) for i in UNSEEN5_ITEMS} & earlier
    assert len(UNSEEN6_ITEMS) == 59
    assert {i["split"] for i in UNSEEN6_ITEMS} == {"unseen6"}
    earlier |= {_thread(i["source"]) for i in UNSEEN5_ITEMS}
    assert not {_thread(i["source"]) for i in UNSEEN6_ITEMS} & earlier
    assert len(UNSEEN7_ITEMS) == 50
    assert {i["split"] for i in UNSEEN7_ITEMS} == {"unseen7"}
    earlier |= {_thread(i["source"]) for i in UNSEEN6_ITEMS}
    assert not {_thread(i["source"]) for i in UNSEEN7_ITEMS} & earlier
    assert len(UNSEEN8_ITEMS) == 116
    assert {i["split"] for i in UNSEEN8_ITEMS} == {"unseen8"}
    earlier |= {_thread(i["source"]) for i in UNSEEN7_ITEMS}
    assert not {_thread(i["source"]) for i in UNSEEN8_ITEMS} & earlier
    assert len({_thread(i["source"]) for i in UNSEEN8_ITEMS}) == len(UNSEEN8_ITEMS)
    assert all(
        i["message_family"] in FAMILY or "expected_section_by_hand" in i
        for i in UNSEEN2_ITEMS + UNSEEN5_ITEMS + UNSEEN6_ITEMS + UNSEEN7_ITEMS + UNSEEN8_ITEMS
    )


def _thread(source: str) -> str:
    """A thread's address as the collectors compared them: no scheme, ``www.``, query,
    fragment or trailing slash, and a GitHub issue and pull request of one number alike."""
    address = re.sub(r"^https?://(www\.)?", "", source.lower()).split("#")[0].split("?")[0]
    return re.sub(r"/(issues|pull)/(\d+).*", r"/\2", address.rstrip("/"))


@pytest.mark.parametrize("item", ALL_ITEMS, ids=[i["id"] for i in ALL_ITEMS])
def test_no_message_gets_a_wrong_section(item: dict[str, Any]) -> None:
    slug = explain(item["message"]).slug
    assert slug is None or slug in right_sections(item), (slug, item["message"][:300])


def test_the_tuned_third_gets_its_sections_and_fixes() -> None:
    result = score("tune")
    assert result["right"] >= 0.95 * result["items"], result
    assert result["wrong"] == 0, result
    assert result["fitting"] >= 0.85 * result["judged"], result


def test_the_held_out_third_gets_no_wrong_section_and_keeps_its_measured_rates() -> None:
    """Scored once, after the table was tuned on the other third, and not tuned on since.

    Measured then: 45 of 49 right sections (91.8%; the issue's target is 95%), none
    wrong, a first fix that fits for 32 of the 40 judged (80%; target 85%). The four
    unrecognised were pastes that retype or cut the message. Those items were not read
    one by one afterwards: the reader was redesigned for such pastes in general (a
    paste's words, ``inplace_recipes._error_words``, measured for precision on every
    cut and retyping of the table's literals, tests/test_explain_words.py), and the
    third scored again: 49 of 49 right sections, none wrong, 36 of 40 first fixes that
    fit (90%). After DataParallel's copies of a parameter (``BroadcastBackward``) were read
    as weights (a rule from torch's ``replicate``, prompted by the sixth set), 37 of 40
    (92.5%). This test keeps those rates from falling.
    """
    _keeps_its_rates("held_out", items=49, right=49, judged=40, fitting=37)


def test_the_fresh_set_gets_no_wrong_section_and_keeps_its_measured_rates() -> None:
    """Scored once, after the reader of cut and retyped pastes was committed; not tuned on.

    As scored, with the grading rules fixed beforehand (the 78 messages the family regex
    tells): 75 right sections (96.2%), one "wrong", 52 of 65 first fixes that fit (80.0%).
    The "wrong" one was the grader's: ``Output 0 of ScatterBackward is a view and is being
    modified inplace.`` is a first sentence alone, which torch prints before a custom
    Function's tail too; explain() named the custom Function's section first and the
    multi-output one as an alternative, and the thread's cause is DataParallel's Scatter, a
    custom Function. With that rule and the four "other" messages judged by hand: 80 of 82
    right (97.6%), none wrong, 57 of 69 first fixes that fit (82.6%; the issue's target is
    85%). The two unrecognised retype the message without its distinctive words ("One of
    the variables has been modified by an inplace operation"; a title quoting "modified by
    an in-place operation"). This test keeps those rates from falling.

    After that one scoring its 12 misses were read, so the set is no longer unseen: three
    pastes showed the line that wrote (a parameter's ``.weight.fill_``, a write into a
    tensor of one's own) and one named DistributedDataParallel, which led to
    ``Cause.first_when`` (a cause the paste shows comes first). On the design in general,
    not on these items: the tune third's view-of-leaf paste and a held-out one showed that
    a write into part of a tensor tells nothing for that section, so the own-write cue
    stays off there. Now 58 of 69 (84.1%); the set nobody had seen is ``unseen_errors.json``.
    On 2026-12-06, by rules drawn from all the scored sets (not from these items alone): the
    version counter's clause retyped alone (``One of the variables has been modified by an
    inplace operation``) is its section, and a two-dimensional Select is an activation's view:
    81 of 82 right, 59 of 69 first fixes that fit.
    """
    _keeps_its_rates("fresh_held_out", items=82, right=81, judged=69, fitting=59)


def test_the_unseen_set_gets_no_wrong_section_and_keeps_its_measured_rates() -> None:
    """Scored once, on the design of commit 1318afc, with the grading rules above fixed
    beforehand (the collector's two "other" messages judged by the collector).

    As scored: 59 of 63 right sections (93.7%; the issue's target is 95%), none wrong, a
    first fix that fits for 33 of the 37 judged (89.2%; target 85%). The four without a
    section: two tracebacks cut inside the node's name (``Output 0 of Spl``), and two
    inference-tensor messages that no wording had (``Inference tensors cannot be saved for
    backward`` alone, and ``Inference tensors do not track version counter.``, which a
    library's read of ``._version`` raises). The four fixes that do not fit: a bare message
    of an optimizer step in between (the first cause is an op's own write), a message of a
    captured write seen in torch's own CI, and the two unrecognised inference messages.
    After that scoring the misses were read: the inference section gained the two wordings
    (live repros on errors.md, a cause each): 61 of 63 right (96.8%), 34 of 37 first fixes
    that fit. The set is no longer unseen. This test keeps those rates from falling.
    """
    _keeps_its_rates("unseen", items=63, right=61, judged=37, fitting=34)


def test_the_fourth_set_gets_no_wrong_section_and_keeps_its_measured_rates() -> None:
    """Scored once, on the design of commit 101f050 (the data and the rules above committed
    first), by the code of that commit.

    As scored: 56 of 61 right sections (91.8%), none wrong, a first fix that fits for all 20
    judged (100%). One of the five without a section was the out-of-scope control message
    (``you can only change requires_grad flags of leaf variables``), where no section is
    right: the committed rules said any section is wrong there, and the code counted none as
    a miss. Counted as the rule meant, 57 of 61 (93.4%; the issue's target is 95%). Of the
    four misses, three hold no error text at all: each is a traceback cut before its error
    line, whose words are only in the thread's title (the collector had meant to use the
    title there). The fourth is torch 0.1-0.2's ``leaf variable was used in an inplace
    operation``, raised in backward, which no wording had. After that scoring the misses
    were read, and the leaf section gained that wording: 58 of 61 (95.1%), 20 of 20. The
    set is no longer unseen. This test keeps those rates from falling.
    """
    _keeps_its_rates("unseen2", items=61, right=58, judged=20, fitting=20)


def test_the_fifth_set_gets_no_wrong_section_and_keeps_its_measured_rates() -> None:
    """Scored once, on the design of commit 44de4ab (the data and its rules committed first).

    As scored: 62 of 62 right sections (100%), none wrong, a first fix that fits for 14 of
    the 18 judged (77.8%; the issue's target is 85%); the three items that are not posts in
    a thread: 3 of 3, 2 of 2. Of the four fixes that did not fit, three were a GAN's
    optimizer step between a forward and its backward, pasted as the bare message beside
    words that say so (``GAN``, ``optimizer.step()``); the fourth, a write into a squeezed
    tensor, was fixed in its thread by an older torch. After that scoring the misses were
    read, and ``Cause.first_when`` of the step between gained a GAN's and an optimizer
    step's words (tested on pastes of its own in test_explain.py): 16 of 18 (88.9%), no
    other set's rate changed. The set is no longer unseen. On 2026-12-06 a two-dimensional
    Squeeze became an activation's view (the write into a view first): 17 of 18. This test
    keeps those rates.
    """
    _keeps_its_rates("unseen5", items=62, right=62, judged=18, fitting=17)
    _keeps_its_rates("unseen5_not_a_thread", items=3, right=3, judged=2, fitting=2)


def test_the_sixth_set_gets_no_wrong_section_and_keeps_its_measured_rates() -> None:
    """Scored once, on the design of commit ee528cc (the data and its rules committed first).

    As scored: 59 of 59 right sections (100%), none wrong, a first fix that fits for 19 of
    the 25 judged (76.0%; the issue's target is 85%). 57 of the 59 are the version-counter
    message, so the set says little of the other sections. The six fixes that do not fit:
    three optimizer steps between a forward and its backward where the paste shows no word
    of it (a 4-d conv weight's ``AsStridedBackward0``, a ``BroadcastBackward`` of SAM's
    first step, a bare message of an actor-critic), where the first cause is an op's own
    write; two in-place writes in a library's or a model's own code (TorchRL's GRU, a camera
    tensor's ``+=``) and a WGAN-GP written for an older release, where a tensor the message
    gives no grad_fn gets the step-between cause first. One rule came of reading it: a
    saved output of ``BroadcastBackward`` is DataParallel's copy of a parameter (torch's
    ``replicate``), a weight, so SAM's message gets the step first: 20 of 25 (80%). The set
    is no longer unseen. This test keeps those rates from falling.
    """
    _keeps_its_rates("unseen6", items=59, right=59, judged=25, fitting=20)


def test_the_seventh_set_gets_no_wrong_section_and_keeps_its_measured_rates() -> None:
    """Scored once, on the design of commit c2cfb0a (the data and its rules committed first).

    As scored: 42 of 50 right sections (84%; the issue's target is 95%), none wrong, a first
    fix that fits for 17 of the 25 judged (68%; target 85%). Seven of the eight without a
    section hold no error text: six tracebacks the stored excerpt cuts before the error
    line, and a Chinese paraphrase (``因为inplace操作导致梯度的更新失败``); the eighth is a
    pull request's own wording (``Backward pass error when using inplace operation``). The
    eight fixes that do not fit: three threads whose fix was a downgrade of torch where the
    first cause shown is the optimizer step between forward and backward; three without a
    section; a library's own write where the step comes first; a view of a leaf written on
    purpose where ``torch.no_grad()`` comes first and the thread cloned. Not tuned on since.
    This test keeps those rates from falling.
    """
    _keeps_its_rates("unseen7", items=50, right=42, judged=25, fitting=17)


def test_the_eighth_set_gets_no_wrong_section_and_keeps_its_measured_rates() -> None:
    """Scored once, on the design of commit b683b33 (the data and its rules committed first,
    in 8f9da3f).

    As scored: 115 of 116 right sections (99.1%; the issue's target is 95%), none wrong, a
    first fix that fits for 20 of the 30 judged (66.7%; target 85%). The one without a section
    holds only anomaly mode's ``Error detected in CudnnBatchNormBackward`` (the title) and the
    user's code. Of the ten fixes that do not fit, five are threads whose fix was to install
    the older torch a repository was written for (cause "other": a ReLU output written in
    place, a weight's transpose stepped, an mmdetection fork); one is DistributedDataParallel's
    buffers where the message shows a four-dimensional leaf and no word of DDP, one the paste
    without a section (DDP's buffers too); one a PR's own description of a library that edits
    embedding rows on purpose (fixed through ``.data``); one a compiler PR on leaves written
    under grad mode; one a terminal's hard wrap inside ``output`` (``which is o`` /
    ``utput 0 of TBackward``), which hid the weight's transpose. After that scoring the misses
    were read: a terminal's wrap is now undone (``_error_words.unwrapped``, tested on every
    wrap of the table's messages): 21 of 30 (70%). The set is no longer unseen. This test
    keeps those rates from falling.
    """
    _keeps_its_rates("unseen8", items=116, right=115, judged=30, fitting=21)


def _first_matching_wording(message: str) -> tuple[str, str] | None:
    text = read(message)
    for kind in ERRORS:
        for wording in kind.wordings:
            if re.search(wording.pattern, text, re.ASCII):
                return kind.slug, wording.releases
    return None


def test_each_wordings_threads_are_the_tune_threads_that_print_it() -> None:
    """``Wording.threads`` ranks the sections a cut paste may be: it is counted, not chosen."""
    counted = Counter(_first_matching_wording(i["message"]) for i in ITEMS if i["split"] == "tune")
    for kind in ERRORS:
        for wording in kind.wordings:
            assert wording.threads == counted[kind.slug, wording.releases], (
                kind.slug,
                wording.releases,
            )


def test_the_first_cause_is_the_one_tune_threads_show_most_often() -> None:
    """Among the tune threads whose messages get the same causes, the cause shown first fixes
    at least as many of them as any other (its fix fits the thread's cause): the first fix
    is the one the threads show most often, for every kind of message the split has."""
    groups: dict[tuple[str, tuple[str, ...]], Counter[str]] = {}
    for item in ITEMS:
        explained = explain(item["message"])
        if item["split"] != "tune" or item["fix_class"] in (None, "other") or not explained.kind:
            continue
        keys = tuple(cause.key for cause in explained.causes)
        fitted = groups.setdefault((explained.kind.slug, keys), Counter())
        fitted.update(c.key for c in explained.causes if fits(item, c.fix_class))
    for (slug, keys), fitted in groups.items():
        assert fitted[keys[0]] == max(fitted[key] for key in keys), (slug, keys, fitted)


def test_the_ddp_cause_says_what_the_threads_report() -> None:
    """The ddp-buffers cause's sentence: threads with a 1-D tensor fixed it with broadcast_buffers."""
    ddp = [i for i in ITEMS if i["cause_class"] == "ddp-buffers" and i["split"] == "tune"]
    assert ddp
    assert all(i["fix_class"] == "broadcast-buffers-false" for i in ddp if i["fix_class"])
