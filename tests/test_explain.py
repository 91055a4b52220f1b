"""explain() recognises every error of docs/errors.md, whose examples run live here."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest
import torch

from inplace_recipes import explain
from inplace_recipes.error_reference import ERRORS, error_kind

PAGE = Path(__file__).resolve().parents[1] / "docs" / "errors.md"
ANCHOR = re.compile(r"^\(error-(?P<slug>[a-z0-9-]+)\)=$", re.MULTILINE)
BLOCK = re.compile(r"^```\{doctest\}\n(?P<body>.*?)^```$", re.MULTILINE | re.DOTALL)
# sphinx.ext.doctest's default flags; a block's ":options:" line changes them.
DEFAULT_FLAGS = doctest.ELLIPSIS | doctest.IGNORE_EXCEPTION_DETAIL | doctest.DONT_ACCEPT_TRUE_FOR_1


def sections() -> dict[str, str]:
    """The page's text for each error anchor, by slug."""
    text = PAGE.read_text()
    marks = list(ANCHOR.finditer(text))
    return {
        m["slug"]: text[m.end() : marks[i + 1].start() if i + 1 < len(marks) else len(text)]
        for i, m in enumerate(marks)
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
    parser, globs = doctest.DocTestParser(), {"__name__": "errors_md"}
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
