"""explain() recognises every error of docs/errors.md, whose examples run live here."""

from __future__ import annotations

import doctest
import re
import time
import warnings
from pathlib import Path

import pytest
import torch

from inplace_recipes import explain
from inplace_recipes.error_reference import ERRORS, error_kind

PAGE = Path(__file__).resolve().parents[1] / "docs" / "errors.md"
ANCHOR = re.compile(r"^\(error-(?P<slug>[a-z0-9-]+)\)=$", re.MULTILINE)
#: Every label of the page: an error's section ends at the next one.
LABEL = re.compile(r"^\([a-z0-9-]+\)=$", re.MULTILINE)
BLOCK = re.compile(r"^```\{doctest\}\n(?P<body>.*?)^```$", re.MULTILINE | re.DOTALL)
# sphinx.ext.doctest's default flags; a block's ":options:" line changes them.
DEFAULT_FLAGS = doctest.ELLIPSIS | doctest.IGNORE_EXCEPTION_DETAIL | doctest.DONT_ACCEPT_TRUE_FOR_1


def labelled(text: str) -> dict[str, str]:
    """The page's text under each label, by label (``error-leaf``, ``torch-compile-forms``)."""
    marks = list(LABEL.finditer(text))
    return {
        m.group()[1:-2]: text[m.end() : marks[i + 1].start() if i + 1 < len(marks) else len(text)]
        for i, m in enumerate(marks)
    }


def sections() -> dict[str, str]:
    """The page's text for each error anchor, by slug."""
    return {
        label.removeprefix("error-"): text
        for label, text in labelled(PAGE.read_text()).items()
        if label.startswith("error-")
    }


def messages(section: str) -> list[str]:
    """The exception messages a section's doctests expect."""
    return re.findall(r"^RuntimeError: (.+)$", section, re.MULTILINE)


def test_every_error_kind_has_a_section_and_back() -> None:
    assert list(sections()) == [kind.slug for kind in ERRORS]


@pytest.mark.parametrize("slug", [kind.slug for kind in ERRORS])
def test_explain_recognises_every_message_of_its_section(slug: str) -> None:
    found = messages(sections()[slug])
    assert found, f"section error-{slug} shows no error message"
    for message in found:
        exact = message.removesuffix(" ...")  # a final "..." marks text that varies by release
        result = explain(exact)
        assert result.slug == slug, (message, result.slug)
        assert result.url == f"errors.html#error-{slug}"
        assert error_kind(slug).title in str(result)


def test_the_page_runs_and_shows_todays_messages() -> None:
    """Run every {doctest} block of the page like sphinx.ext.doctest does."""
    text = PAGE.read_text()
    # the page's doctests see what Sphinx's doctest_global_setup gives them
    from inplace_recipes.claims import verify

    globs = {"__name__": "errors_md", "verify": verify}
    parser = doctest.DocTestParser()
    failures = tried = 0
    for n, block in enumerate(BLOCK.finditer(text)):
        body, flags = block["body"], DEFAULT_FLAGS
        for option in re.findall(r"^:options: (.+)$", body, re.MULTILINE):
            for flag in option.split(","):
                flag = flag.strip()
                value = doctest.OPTIONFLAGS_BY_NAME[flag[1:]]
                flags = flags & ~value if flag[0] == "-" else flags | value
        body = re.sub(r"^:\w+:.*\n", "", body, flags=re.MULTILINE)
        test = parser.get_doctest(body, globs, f"errors.md block {n}", str(PAGE), 0)
        runner = doctest.DocTestRunner(optionflags=flags)
        with warnings.catch_warnings():
            # AOT autograd traces backward in anomaly mode, which notes where it failed
            warnings.filterwarnings("ignore", "Error detected in", UserWarning)
            runner.run(test, clear_globs=False)
        globs = test.globs  # one namespace for the page, as in Sphinx
        failures += runner.failures
        tried += runner.tries
    assert tried > 40
    assert failures == 0


def test_exact_messages_are_checked() -> None:
    """The page's error blocks turn off IGNORE_EXCEPTION_DETAIL, so a changed message fails."""
    for slug, section in sections().items():
        for block in BLOCK.finditer(section):
            if "Traceback" in block["body"]:
                assert ":options: -IGNORE_EXCEPTION_DETAIL" in block["body"], slug


