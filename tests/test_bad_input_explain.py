"""explain() on bad input: an answer or a clear TypeError, never a crash, never slow."""

from __future__ import annotations

import pytest

from inplace_recipes import explain


class _StrRaises(RuntimeError):
    def __str__(self) -> str:
        raise ValueError("broken __str__")


class _StrSubclass(str):
    def __str__(self) -> str:
        raise ValueError("broken __str__ on a str subclass")


class _HugeArgs(RuntimeError):
    pass


@pytest.mark.parametrize(
    "error",
    [
        _StrRaises(),
        _StrRaises("leaf variable has been moved into the graph interior"),
        RuntimeError(),
        RuntimeError(None),
        RuntimeError(b"\xff\xfe bytes"),
        KeyboardInterrupt(),
        "",
        "\n\n\n",
        "\x00" * 10,
        "é" * 1000,
    ],
    ids=repr,
)
def test_unreadable_or_empty_errors_are_not_recognised(error: BaseException | str) -> None:
    result = explain(error)
    assert not result.recognized
    assert str(result).startswith("Not recognised")


def test_a_str_subclass_is_read_as_its_characters() -> None:
    message = _StrSubclass("leaf variable has been moved into the graph interior")
    assert explain(message).slug == "graph-interior"


def test_a_message_inside_a_long_exception_is_found() -> None:
    error = _HugeArgs(
        "x" * 100_000 + " a leaf Variable that requires grad is being used in an "
        "in-place operation."
    )
    assert explain(error).slug == "leaf"


@pytest.mark.parametrize("value", [None, 42, b"leaf variable", ["message"], object()], ids=repr)
def test_anything_else_is_a_type_error_that_says_what_it_takes(value: object) -> None:
    with pytest.raises(TypeError, match=r"explain\(\) takes an exception or its message"):
        explain(value)  # type: ignore[arg-type]


def test_the_version_numbers_of_a_malformed_message_do_not_crash() -> None:
    message = (
        "one of the variables needed for gradient computation has been modified by an "
        "inplace operation: [torch.FloatTensor [3]], which is output 0 of Tanh, is at version "
        + "9" * 25
        + "; expected version 0 instead."
    )
    result = explain(message)
    assert result.slug == "saved-tensor-modified"
    assert "Fix: " in str(result)


def test_the_backward_hook_message_of_older_releases_is_recognised() -> None:
    message = (
        "Output 0 of BackwardHookFunctionBackward is a view and is being modified in place. "
        "This view was created inside a custom Function (or because an input was returned "
        "as-is) and the autograd logic to handle view+inplace would override the custom "
        "backward associated with the custom Function, leading to incorrect gradients."
    )
    assert explain(message).slug == "backward-hook-view"
