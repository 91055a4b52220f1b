"""The error table: each section of the error reference, its wordings, its causes and their fixes.

One record per section of ``docs/errors.md`` (:class:`ErrorKind`), read by
every consumer: :func:`inplace_recipes.explain`, the page itself (each
section's answer is rendered from its record by ``docs/error_patterns.py``,
so that the Chinese catalogue translates these very words) and the site's
error box (the same module exports the table for it). A record holds

- its :class:`Wording` s: what each torch release prints, as a pattern
  searched in the message as :func:`~inplace_recipes._error_reading.read`
  gives it, with one literal message that a test matches (and any other form
  the pattern matches), and how many real threads print it (a later release's
  new wording is one more line here); a paste that no pattern matches, cut or
  retyped, is found by the words of these literals (``_error_words``);
- its :class:`Cause` s, the most frequent first (the order measured on the
  real messages of ``tests/data/real_errors.json``), each with the fix that
  the thread found and a pattern that the message must match for that cause
  to be possible (what the message says: the node, a leaf, a release's form);
- :class:`Detail` s: sentences filled in from the message (its version numbers).

Patterns use only syntax that Python and JavaScript read alike (the box runs
them in the browser); ``(?P<name>...)`` is exported as ``(?<name>...)``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ERRORS", "LIBRARY_WRITE", "NOTES", "Cause", "Detail", "ErrorKind", "Wording"]

#: Where the error reference lives, relative to the site root.
ERRORS_PAGE = "errors.html"


@dataclass(frozen=True)
class Wording:
    """What some torch releases print for one error: a pattern and one literal message."""

    releases: str
    pattern: str
    example: str
    #: Where the literal comes from: ``"live"`` (a repro on errors.md prints it), ``"cut"``
    #: (a live message as users paste it, cut after its first words) or a public thread.
    seen: str = "live"
    #: Other literal messages of these releases that the pattern matches, each with words the
    #: example lacks (the words matcher, ``_error_words``, reads a paste against each).
    forms: tuple[str, ...] = ()
    #: Whether torch also prints the example with "its base or another view of its base has
    #: been modified" for "is being modified" (the write went into the view's base).
    base_form: bool = False
    #: How many threads of the real-message data set's tune split print this wording (the
    #: first wording whose pattern matches): a paste that two sections' wordings share is
    #: most likely the one more threads print (tests/test_explain_real_errors.py counts them).
    threads: int = 0
    #: Whether the words reader (``_error_words``) reads a cut or retyped paste against these
    #: literals; ``False`` where the literal is so short that its weighty words alone are
    #: another message's too (the pattern, which keeps the small words, still matches).
    read_by_words: bool = True

    @property
    def literals(self) -> tuple[str, ...]:
        """The example, then each other form the pattern matches."""
        based = (_based(self.example),) if self.base_form else ()
        return (self.example, *based, *self.forms)


def _based(message: str) -> str:
    """``message`` as torch prints it when the write went into the view's base."""
    indirect = "and its base or another view of its base has been modified"
    return message.replace("and is being modified", indirect, 1)


@dataclass(frozen=True)
class Cause:
    """One cause of an error, what it means for the reader, and the fix that works for it.

    ``when`` is a pattern that the message must match for this cause to be
    possible (empty: any message of the section); ``first_when`` one that
    puts it first when the paste shows it (the line that wrote, a word such
    as ``DistributedDataParallel``); ``fix_class`` names the kind of fix, as
    the real-message data set records it.
    """

    key: str
    says: str
    fix: str
    fix_class: str
    when: str = ""
    first_when: str = ""


@dataclass(frozen=True)
class Detail:
    """A sentence filled in from the message: ``{name}`` is the named group of ``pattern``."""

    pattern: str
    template: str


@dataclass(frozen=True)
class ErrorKind:
    """One section of the error reference: how to recognise it, why, and the fix for each cause."""

    slug: str
    title: str
    why: str
    wordings: tuple[Wording, ...]
    causes: tuple[Cause, ...]
    details: tuple[Detail, ...] = ()

    @property
    def pattern(self) -> str:
        """One pattern for every wording (the first wording that matches names the release)."""
        return "|".join(f"(?:{wording.pattern})" for wording in self.wordings)

    @property
    def fix(self) -> str:
        """The fix for the most frequent cause."""
        return self.causes[0].fix

    @property
    def url(self) -> str:
        """The section's address, relative to the site root."""
        return f"{ERRORS_PAGE}#error-{self.slug}"