def test_explain_takes_the_exception_and_reads_versions() -> None:
    x = torch.ones(3, requires_grad=True)
    h = torch.exp(x)
    h.add_(1)
    h.add_(1)
    with pytest.raises(RuntimeError) as info:
        h.sum().backward()
    result = explain(info.value)
    assert result.slug == "saved-tensor-modified"
    assert "saved at version 0 and is now at version 2" in str(result)
    assert "Fix: " in str(result)


@pytest.mark.parametrize("message", ["", "CUDA out of memory", "index 5 is out of bounds"])
def test_unknown_messages_are_said_to_be_unknown(message: str) -> None:
    result = explain(message)
    assert not result.recognized
    assert result.slug is None
    assert result.url is None
    assert str(result).startswith("Not recognised")


def test_compile_forms_are_explained_as_the_eager_error_inside() -> None:
    section = labelled(PAGE.read_text())["torch-compile-forms"]
    wrapped = re.findall(
        r"^torch\._dynamo\.exc\.\w+: (.+?)\n(?:```|\.\.\.)", section, re.MULTILINE | re.DOTALL
    )
    assert len(wrapped) == 2
    for message, slug in zip(wrapped, ["view-of-leaf", "saved-tensor-modified"], strict=True):
        result = explain(message.replace("\n...", ""))
        assert result.slug == slug
        assert "torch.compile raised it" in str(result)


def test_eager_messages_do_not_mention_compile() -> None:
    for slug, section in sections().items():
        for message in messages(section):
            assert "torch.compile" not in str(explain(message)), slug


@pytest.mark.parametrize(
    ("op", "node"),
    [("Tanh", "Tanh"), ("Sigmoid", "Sigmoid"), ("ExpBackward0", "Exp"), ("MulBackward", "Mul"),
     ("CopySlices", "CopySlices"), ("struct torch::autograd::CopySlices", "CopySlices")],
)  # fmt: skip
def test_advice_names_the_op_the_message_names_and_invents_no_function(op: str, node: str) -> None:
    message = (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [torch.FloatTensor [4, 3]], which is output 0 of {op}, is at version 1; "
        "expected version 0 instead. Hint: ..."
    )
    text = str(explain(message))
    fix = text.split("Fix: ")[1]
    assert fix.startswith("h = h * 2  #"), fix
    assert f"The tensor is output 0 of {node} (torch.FloatTensor [4, 3])" in text
    assert "saved at version 0 and is now at version 1" in text
    others = {"Tanh", "Sigmoid", "Exp", "Mul", "CopySlices"} - {node}
    assert not any(other in fix for other in others), fix
    # no function made up from the node's name (the old advice said asstrided(...))
    assert not re.search(r"\b[a-z_]+\(\.\.\.\)", fix), fix


@pytest.mark.parametrize(
    ("origin", "what"),
    [(", which is output 0 of AsStrided", "output 0 of AsStrided"), ("", "has no grad_fn: a leaf")],
)
def test_a_saved_view_or_leaf_is_explained_as_an_optimizer_step(origin: str, what: str) -> None:
    """The GAN error: the old advice named a made-up ``asstrided`` and missed the step."""
    message = (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [torch.FloatTensor [16, 1]]{origin}, is at version 2; expected version 1 "
        "instead. Hint: ..."
    )
    text = str(explain(message))
    assert "The tensor is a leaf or a view of one" in text
    assert what in text
    assert explain(message).fix.startswith("loss.backward(); optimizer.step()")
    assert "asstrided(" not in text.lower()


