"""Every checked claim holds on the pinned torch, is used by a page, and fails loudly."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from inplace_recipes import claims
from inplace_recipes.claims import CLAIMS, ClaimBroken, claim, expect, verify, verify_all

ROOT = Path(__file__).resolve().parents[1]
PAGES = [
    *sorted((ROOT / "recipes").rglob("*.py")),
    *sorted((ROOT / "docs").rglob("*.md")),
    *sorted((ROOT / "docs").glob("*.py")),
]


def _page_text() -> str:
    return "\n".join(page.read_text() for page in PAGES)


@pytest.mark.parametrize("name", list(CLAIMS))
def test_every_claim_holds_on_the_pinned_torch(name: str) -> None:
    observed = verify(name)
    assert isinstance(observed, str)
    assert observed


@pytest.mark.parametrize("name", list(CLAIMS))
def test_every_claim_is_verified_by_a_page(name: str) -> None:
    """A claim no page runs is a sentence no page makes, or a page that stopped checking."""
    used = re.search(rf"verify\(\s*[\"']{re.escape(name)}[\"']", _page_text())
    assert used, f"no page in recipes/ or docs/ calls verify({name!r})"


def test_every_claim_says_what_it_claims() -> None:
    for found in CLAIMS.values():
        assert 20 < len(found.statement) < 250, found.name
        assert not found.statement.endswith("."), "a sentence the error message quotes"
        if found.upstream:
            assert found.upstream.startswith("https://github.com/pytorch/pytorch/"), found.name


def test_a_broken_claim_raises_naming_the_sentence() -> None:
    name = "test_claims_broken_on_purpose"
    statement = "torch adds one and one to three"

    @claim(name, statement)
    def _broken() -> str:
        got = (torch.tensor(1) + 1).item()
        return expect(got == 3, f"1 + 1 gives {got}")

    try:
        with pytest.raises(ClaimBroken) as info:
            verify(name)
        message = str(info.value)
        assert repr(statement) in message
        assert "1 + 1 gives 2" in message
        assert torch.__version__ in message
        record = next(r for r in verify_all() if r["name"] == name)
        assert record["holds"] is False
        assert "1 + 1 gives 2" in record["observed"]
    finally:
        claims._CLAIMS.pop(name, None)


def test_a_claim_cannot_be_registered_twice() -> None:
    name = next(iter(CLAIMS))
    with pytest.raises(ValueError, match="registered twice"):
        claim(name, "again")(lambda: "")


def test_an_unknown_claim_is_a_key_error() -> None:
    with pytest.raises(KeyError, match="no claim named"):
        verify("no such claim")


def test_verify_all_records_every_claim() -> None:
    records = verify_all()
    assert [r["name"] for r in records] == list(CLAIMS)
    assert all(r["holds"] for r in records), [r for r in records if not r["holds"]]


def test_every_name_a_page_verifies_is_a_claim() -> None:
    """Registered in claims.py, or (not seen by verify_all) by the page that verifies it."""
    text = _page_text()
    named = set(re.findall(r"verify\(\s*[\"']([\w-]+)[\"']", text))
    on_pages = set(re.findall(r"@claim\(\s*[\"']([\w-]+)[\"']", text))
    assert named
    assert named <= set(CLAIMS) | on_pages, named - set(CLAIMS) - on_pages


def test_scatter_reduce_prod_claim_wants_a_zero_tangent(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any wrong tangent used to pass; only the zero tangent the sentence states passes now."""
    real = torch.func.jvp

    def wrong_but_nonzero(*args: object, **kwargs: object) -> tuple[torch.Tensor, torch.Tensor]:
        out, tangent = real(*args, **kwargs)  # type: ignore[arg-type]
        return out, tangent + 5.0

    monkeypatch.setattr(torch.func, "jvp", wrong_but_nonzero)
    with pytest.raises(ClaimBroken):
        verify("scatter_reduce_prod_drops_tangent")


@pytest.mark.parametrize(
    ("name", "method"),
    [
        ("scatter_duplicate_positions_value_grad", "scatter"),
        ("index_put_duplicate_positions_value_grad", "index_put"),
    ],
)
def test_duplicate_claims_call_the_op_they_name(
    monkeypatch: pytest.MonkeyPatch, name: str, method: str
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise RuntimeError(f"{method} was called")

    monkeypatch.setattr(torch.Tensor, method, refuse)
    with pytest.raises(RuntimeError, match=f"{method} was called"):
        verify(name)


def test_mask_blend_count_is_of_masks_not_of_any_same_size_storage() -> None:
    """x has the masks' size too: the count is of tensors holding the masks' values."""
    saved, nbytes = claims._mask_blend_saved(False)
    assert (saved, nbytes) == (1, 4000)
    assert claims._mask_blend_saved(True)[0] == 2