#: The node names of views.
_VIEW_NODES = r"(?:AsStrided?|T|Transpose|Permute|View|Expand|Select|Slice|Unsqueeze|Squeeze)"
#: The views of a weight that ops save: a two-dimensional one of these (or a leaf, whose
#: message names no node) is most often a layer's weight. Torch 1.x names nn.Linear's saved
#: transpose "TBackward"; 2.13 names any strided view of a written tensor "AsStrided" (a slice,
#: a transpose, a reshape; a complex tensor's conj() prints "Conj"), an activation's as well
#: as a weight's: in 2.13's messages the rule cannot tell them apart.
#: In older releases' messages, a two-dimensional Select, Slice, Squeeze or View is most
#: often an activation's (in the scored real-message sets, none of 3 such threads was a step).
_WEIGHT_VIEW_NODES = r"(?:AsStrided?|T|Transpose|Permute)"
#: DataParallel's copies of the parameters (``replicate`` broadcasts them with
#: ``torch.nn.parallel._functions.Broadcast``; the copy on the first device shares the
#: parameter's storage and version counter): a saved "output N of BroadcastBackward" is a weight.
_REPLICA_NODES = r"Broadcast"
#: A floating (or complex) type's name in the message. Torch's messages print the legacy name
#: (torch.FloatTensor, torch.cuda.HalfTensor) only for the CPU and CUDA types its table
#: rewrites (torch/csrc/Exceptions.cpp: Byte to Double); any other keeps its backend's name
#: (CPUBFloat16Type, CUDABFloat16Type, MPSFloatType, CPUComplexFloatType, CPUFloat8_e4m3fnType).
_FLOATING_TYPES = (
    r"(?:(?:Float|Half|Double|BFloat16)Tensor|"
    r"[A-Z][A-Za-z0-9]{1,20}(?:Float|Half|Double|BFloat16|Float8_[a-z0-9]{1,12})Type)"
)
#: A saved leaf of a floating type, a saved two-dimensional view (a weight, or its
#: transpose), or DataParallel's copy of a parameter.
_SAVED_WEIGHT = (
    rf"{_FLOATING_TYPES} \[[\w, ]{{0,200}}\]\],? is at version|"
    rf"\[\w{{1,20}}, \w{{1,20}}\]\], which is output \d{{1,6}} of {_WEIGHT_VIEW_NODES},|"
    rf"which is output \d{{1,6}} of {_REPLICA_NODES},"
)
#: A saved one-dimensional leaf on a GPU: what the threads under DistributedDataParallel show.
_SAVED_BUFFER = r"cuda\.FloatTensor \[\d{1,10}\]\],? is at version"
_SAVED_VIEW = rf"which is output \d{{1,6}} of {_VIEW_NODES},"
#: An integer or boolean type's name, legacy or its backend's (a bool tensor prints CPUBoolType).
_INDEX_TYPES = (
    r"(?:(?:Long|Int|Short|Byte|Char|Bool)Tensor|"
    r"[A-Z][A-Za-z0-9]{1,20}(?:Long|Int|Short|Byte|Char|Bool|UInt\d{1,2})Type)"
)
_SAVED_INDEX = rf"{_INDEX_TYPES} \[[\w, ]{{0,200}}\]\],? is at version"
_SAVED_OP_OUTPUT = rf"which is output \d{{1,6}} of (?!{_VIEW_NODES},|{_REPLICA_NODES},)\w"
_MULTI_OUTPUT_NODES = r"(?:Unbind|Split|SplitWithSizes|Chunk|UnsafeSplit|UnsafeChunk)"
_NO_GRAD_TAIL = (
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
    "your code by moving both the view and the inplace either both inside the no_grad block (if "
    "you don't want the inplace to be tracked) or both outside (if you want the inplace to be "
    "tracked)."
)
_INFERENCE_TAIL = _NO_GRAD_TAIL.replace("no_grad block", "inference_mode block")
_CUSTOM_TAIL = (
    "This view was created inside a custom Function (or because an input was returned as-is) "
    "and the autograd logic to handle view+inplace would override the custom backward associated "
    "with the custom Function, leading to incorrect gradients. This behavior is forbidden. You "
    "can fix this by cloning the output of the custom Function."
)
#: Torch 1.5 to 1.7's deprecation warning for a custom Function's view, after the node's name
#: (https://github.com/frgfm/torch-cam/issues/72 shows it for a full backward hook).
_CUSTOM_WARNING = (
    " is a view and is being modified inplace. This view was created inside a custom Function "
    "(or because an input was returned as-is) and the autograd logic to handle view+inplace "
    "would override the custom backward associated with the custom Function, leading to "
    "incorrect gradients. This behavior is deprecated and will be forbidden starting version "
    "1.6. You can remove this warning by cloning the output of the custom Function."
)
_MULTI_TAIL = (
    "This view is the output of a function that returns multiple views. Such functions do not "
    "allow the output views to be modified inplace. You should replace the inplace operation by "
    "an out-of-place one."
)
_VMAP_TAIL = (
    "is not possible because there exists a Tensor `other` in extra_args that has more elements "
    "than `self`. This happened due to `other` being vmapped over but `self` not being vmapped "
    "over in a vmap. Please try to use out-of-place operators instead of {op}. If said operator "
    "is being called inside the PyTorch framework, please file a bug report instead."
)
_STEP_FIX = (
    "loss.backward(); optimizer.step()  # every backward through this forward before the step "
    "that updates the weights, or the forward again after the step; a write of your own into "
    "that tensor: out of place"
)

#: The code a paste shows just before torch's error: for the errors that torch raises at the
#: write (a leaf, a view of one), the line that wrote.
_BEFORE_THE_ERROR = r"(?:(?!File \"|Error: ).){0,200}?(?:\*{3} )?RuntimeError: "
#: An in-place write into a parameter: a method ending in _ on ``.weight``, ``.bias``,
#: ``param``, ``p`` (an optimizer loop's name), or an augmented or indexed assignment to one.
_PARAMETER = (
    r"(?:\.(?:weight|bias)|\b(?:params?|parameters?|p))\b(?:\[[^\]]{0,100}\])?"
    r"(?:\.[a-z]\w{0,30}_\(|\s?[-+*/]?=\s)"
)
#: IPython's and Jupyter's arrow line (``----> 3 conv.weight.fill_(1)``), which context lines
#: follow, then the error with no frame in between.
_ARROW = r"-{2,}> ?\d{1,6} "
_ARROW_THEN_ERROR = r"(?:(?!File |Error: |-{2,}>).){0,2000}?(?:\*{3} )?RuntimeError: "
_NO_ARROW = r"^(?!.*-{2,}> ?\d).*?"
_PARAMETER_WRITTEN = (
    f"{_NO_ARROW}{_PARAMETER}{_BEFORE_THE_ERROR}|"
    f"{_ARROW}[\\w.]{{0,100}}{_PARAMETER}{_ARROW_THEN_ERROR}"
)
#: An in-place write into another name: ``x[i] = v``, ``x += v``, ``x.index_copy_(...)``.
#: (Not where IPython's arrow line points elsewhere: the last line is then context.)
_OTHER_NAME = (
    r"\b(?!(?:weight|bias|params?|parameters?|p)\b)[A-Za-z_]\w{0,50}"
    r"(?:\[[^\]]{0,100}\]\s?[-+*/]?=\s|\s?[-+*/]=\s|\.[a-z]\w{0,30}_\()"
)
_OTHER_WRITTEN = (
    f"{_NO_ARROW}{_OTHER_NAME}{_BEFORE_THE_ERROR}|"
    rf"{_ARROW}(?![\w.]{{0,100}}(?:\.(?:weight|bias)|\b(?:params?|parameters?|p))\b)"
    rf"[\w.]{{0,100}}?{_OTHER_NAME}{_ARROW_THEN_ERROR}"
)
#: The paste names DistributedDataParallel.
_DDP_NAMED = r"DistributedDataParallel|\bDDP\b"
#: The paste names a GAN (``DCGAN``, ``CycleGAN``), its discriminator or its two networks'
#: or optimizers' names (``netD``, ``optimizerG``, ``opt_d``, ``d_optimizer``): the weights
#: one network's step updates between the other's forward and backward. (Not a bare
#: ``optimizer.step()``: a pasted training loop shows one in its right place too.)
_GAN_NAMED = (
    r"GANs?\b|\bgans?\b|\b[Dd]iscriminators?\b|\bDISCRIMINATOR\b"
    r"|\b(?:net|opt|optim|optimizer)_?[DGdg]\b|\b[dg]_?(?:opt|optim|optimizer)\b"
)