@pytest.mark.parametrize(
    ("node", "first"),
    [
        *((node, "step-between") for node in ("TBackward", "AsStridedBackward0", "Transpose")),
        ("PermuteBackward0", "step-between"),
        *((node, "view-written") for node in ("SelectBackward", "SliceBackward0", "Squeeze")),
        ("ViewBackward0", "view-written"),
        ("UnsqueezeBackward0", "view-written"),
        ("ExpandBackward", "view-written"),
    ],
)
def test_only_the_views_ops_save_of_a_weight_put_the_optimizer_step_first(
    node: str, first: str
) -> None:
    """A two-dimensional saved view is a weight's when ops save that view of a weight: its
    transpose (``T`` up to 1.x, ``AsStrided`` in 2.13 once the weight was written) or a
    permutation; a Select, Slice, Squeeze, View, Unsqueeze or Expand is an activation's
    (before: the step came first for every view node, 3 of 3 such threads in the data
    were not a step)."""
    message = (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [torch.cuda.FloatTensor [256, 12]], which is output 0 of {node}, is at "
        "version 1; expected version 0 instead. Hint: ..."
    )
    keys = [cause.key for cause in explain(message).causes]
    assert keys[0] == first, keys
    assert ("step-between" in keys) == (first == "step-between"), keys


def test_a_weights_transpose_permutation_or_row_prints_asstrided_in_2_13() -> None:
    """Why ``AsStrided`` is among the weight's views: in torch 2.13 a weight's transpose,
    permutation or row that an op saved prints that node once the weight was written (an
    activation's too, and a complex tensor's ``conj()`` prints ``Conj``: the rule cannot
    tell those)."""
    w = torch.randn(3, 4, requires_grad=True)
    x = torch.randn(2, 4, requires_grad=True)
    for view in (lambda w: w.t(), lambda w: w.permute(1, 0), lambda w: w[1]):
        y = (x @ view(w)) if view(w).dim() == 2 else (x * view(w))
        with torch.no_grad():
            w.add_(1)
        with pytest.raises(RuntimeError, match="which is output 0 of AsStrided, is at version"):
            y.sum().backward()


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_a_saved_bfloat16_half_or_float_weight_is_explained_as_an_optimizer_step(
    dtype: torch.dtype,
) -> None:
    """Torch's messages print the legacy name (``torch.FloatTensor``) only for the types its
    table rewrites; a bfloat16 one keeps its backend's, ``CPUBFloat16Type`` (on a GPU
    ``CUDABFloat16Type``). A bfloat16 weight stepped between forward and backward gets the
    step first all the same (before: the op that made it, for a tensor that no op made)."""
    layer = torch.nn.Conv1d(2, 3, 3).to(dtype)  # saves its weight itself: a leaf
    x = torch.randn(1, 2, 8, dtype=dtype, requires_grad=True)
    loss = layer(x).sum()
    layer.weight.grad = torch.ones_like(layer.weight)
    torch.optim.SGD(layer.parameters(), lr=0.1).step()
    with pytest.raises(RuntimeError) as raised:
        loss.backward()
    keys = [cause.key for cause in explain(raised.value).causes]
    assert keys[0] == "step-between", (str(raised.value), keys)
    cuda = str(raised.value).replace("CPUBFloat16Type", "CUDABFloat16Type")
    assert explain(cuda).causes[0].key == "step-between"


@pytest.mark.parametrize(
    ("name", "first"),
    [
        ("MPSFloatType", "step-between"),
        ("XPUHalfType", "step-between"),
        ("CPUComplexFloatType", "step-between"),
        ("CUDAFloat8_e4m3fnType", "step-between"),
        ("MPSLongType", "index-written"),
        ("CUDABoolType", "index-written"),
        ("torch.cuda.ByteTensor", "index-written"),
    ],
)
def test_a_saved_leaf_is_read_by_its_type_under_any_backends_name(name: str, first: str) -> None:
    """A leaf's type as torch names it off the CPU and CUDA's legacy table (Apple's MPS, XPU,
    complex and float8 types): a floating one is a weight, an integer or boolean one an index
    or a mask (before: the op that made it, for a tensor that no op made)."""
    message = (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{name} [3, 4]] is at version 1; expected version 0 instead."
    )
    assert explain(message).causes[0].key == first


def test_a_mask_written_after_torch_where_saved_it_is_explained_as_an_index() -> None:
    """A boolean tensor prints ``CPUBoolType``; ``torch.where`` saves its condition."""
    x = torch.ones(3, requires_grad=True)
    mask = torch.tensor([True, False, True])
    y = torch.where(mask, x, 2 * x)
    mask.logical_not_()
    with pytest.raises(RuntimeError, match=r"\[CPUBoolType \[3\]\] is at version 1") as raised:
        y.sum().backward()
    assert [cause.key for cause in explain(raised.value).causes] == ["index-written"]


@pytest.mark.parametrize("node", ["BroadcastBackward", "BroadcastBackward0", "Broadcast"])
@pytest.mark.parametrize("shape", ["[256]", "[1, 512, 4, 4]"])
def test_dataparallels_copy_of_a_parameter_is_explained_as_a_weight(node: str, shape: str) -> None:
    """A saved output of ``Broadcast`` is DataParallel's copy of a parameter, whatever its
    shape: the step-between cause first (before, the generic "the op that made it")."""
    message = (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [torch.cuda.FloatTensor {shape}], which is output 73 of {node}, is at "
        "version 4; expected version 3 instead. Hint: enable anomaly detection ..."
    )
    explained = explain(message)
    assert [cause.key for cause in explained.causes] == ["step-between"]
    assert "DataParallel's copy of one" in str(explained)


def test_dataparallel_copies_its_parameters_with_broadcast() -> None:
    """The sentence's source: ``replicate`` broadcasts the parameters with the autograd
    Function ``Broadcast`` (no GPU here to run it), whose node torch names
    ``BroadcastBackward``."""
    import importlib
    import inspect

    from torch.nn.parallel import _functions

    replicate = importlib.import_module("torch.nn.parallel.replicate")  # not the function
    assert "Broadcast.apply" in inspect.getsource(replicate._broadcast_coalesced_reshape)
    assert issubclass(_functions.Broadcast, torch.autograd.Function)
    assert _functions.Broadcast._backward_cls.__name__ == "BroadcastBackward"


def test_a_write_through_an_index_names_copyslices() -> None:
    x = torch.ones(3, requires_grad=True)
    w = torch.ones(3, requires_grad=True)
    h = x.exp()
    y = h * w
    h[0] = 5.0
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    assert "torch::autograd::CopySlices" in str(info.value)
    text = str(explain(info.value))
    assert "The tensor is output 0 of CopySlices" in text
    assert "CopySlices: a write through an index" in text


def test_advice_from_a_live_tanh_error_names_tanh() -> None:
    x = torch.ones(2, 3, requires_grad=True)
    r = torch.tanh(x)
    r[:, 0] = 0
    with pytest.raises(RuntimeError) as info:
        r.sum().backward()
    text = str(explain(info.value))
    assert "output 0 of Tanh" in text
    assert "relu" not in text.split("Fix: ")[1]


def _seconds(message: str) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        explain(message)
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize(
    "unit",
    [
        "modified by an inplace operation: [",
        "modified by an inplace operation: [torch.FloatTensor [3]], which is output 0 of ",
        "output with shape [1, ",
        "Output 0 of ",
    ],
)
def test_explain_is_linear_in_the_message_length(unit: str) -> None:
    """A long repetitive message: 4x longer must not take ~16x longer (quadratic).

    The regex this replaced took 7 s for 8,000 repetitions of the first unit
    (0.45 s for 2,000); now that is milliseconds, so the absolute bound fails
    fast on a quadratic search. The scaling is compared between messages
    that are both larger than a CPU cache, where a linear search scales
    linearly (below that, a cache cliff alone can look superlinear).
    """
    head = (
        "one of the variables needed for gradient computation has been modified by an "
        "inplace operation: "
    )
    assert _seconds(head + unit * 8_000) < 1.0
    short, long = head + unit * 32_000, head + unit * 128_000
    ratio = _seconds(long) / max(_seconds(short), 1e-4)
    assert ratio < 10, f"4x the message took {ratio:.1f}x the time"


class _Unprintable(RuntimeError):
    def __str__(self) -> str:
        raise ValueError("no message")


def test_an_exception_whose_str_raises_is_explained_not_raised() -> None:
    result = explain(_Unprintable())
    assert not result.recognized
    assert "_Unprintable" in str(result)