#: The innermost frame of a pasted traceback (or a warning's location) is a file of
#: another library than torch: that library wrote in place.
_LIBRARY_FRAME = (
    r"[/\\](?:site|dist)-packages[/\\](?!torch[/\\])[^\s\"]{1,300}\.py(?::\d{1,6}: \w{0,100}"
    r"Warning:|\", line \d{1,6}, in \S{1,200} (?:(?!File \")[\s\S]){0,2000}?[\w.]{0,100}"
    r"RuntimeError:)"
)
#: A cause of any section: it comes first when the paste shows it.
LIBRARY_WRITE = Cause(
    "library-write",
    "The paste shows where: the line that wrote is inside a library (a site-packages path that "
    "is not torch), not in your code.",
    "pip install -U the_library  # a release that no longer writes in place there; or patch "
    "that line out of place and report it to the library",
    "library-patch",
    when=_LIBRARY_FRAME,
)

#: Sentences for any section, filled in from the message.
NOTES: tuple[Detail, ...] = (
    Detail(
        # Dynamo's fake-tensor run, or a backend that traces backward and raises while compiling
        r"Dynamo failed to run FX node with fake tensors|backend='\w{1,100}' raised",
        "torch.compile raised it while tracing your function: it is the eager error, wrapped. "
        'Without torch.compile (or under torch.compiler.set_stance("force_eager")) an error '
        "that torch raises at the write points at its line; one about a tensor saved for "
        "backward points at backward, and audit() finds the write.",
    ),
)