# importing inductor (the default backend) uses torch.jit.script_method, deprecated in 2.13
@pytest.mark.filterwarnings("ignore:.*torch.jit.script_method:DeprecationWarning")
def test_force_eager_shows_the_eager_error_at_its_line_as_explain_advises() -> None:
    """explain()'s note on a compiled error: under set_stance("force_eager") an error raised
    at the write points at its line ..."""

    def zero_first(a: torch.Tensor) -> torch.Tensor:
        a[0] = 0.0
        return a

    with torch.compiler.set_stance("force_eager"), pytest.raises(RuntimeError) as info:
        torch.compile(zero_first)(torch.ones(3, requires_grad=True))
    assert type(info.value) is RuntimeError
    assert explain(info.value).slug == "view-of-leaf"
    assert "torch.compile" not in str(explain(info.value))
    assert info.traceback[-1].name == "zero_first"


@pytest.mark.filterwarnings("ignore:.*torch.jit.script_method:DeprecationWarning")
def test_force_eager_points_a_saved_tensor_error_at_backward_not_the_write() -> None:
    """... and one about a tensor saved for backward points at backward (the note sends the
    reader to audit() for the write), as the note says."""

    def scale_in_place(a: torch.Tensor) -> torch.Tensor:
        h = a.sigmoid()
        h.mul_(2)
        return h

    def run() -> None:
        with torch.compiler.set_stance("force_eager"):
            torch.compile(scale_in_place)(torch.ones(3, requires_grad=True)).sum().backward()

    with pytest.raises(RuntimeError) as info:
        run()
    assert explain(info.value).slug == "saved-tensor-modified"
    names = [entry.name for entry in info.traceback]
    assert "scale_in_place" not in names  # the write's frame is gone: backward raised
    assert "run" in names


_LEAF = "RuntimeError: a leaf Variable that requires grad is being used in an in-place operation."
_VIEW = "RuntimeError: a view of a leaf Variable that requires grad is being used in an in-place operation."
_SAVED = (
    "RuntimeError: one of the variables needed for gradient computation has been modified by an "
    "inplace operation"
)
#: Pastes that show a cause, each with the cause that must come first. Without the code
#: line each gets its section's default order; the last ones show no cause (a frame in
#: between, a plain assignment, a write into part of a tensor: every view-of-leaf paste).
SHOWN_PASTES: list[tuple[str, str | None]] = [
    (
        f'  File "init.py", line 4, in <module>\n    conv.weight.fill_(1)\n{_LEAF}',
        "edit-on-purpose",
    ),
    (f"----> 1 conv.weight.fill_(1)\n\n{_LEAF}", "edit-on-purpose"),
    (f"    p.add_(-lr, p.grad)\n    ^^^^^^^^^^^^^^^^^^^\n{_LEAF}", "edit-on-purpose"),
    (f"    params[0] -= lr * grads[0]\n{_LEAF}", "edit-on-purpose"),
    (f"    self.bias[0] = 0.0\n{_VIEW}", "edit-on-purpose"),
    (f"ipdb> inputs_embeds += image_embeds.mean() * 0.\n*** {_LEAF}", "own-write"),
    (f"    x.clamp_(0, 1)\n{_LEAF}", "own-write"),
    (f"    x[mask] = 0\n{_LEAF}", "own-write"),
    (f"DistributedDataParallel, two forwards, then backward:\n{_SAVED}", "ddp-buffers"),
    (f"[rank1]: {_SAVED} (DDP with BatchNorm)", "ddp-buffers"),
    # a GAN's names: one network's step between the other's forward and its backward
    (f"Training a GAN:\n{_SAVED}", "step-between"),
    (f"my DCGAN: {_SAVED}", "step-between"),
    (f"{_SAVED}\noptimizerD.step() runs before lossG.backward()", "step-between"),
    (f"errD = criterion(netD(fake), label)\n{_SAVED}", "step-between"),
    (f"    opt_d.step()\n{_SAVED}", "step-between"),
    (f"d_optimizer.zero_grad()\n{_SAVED}", "step-between"),
    (f"{_SAVED} (the generator's loss after the discriminator's update)", "step-between"),
    (
        f"{_SAVED}: [torch.cuda.FloatTensor [64]] is at version 3; expected version 2 instead. DDP",
        "ddp-buffers",
    ),
    # DDP named, but the tensor is a weight's transpose, which no buffer broadcast writes
    (
        f"DDP: {_SAVED}: [torch.FloatTensor [3, 4]], which is output 0 of TBackward0, is at version 2; expected version 1 instead.",
        None,
    ),
    # IPython prints context lines after its arrow line: the arrow line is the write
    (f"----> 2 conv.weight.fill_(1)\n      3 x += 1\n\n{_LEAF}", "edit-on-purpose"),
    (
        f"----> 3 conv.weight.fill_(1)\n      4 {'y = compute(a, b, c) ' * 12}\n\n{_LEAF}",
        "edit-on-purpose",
    ),
    (f"    self.x.add_(1)\n{_LEAF}", "own-write"),
    # Jupyter: the arrow line, not a context line before or after it
    (
        f"Cell In[3], line 2\n      1 conv.weight.fill_(1)\n----> 2 x.add_(1)\n      3 y = 1\n\n{_LEAF}",
        "own-write",
    ),
    (f"----> 2 x.add_(1)\n      3 conv.bias.zero_()\n\n{_LEAF}", "own-write"),
    (f"----> 2 x.add_(1)\n\n{_LEAF}", "own-write"),
    (f"----> 2 self.x.add_(1)\n\n{_LEAF}", "own-write"),
    (f"----> 2 model.fc.weight.add_(1)\n      3 x.add_(1)\n\n{_LEAF}", "edit-on-purpose"),
    # chained: the leaf error came from your code; a library raised the later ValueError
    (
        (
            f'  File "a.py", line 3, in f\n    y = g(x)\n{_LEAF}\n\nDuring handling of the above '
            'exception, another exception occurred:\n\n  File "/x/site-packages/foo/bar.py", '
            "line 10, in h\n    raise ValueError(1)\nValueError: 1"
        ),
        None,
    ),
    (f"    x = x.add(1)\n{_LEAF}", None),
    (f"----> 2 y = f(x)\n      3 x += 1\n\n{_LEAF}", None),
    (f'    conv.weight.fill_(1)\n  File "torch/x.py", line 9, in f\n    g()\n{_LEAF}', None),
    (f"    ob[i] = torch.roll(ob[i], 1, dims=1)\n{_VIEW}", None),
    # a training loop's step in its right place, or words that only look alike
    (f"    loss.backward()\n    optimizer.step()\n{_SAVED}", None),
    (f"train_generator = DataGenerator(files)\n{_SAVED} (a discriminatory loss)", None),
]