#: Every error on the reference page, in its order; the first whose pattern matches wins.
ERRORS: tuple[ErrorKind, ...] = (
    ErrorKind(
        "leaf",
        "A leaf that requires grad used in an in-place operation",
        "You wrote in place into a tensor you created with requires_grad=True (a parameter or "
        "input). After the write it would be the result of an operation, yet backward would "
        "still accumulate into its .grad as if it were the tensor you made.",
        (
            Wording(
                "1.0 to 2.13: an in-place op on the leaf",
                r"(?<!view of )a leaf Variable that requires grad is being used in an in-place "
                r"operation",
                "a leaf Variable that requires grad is being used in an in-place operation.",
                threads=4,
            ),
            Wording(
                "0.2 to 0.4: an in-place op on the leaf; 1.0 to 2.13: a custom Function's "
                "ctx.mark_dirty on the leaf",
                r"(?<!view of )a leaf Variable that requires grad has been used in an in-place "
                r"operation",
                "a leaf Variable that requires grad has been used in an in-place operation.",
            ),
            Wording(
                "0.1 to 0.2: raised in backward, at a leaf that an in-place op had changed (or "
                "one on a tensor sharing its version counter)",
                r"[Ll]eaf variable was used in an inplace operation",
                "leaf variable was used in an inplace operation",
                seen="https://github.com/pytorch/pytorch/issues/2512",
            ),
        ),
        (
            Cause(
                "own-write",
                "Your code writes into the leaf as part of the computation.",
                'x = x.add(1)  # or y = ir.RECIPES["where"](x, index, value) for x[index] = value',
                "out-of-place-rewrite",
                first_when=_OTHER_WRITTEN,
            ),
            Cause(
                "edit-on-purpose",
                "You edit a parameter on purpose (initialisation, an optimizer step of your own, "
                "copying weights in): that is not part of the graph.",
                "with torch.no_grad(): x.add_(1)  # the same edit, untracked: x stays a leaf",
                "torch-no-grad",
                first_when=_PARAMETER_WRITTEN,
            ),
            Cause(
                "marked-leaf",
                "A custom Function's forward marked a leaf dirty (ctx.mark_dirty): it wrote in "
                "place into the tensor you created.",
                "F.apply(x.clone())  # give a Function that marks its input dirty a copy, not "
                "the leaf",
                "clone-before-write",
                when="has been used",
            ),
        ),
    ),
    ErrorKind(
        "view-of-leaf",
        "A view of a leaf used in an in-place operation",
        "x[index] = value (or an in-place op on a slice) writes through a view into a leaf "
        "that requires grad; the leaf's own value must stay as it was.",
        (
            Wording(
                "1.0 to 2.13",
                r"a view of a leaf Variable that requires grad is being used in an in-place "
                r"operation",
                "a view of a leaf Variable that requires grad is being used in an in-place "
                "operation.",
                threads=12,
            ),
        ),
        (
            Cause(
                "edit-on-purpose",
                "You set part of a parameter on purpose (initialisation, copying weights in): "
                "that is not part of the graph.",
                "with torch.no_grad(): x[index] = value  # the same write, untracked: x stays "
                "a leaf",
                "torch-no-grad",
                first_when=_PARAMETER_WRITTEN,
            ),
            Cause(
                "own-write",
                "Your code writes into part of the leaf as part of the computation.",
                "y = x.clone(); y[index] = value  # instead of x[index] = value on the leaf",
                "clone-before-write",
                # no first_when=_OTHER_WRITTEN: every paste of this section shows a write into
                # part of a tensor, and most threads' own names are a parameter's (self.W[i] = v)
            ),
        ),
    ),
    ErrorKind(
        "saved-tensor-modified",
        "A variable needed for gradient computation modified by an inplace operation",
        "An operation saved this tensor for backward (sigmoid, exp and tanh save their output; "
        "mul and matmul save an input when the other input requires grad). A later in-place "
        "write changed it, so backward would use the wrong values and refuses.",
        (
            Wording(
                "0.3 to 2.13",
                # "computaion": users retype what they cannot paste
                r"variables needed for gradient \w{1,20} has been modified by an inplace "
                r"operation|has been modified by an inplace operation: ?\[",
                "one of the variables needed for gradient computation has been modified by an "
                "inplace operation: [torch.FloatTensor [3]], which is output 0 of Sigmoid, is at "
                "version 1; expected version 0 instead. Hint: the backtrace further above shows "
                "the operation that failed to compute its gradient. The variable in question was "
                "changed in there or anywhere later. Good luck!",
                threads=38,
            ),
            Wording(
                # no other message of torch's (docs/measurements/error-inventory.json) has "has
                # been modified by an inplace operation"; a paste that mentions the phrase in
                # other words ("not modified by an inplace operation") does not match, one that
                # says "has been modified by an inplace operation" of its own does. Its words
                # alone do not tell it: the ONNX exporter's "was modified by in-place operation,
                # but we cannot find its updated value" has them too
                "0.3 to 2.13: the message's clause alone, retyped (a title, a first line)",
                r"\bhas been modified by an? in[- ]?place operation",
                "has been modified by an inplace operation",
                "https://github.com/hasanirtiza/Pedestron/issues/58",
                read_by_words=False,
            ),
        ),
        (
            Cause(
                "op-output",
                "The message names the tensor's grad_fn: the op that made it, or the in-place op "
                "that last wrote it (CopySlices: a write through an index); that write broke it.",
                "h = h * 2  # out of place, instead of h.mul_(2) (and h = h + y for h += y, "
                'h = ir.RECIPES["where"](h, i, v) for h[i] = v, inplace=False for a layer) on '
                "the tensor the message names",
                "out-of-place-rewrite",
                when=_SAVED_OP_OUTPUT,
            ),
            Cause(
                "ddp-buffers",
                "Under DistributedDataParallel, with the module called more than once before "
                "one backward: the threads that report this message with a one-dimensional "
                "tensor (a BatchNorm buffer) fixed it with broadcast_buffers=False.",
                "model = DistributedDataParallel(model, broadcast_buffers=False)  # no buffer "
                "broadcast at each forward (torch 2.13 deprecates it for forward_sync_buffers)",
                "broadcast-buffers-false",
                when=_SAVED_BUFFER,
                first_when=_DDP_NAMED,
            ),
            Cause(
                "step-between",
                "The tensor is a leaf or a view of one (or DataParallel's copy of one: output N "
                "of Broadcast): most often a layer's weight (nn.Linear saves its transpose) that "
                "an optimizer.step() updated between the forward and "
                "this backward (or a graph kept with retain_graph=True and used again after the "
                "step). Code that ran on torch 1.4 and fails on 1.5 or later is most often this "
                "case: until 1.5 the optimizers stepped through .data, which the version counter "
                "does not count, so backward silently used the updated weights; an older torch "
                "hides the error, not the wrong gradient.",
                _STEP_FIX,
                "reorder-step-after-backward",
                when=_SAVED_WEIGHT,
                first_when=_GAN_NAMED,
            ),
            Cause(
                "view-written",
                "The tensor is a view (a slice, a reshape) that your code wrote in place after "
                "an op saved it.",
                "h = h.clone(); h[i] = v  # write into a copy, instead of into the saved view "
                '(or h = ir.RECIPES["where"](h, i, v))',
                "clone-before-write",
                when=_SAVED_VIEW,
            ),
            Cause(
                "index-written",
                "The tensor is an integer or boolean tensor: an index or a mask that an op saved "
                "(x[idx], gather, embedding, torch.where's condition, a loss's targets), written "
                "in place after it was used.",
                "idx = idx.clamp(0, n - 1)  # out of place, instead of idx.clamp_(0, n - 1) on "
                "an index already used",
                "out-of-place-rewrite",
                when=_SAVED_INDEX,
            ),
        ),
        (
            Detail(
                r"modified by an inplace operation: \[(?P<tensor>[^\]]{0,200}\])\], which is "
                r"(?P<origin>output \d{1,6} of \w{1,200}), is at version (?P<now>\d{1,20}); "
                r"expected version (?P<then>\d{1,20})",
                "The tensor is {origin} ({tensor}); it was saved at version {then} and is now "
                "at version {now}.",
            ),
            Detail(
                r"modified by an inplace operation: \[(?P<tensor>[^\]]{0,200}\])\],? is at version "
                r"(?P<now>\d{1,20}); expected version (?P<then>\d{1,20})",
                "The tensor ({tensor}) has no grad_fn: a leaf; it was saved at version {then} "
                "and is now at version {now}.",
            ),
        ),
    ),
    ErrorKind(
        "graph-interior",
        "Leaf variable has been moved into the graph interior",
        "A tensor was used as a leaf that requires grad, then stopped requiring grad and "
        "received a gradient history from an in-place write; the backward of a graph recorded "
        "before the write reaches a leaf that is no longer a leaf.",
        (
            Wording(
                "0.3 to 2.13",
                r"leaf variable has been moved into the graph interior",
                "leaf variable has been moved into the graph interior",
                threads=3,
            ),
        ),
        (
            Cause(
                "requires-grad-dropped",
                "The leaf was used, then set to requires_grad=False and written with a value "
                "that requires grad.",
                'b = ir.RECIPES["where"](a, index, value)  # write into a new tensor, keep a a '
                "leaf",
                "out-of-place-rewrite",
            ),
        ),
    ),
    ErrorKind(
        "multi-output-view",
        "A view returned by a function that returns multiple views",
        "unbind, split, split_with_sizes and chunk return several views of one tensor; "
        "autograd cannot rewrite the history of one of them after an in-place write.",
        (
            Wording(
                "1.8 to 2.13",
                r"is a view and is being modified inplace\. This view is the output of a "
                r"function that returns multiple views",
                f"Output 0 of Unbind is a view and is being modified inplace. {_MULTI_TAIL}",
                threads=8,
            ),
            Wording(
                '1.8 (an error, worded "an output")',
                r"is a view and is being modified inplace\. This view is an output of a function "
                r"that returns multiple views\. Inplace operators on such views is forbidden",
                "RuntimeError: Output 0 of ViewBackward is a view and is being modified inplace. "
                "This view is an output of a function that returns multiple views. Inplace "
                "operators on such views is forbidden.",  # the thread's paste is cut after it
                "https://github.com/kail8/UnsupDIS-pytorch/issues/26",
                threads=1,
            ),
            Wording(
                "1.7 (a deprecation UserWarning: the write still ran)",
                r"is a view and is being modified inplace\. This view is an output of a function "
                r"that returns multiple views",
                "UserWarning: Output 1 of SplitBackward is a view and is being modified inplace. "
                "This view is an output of a function that returns multiple views. Inplace "
                "operators on such views are being deprecated and will be forbidden starting "
                "from version 1.8. Consider using `unsafe_` version of the function that "
                "produced this view or don't modify this view inplace. (Triggered internally at "
                " ../torch/csrc/autograd/variable.cpp:491.)",
                "https://github.com/pytorch/pytorch/issues/46820",
                threads=3,
            ),
            Wording(
                "1.8 to 2.13, the first sentence alone",
                rf"Output \d{{1,6}} of {_MULTI_OUTPUT_NODES} is a view and is being modified "
                r"inplace",
                "Output 0 of SplitBackward0 is a view and is being modified inplace.",
                "cut",
            ),
        ),
        (
            Cause(
                "piece-written",
                "Your code writes in place into a piece that unbind, split or chunk returned.",
                'x = ir.RECIPES["select_scatter"](x, i, x[i] + 1)  # out of place on the whole '
                "tensor; or first = parts[0].add(1) if x need not change",
                "out-of-place-rewrite",
            ),
        ),
    ),
    ErrorKind(
        "multi-output-view-base",
        "A view from a function that returns multiple views, after its base was modified",
        "You took several views at once (unbind, split, chunk), then wrote in place into "
        "their base (or, under no_grad, into one of them); the others cannot be given the "
        "new history, so the next operation that records a graph on one of them fails.",
        (
            Wording(
                "1.8 to 2.13",
                r"is a view and its base or another view of its base has been modified inplace\. "
                r"This view is the output of a function that returns multiple views",
                "Output 0 of Unbind is a view and its base or another view of its base has been "
                f"modified inplace. {_MULTI_TAIL}",
                threads=1,
            ),
            Wording(
                "1.8 to 2.13, the first sentence alone",
                rf"Output \d{{1,6}} of {_MULTI_OUTPUT_NODES} is a view and its base or another "
                r"view of its base has been modified inplace",
                "Output 0 of UnbindBackward0 is a view and its base or another view of its base "
                "has been modified inplace.",
                "cut",
            ),
        ),
        (
            Cause(
                "base-written",
                "Your code writes into the base after taking its pieces, and the pieces should "
                "show the new values.",
                "first, second = t.unbind()  # again after the write into t, for pieces with the "
                "new values (or t = t + 1 out of place, for pieces that keep the old ones)",
                "out-of-place-rewrite",
            ),
        ),
    ),
    ErrorKind(
        "no-grad-view",
        "A view created in no_grad mode, modified in grad mode",
        "The view was taken under torch.no_grad() and written with gradients on by a write "
        "autograd records (its base requires grad, or the value written does), or its "
        "base was written in place (in either mode) and the view then used with gradients "
        "on; autograd cannot tell whether the write should be tracked. A view taken with "
        "gradients on may be written under no_grad.",
        (
            Wording(
                "1.9 to 2.13",
                r"A view was created in no_grad mode and (?:is being|its base or another view of "
                r"its base has been) modified inplace with grad mode enabled(?!\. This view (?:was "
                r"created inside a custom Function|is the output of a function that returns "
                r"multiple views))",
                "A view was created in no_grad mode and is being modified inplace with grad mode "
                f"enabled. {_NO_GRAD_TAIL}",
                base_form=True,
                threads=1,
            ),
            Wording(
                # torch 2.13 prints it too, where no no_grad ran: x.split(2)[0].mul_(w), x
                # without grad and w with it (a multi-output view without a grad_fn)
                "1.8 to 2.13: a view from a function that returns multiple views",
                r"A view was created in no_grad mode and (?:is being|its base or another view of "
                r"its base has been) modified inplace with grad mode enabled\. This view is the "
                r"output of a function that returns multiple views",
                "A view was created in no_grad mode and is being modified inplace with grad mode "
                f"enabled. {_MULTI_TAIL}",
                "https://github.com/Jakaria08/EESRGAN/issues/25",
                base_form=True,
                threads=1,
            ),
            Wording(
                "1.9 to 2.13: a view of that view, written (v[0] = 5.0)",
                r"is a view of a view which was created in no_grad mode and (?:is being|its base "
                r"or another view of its base has been) modified inplace with grad mode enabled",
                "Output 0 of Select is a view of a view which was created in no_grad mode and is "
                f"being modified inplace with grad mode enabled. {_NO_GRAD_TAIL}",
                base_form=True,
            ),
        ),
        (
            Cause(
                "view-written-with-grad",
                "Your code takes the view under no_grad and writes it with gradients on, as "
                "part of the computation.",
                'y = ir.RECIPES["where"](x, index, value)  # out of place, or take the view again',
                "out-of-place-rewrite",
            ),
            Cause(
                "edit-on-purpose",
                "You edit part of a tensor on purpose and do not want the write tracked.",
                "with torch.no_grad(): v = x[:2]; v[0] = 5.0  # the view and the write both "
                "under no_grad",
                "torch-no-grad",
            ),
        ),
    ),
    ErrorKind(
        "custom-function-view",
        "A view returned by a custom Function",
        "A torch.autograd.Function returned a view of its input (or the input itself); an "
        "in-place write would bypass its custom backward. Written under no_grad (or its base "
        "written), the output fails at its next use with gradients on instead.",
        (
            Wording(
                "1.8 to 2.13",
                r"Output \d{1,6} of (?!BackwardHookFunction )\w{1,200} is a view and (?:is being|"
                r"its base or another view of its base has been) modified in ?place\. This view "
                r"was created inside a custom Function",
                f"Output 0 of Identity is a view and is being modified inplace. {_CUSTOM_TAIL}",
                forms=(f"UserWarning: Output 0 of Identity{_CUSTOM_WARNING}",),
                base_form=True,
                threads=2,
            ),
            Wording(
                "1.8 to 2.13: the Function's input does not require grad",
                r"A view was created in no_grad mode and (?:is being|its base or another view of "
                r"its base has been) modified inplace with grad mode enabled\. This view was "
                r"created inside a custom Function",
                "A view was created in no_grad mode and is being modified inplace with grad mode "
                f"enabled. {_CUSTOM_TAIL}",
                base_form=True,
                threads=1,
            ),
        ),
        (
            Cause(
                "output-written",
                "Your code writes in place into what the Function returned.",
                "out = MyFunction.apply(x).clone()  # then write into the clone; after a write "
                "into x: apply the Function after the write",
                "clone-before-write",
            ),
        ),
    ),
    ErrorKind(
        "backward-hook-view",
        "An in-place op on a module's input or output with a full backward hook",
        "register_full_backward_hook wraps the module's inputs and outputs in a custom "
        "Function (BackwardHookFunction) that returns them as-is; an in-place op with gradients "
        "on, on one of them that requires grad, writes into that Function's output: out += "
        "shortcut on the hooked module's output, nn.ReLU(inplace=True) as the hooked module or "
        "right after it. Written under no_grad, the tensor fails at its next use with "
        "gradients on instead.",
        (
            Wording(
                "1.8 to 2.13 (BackwardHookFunctionBackward up to 2.12)",
                r"Output \d{1,6} of BackwardHookFunction is a view and (?:is being|its base or "
                r"another view of its base has been) modified in ?place",
                "Output 0 of BackwardHookFunction is a view and is being modified inplace. "
                f"{_CUSTOM_TAIL}",
                forms=(f"UserWarning: Output 0 of BackwardHookFunctionBackward{_CUSTOM_WARNING}",),
                base_form=True,
                threads=5,
            ),
        ),
        (
            Cause(
                "hooked-tensor-written",
                "An in-place op writes the hooked module's input or output.",
                "out = out + shortcut  # every in-place op on the hooked module's input or "
                "output out of place (nn.ReLU() for nn.ReLU(inplace=True), x = x.clamp(max=5) "
                "for x.clamp_(max=5) under no_grad), or hook the enclosing module",
                "out-of-place-rewrite",
            ),
        ),
    ),
    ErrorKind(
        "mark-dirty",
        "A custom Function marked an input dirty but did not return it",
        "ctx.mark_dirty(x) tells autograd that forward modified x in place; autograd then "
        "needs x itself among the outputs to give it its new history, and, when x is a view, "
        "that x be the only output.",
        (
            Wording(
                "1.0 to 2.13",
                r"Some elements marked as dirty during the forward method were not returned as "
                r"output",
                "Some elements marked as dirty during the forward method were not returned as "
                "output. The inputs that are modified inplace must all be outputs of the "
                "Function.",
            ),
            Wording(
                "1.5 to 2.13: a view, marked dirty, and more than one output",
                r"If your Function modifies inplace an input that is a view of another Tensor, "
                r"your Function cannot return more than one Tensor",
                "If your Function modifies inplace an input that is a view of another Tensor, "
                "your Function cannot return more than one Tensor. This is not supported by the "
                "current autograd engine. You should either make sure the input is not a view "
                "(using .clone() for example) or make your Function only return one Tensor "
                "(potentially splitting it into two Functions: one doing the inplace that returns "
                "a single Tensor and a second one that does the other operations). You can ask "
                "on the forum https://discuss.pytorch.org/ if you need help to do this change.",
            ),
        ),
        (
            Cause(
                "dirty-not-returned",
                "The Function's forward returns something else than the tensor it marked dirty.",
                "return x  # forward returns the tensor it modified and marked dirty",
                "out-of-place-rewrite",
                when="were not returned as output",
            ),
            Cause(
                "dirty-view-many-outputs",
                "The Function marks dirty an input that is a view, and returns more than one "
                "tensor.",
                "F.apply(x.clone())  # give it a copy of the view, which is no view",
                "clone-before-write",
                when="cannot return more than one Tensor",
            ),
        ),
    ),
    ErrorKind(
        "inference-tensor",
        "Inference tensors",
        "The tensor was made under torch.inference_mode(), which gives it no version "
        "counter: outside inference_mode an in-place op on it or on a view of it raises, even "
        "under torch.no_grad(). What writes it, unchecked: apply_, map_ and map2_ (a Python "
        "function over the elements) and the aliases autograd does not track (an in-place op "
        "on .data or .detach(), .numpy(), the storage). Nor can a view taken "
        "there be written by a write autograd would record: with gradients on, into a tensor "
        "or with a value that requires grad.",
        (
            Wording(
                "1.9 to 2.13",
                r"Inplace update to inference tensor outside InferenceMode",
                "Inplace update to inference tensor outside InferenceMode is not allowed.You can "
                "make a clone to get a normal tensor before doing inplace update.See "
                "https://github.com/pytorch/rfcs/pull/17 for more details.",
                threads=5,
            ),
            Wording(
                "1.9 to 2.13: a view taken in inference mode",
                r"A view was created in inference mode and",
                "A view was created in inference mode and is being modified inplace in normal "
                f"mode. {_INFERENCE_TAIL}",
                base_form=True,
            ),
            Wording(
                "1.9 to 2.13: a view of that view, written (w[0] = 5.0)",
                r"is a view of a view which was created in inference mode and",
                "Output 0 of Select is a view of a view which was created in inference mode and "
                f"is being modified inplace in normal mode. {_INFERENCE_TAIL}",
                base_form=True,
            ),
            Wording(
                "2.13 (live); some earlier releases end it with a shorter tail (a form here): an "
                "op that autograd records saved an inference tensor",
                r"Inference tensors cannot be saved for backward",
                "Inference tensors cannot be saved for backward. Please do not use Tensors "
                "created in inference mode in computation tracked by autograd. To work around "
                "this, you can make a clone to get a normal tensor and use it in autograd, or use "
                "`torch.no_grad()` instead of `torch.inference_mode()`.",
                # the earlier tail, as torch's source printed it (csrc/autograd/saved_variable.cpp)
                forms=(
                    (
                        "Inference tensors cannot be saved for backward. To work around you can "
                        "make a clone to get a normal tensor and use it in autograd."
                    ),
                ),
            ),
            Wording(
                "2.13 (live; https://github.com/k2-fsa/k2/issues/1210 shows it in 2023): "
                "._version read on an inference tensor",
                r"Inference tensors do not track version counter",
                "Inference tensors do not track version counter.",
            ),
        ),
        (
            Cause(
                "inference-tensor-written",
                "The tensor itself was made under inference_mode.",
                "t = t.clone()  # outside inference_mode, then write into the clone",
                "clone-before-write",
                when="Inplace update to inference tensor",
            ),
            Cause(
                "inference-view-written",
                "The view was taken under inference_mode, of a tensor made outside it.",
                "v = t.view(-1)  # take the view outside inference_mode, then write into it",
                "out-of-place-rewrite",
                # not "Tensors created in inference mode in computation tracked by autograd"
                when="view (?:of a view )?which was created in inference mode|A view was created "
                "in inference mode",
            ),
            Cause(
                "inference-tensor-saved",
                "An op that autograd records saved a tensor made under inference_mode: a cache "
                "or a buffer computed in an evaluation pass, or the weights of a module built "
                "there, then used in training.",
                "c = c.clone()  # outside inference_mode, before the op that saves it; or make "
                "it under torch.no_grad() instead",
                "clone-before-write",
                when="cannot be saved for backward",
            ),
            Cause(
                "inference-version-read",
                "Code read ._version of a tensor made under inference_mode (a library that "
                "checks for in-place writes does).",
                "with torch.no_grad():  # instead of torch.inference_mode() where that tensor is "
                "made",
                "torch-no-grad",
                when="do not track version counter",
            ),
        ),
    ),
    ErrorKind(
        "expanded",
        "In-place operation on an expanded tensor",
        "expand() and broadcasting views repeat one element with stride 0; a write would hit "
        "the same memory several times, so most in-place ops refuse, as does a setitem that "
        "selects the repeated memory (e[:] = 1). These go through, and change every element "
        "that shares the memory they write: fill_, zero_, fill_diagonal_, masked_fill_, "
        "index_fill_, index_put_ (so a setitem through a mask or index tensor), tril_, triu_, "
        "addmv_, baddbmm_, apply_, map_, map2_, and a setitem that selects each location once "
        "(e[0] = 5).",
        (
            Wording(
                "1.4 to 2.13",
                r"more than one element of the written-to tensor refers to a single memory "
                r"location",
                "unsupported operation: more than one element of the written-to tensor refers to "
                "a single memory location. Please clone() the tensor before performing the "
                "operation.",
            ),
        ),
        (
            Cause(
                "expanded-written",
                "The tensor written is an expand() of another, or broadcast from one.",
                "e = x.expand(3, 4).clone()  # or out of place: e = e + 1",
                "clone-before-write",
            ),
        ),
    ),
    ErrorKind(
        "input-overlap",
        "An in-place op whose input overlaps the tensor it writes",
        "The source and the destination share memory (x[1:].copy_(x[:-1]) reads elements it "
        "has already written), so the result would depend on the order of the copy.",
        (
            Wording(
                "1.6 to 2.13",
                r"some elements of the input tensor and the written-to tensor refer to a single "
                r"memory location",
                "unsupported operation: some elements of the input tensor and the written-to "
                "tensor refer to a single memory location. Please clone() the tensor before "
                "performing the operation.",
            ),
        ),
        (
            Cause(
                "shifted-copy",
                "The source of the copy is a view of the tensor it writes.",
                "x = torch.cat([x[:1], x[:-1]])  # out of place, or x[1:] = x[:-1].clone()",
                "clone-before-write",
            ),
        ),
    ),
    ErrorKind(
        "vmap",
        "In-place operation under vmap",
        "Under torch.func.vmap the tensor written to has no batch dimension but the value "
        "has one, so the per-sample results do not fit (the message names inplace arithmetic, "
        "index_put_ for x[tensor_index] = value, or the op, such as aten::clamp_).",
        (
            Wording(
                "functorch 0.1 to torch 2.13",
                r"vmap: [\w:. ]{1,200}\(self, \*extra_args\) is not possible because there exists "
                r"a Tensor",
                "vmap: inplace arithmetic(self, *extra_args) "
                + _VMAP_TAIL.format(op="inplace arithmetic"),
                threads=2,
            ),
        ),
        (
            Cause(
                "unbatched-target",
                "The function writes a batched value into a tensor it made itself (torch.zeros "
                "inside the function has no batch dimension).",
                'out = ir.RECIPES["where"](x, index, value)  # out of place: gets the batch '
                "dimension (for an op: the op out of place, x.clamp(min=low) for "
                "x.clamp_(min=low))",
                "out-of-place-rewrite",
            ),
        ),
    ),
    ErrorKind(
        "output-shape",
        "An in-place result that does not fit the tensor",
        "An in-place op must keep the shape of the tensor written (out= resizes it instead, "
        "with a warning); here the other operand broadcasts to a bigger shape (under vmap, "
        "add_ says so when it is batched and the target is not).",
        (
            Wording(
                "1.0 to 2.13",
                r"output with shape \[[0-9, ]{0,200}\] doesn't match the broadcast shape",
                "output with shape [3] doesn't match the broadcast shape [2, 3]",
            ),
        ),
        (
            Cause(
                "broadcast-bigger",
                "The other operand has more dimensions or larger sizes than the tensor written.",
                "x = x + y  # out of place: the result takes the broadcast shape",
                "out-of-place-rewrite",
            ),
        ),
    ),
    ErrorKind(
        "out-argument",
        "out= with tensors that require grad",
        "Most functions called with out= (add, matmul, cat, sum, ...) write into a given "
        "tensor without recording a gradient: with gradients on, they refuse an argument "
        "that requires grad (a few, such as torch.linalg.norm, record one).",
        (
            Wording(
                "1.0 to 2.13",
                r"functions with out=\.\.\. arguments don't support automatic differentiation",
                "add(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad.",
            ),
        ),
        (
            Cause(
                "out-with-grad",
                "A function is called with out= while an argument requires grad.",
                "y = torch.add(a, b)  # drop out=",
                "out-of-place-rewrite",
            ),
        ),
    ),
    ErrorKind(
        "leaky-relu",
        "In-place leaky_relu or elu with a negative slope",
        "leaky_relu_ and elu_ compute their gradient from their output, which cannot tell the "
        "sign of the input when the slope is negative.",
        (
            Wording(
                "1.4 to 2.13",
                r"In-place leakyReLu backward calculation is triggered with a negative slope",
                "In-place leakyReLu backward calculation is triggered with a negative slope "
                "which is not supported. This is caused by calling in-place forward function "
                "with a negative slope, please call out-of-place version instead. File an issue "
                "at https://github.com/pytorch/pytorch if you do require supporting in-place "
                "leakRelu backward calculation with negative slope",
            ),
            Wording(
                "1.4 to 2.13: elu",
                r"In-place elu backward calculation is triggered with a negative slope",
                "In-place elu backward calculation is triggered with a negative slope which is "
                "not supported. This is caused by calling in-place forward function with a "
                "negative slope, please call out-of-place version instead.",
            ),
        ),
        (
            Cause(
                "negative-slope-inplace",
                "The activation runs in place with a negative slope.",
                "y = torch.nn.functional.leaky_relu(x, -0.1)  # inplace=False",
                "out-of-place-rewrite",
            ),
        ),
    ),
    ErrorKind(
        "resize",
        "Resizing a tensor that requires grad",
        "resize_ changes a tensor's shape in place, which autograd cannot record: it refuses a "
        "tensor that requires grad, under torch.no_grad() too.",
        (
            Wording(
                "0.4 to 2.13",
                r"cannot resize variables that require grad",
                "cannot resize variables that require grad",
                threads=2,
            ),
            Wording(
                "1.11 to 2.13: a tensor with a forward-mode gradient",
                r"cannot resize variables that has a forward grad",
                "cannot resize variables that has a forward grad",
            ),
        ),
        (
            Cause(
                "resize-for-shape",
                "The code resizes to change the shape of values it keeps.",
                "y = x.reshape(2, 2)  # or x.view(...): a new shape for the same elements",
                "out-of-place-rewrite",
            ),
        ),
    ),
    ErrorKind(
        "detach-view",
        "Detaching a view in place",
        "detach_() would cut a view from the history it shares with its base, which autograd "
        "cannot do in place.",
        (
            Wording(
                "1.8 to 2.13",
                r"Can't detach views in-place\. Use detach\(\) instead",
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
                "called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.",
                threads=4,
            ),
        ),
        (
            Cause(
                "own-detach",
                "Your code calls detach_() on a view (a slice, a transpose, a piece of split).",
                "v = v.detach()  # a new tensor without history, instead of v.detach_()",
                "out-of-place-rewrite",
            ),
        ),
    ),
    ErrorKind(
        "captured-mutation",
        "An in-place write into a captured tensor under a grad transform",
        "Under torch.func.grad, vjp or jvp, the function wrote in place into a tensor it "
        "captured from outside (a global, a closure's tensor, a module's buffer), not one it "
        "made or computed itself; the transform cannot track that write.",
        (
            Wording(
                "functorch 0.1 to torch 2.13",
                r"During a grad \(vjp, jvp, grad, etc\) transform, the function provided attempted "
                r"to call in-place operation \([\w:.]{1,200}\) that would mutate a captured Tensor",
                "During a grad (vjp, jvp, grad, etc) transform, the function provided attempted to "
                "call in-place operation (aten::add_.Tensor) that would mutate a captured Tensor. "
                "This is not supported; please rewrite the function being transformed to "
                "explicitly accept the mutated Tensor(s) as inputs.",
                threads=2,
            ),
        ),
        (
            Cause(
                "ddp-broadcast",
                "Under DistributedDataParallel: the threads that report this message with "
                "aten::copy_ found DDP's buffer broadcast at each forward, and fixed it with "
                "broadcast_buffers=False.",
                "model = DistributedDataParallel(model, broadcast_buffers=False)  # no buffer "
                "broadcast at each forward (torch 2.13 deprecates it for forward_sync_buffers)",
                "broadcast-buffers-false",
                when=r"\(aten::copy_\)",
            ),
            Cause(
                "captured-written",
                "The function writes into a tensor from outside it.",
                "out = captured + x  # out of place: a new tensor, the captured one unchanged",
                "out-of-place-rewrite",
            ),
            Cause(
                "batch-norm-buffers",
                "A BatchNorm in training mode updates its running statistics (its buffers) "
                "in place.",
                "torch.func.replace_all_batch_norm_modules_(model)  # BatchNorm without running "
                "statistics, or model.eval()",
                "other",
            ),
        ),
    ),
)