@pytest.mark.parametrize(("paste", "first"), SHOWN_PASTES)
def test_a_cause_the_paste_shows_comes_first(paste: str, first: str | None) -> None:
    """Cause.first_when: the line that wrote (just before torch's error), or DDP named."""
    from inplace_recipes.error_reference import CAUSES_HEADING, SHOWN_HEADING

    explained = explain(paste)
    plain = explain([line for line in paste.splitlines() if "RuntimeError: " in line][-1])
    if first is None:
        assert [c.key for c in explained.causes] == [c.key for c in plain.causes]
        assert SHOWN_HEADING not in explained.lines()
        assert not explained.shown
        if "DDP" in paste:  # named, but its cause does not fit a weight's transpose
            assert "ddp-buffers" not in [c.key for c in explained.causes]
        return
    assert explained.causes[0].key == first
    assert SHOWN_HEADING in explained.lines()
    assert sorted(c.key for c in explained.causes) == sorted(c.key for c in plain.causes)
    if plain.causes and plain.causes[0].key != first:
        assert CAUSES_HEADING in plain.lines() or len(plain.causes) == 1


def test_the_inference_messages_get_their_own_cause_first() -> None:
    """torch's own words for a saved inference tensor say "created in inference mode" too:
    the view's cause must not come first (a falsifying reader's finding)."""
    with torch.inference_mode():
        cache = torch.zeros(3)
    with pytest.raises(RuntimeError) as saved:
        torch.ones(3, requires_grad=True) * cache
    with pytest.raises(RuntimeError) as version:
        _ = cache._version
    assert [c.key for c in explain(saved.value).causes] == ["inference-tensor-saved"]
    assert [c.key for c in explain(version.value).causes] == ["inference-version-read"]
