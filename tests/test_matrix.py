"""The compatibility matrix: every cell the docs page prints is asserted here.

The expected statuses are what torch 2.13 does, found by running the checks;
a torch upgrade that changes one fails this test, and the page with it.
"""

from __future__ import annotations

import json

import pytest
import torch

from inplace_recipes.matrix import COLUMNS, CompatibilityMatrix, compatibility_matrix, main

W, E, X = "works", "error", "wrong"
#: Columns in COLUMNS order, without "cuda" (checked below).
EXPECTED = {
    #                autograd double fgrad vmapx vmapv compile funct f64 c64 bf16 int64
    "inplace":        [E, E, E, E, E, E, E, E, E, E, X],
    "mask":           [W, W, W, W, W, W, W, W, W, W, W],
    "where":          [W, W, W, W, W, W, W, W, W, W, W],
    "clone":          [W, W, W, W, E, W, E, W, W, W, W],
    "index_put":      [W, W, W, W, W, W, W, W, W, W, W],
    "scatter":        [W, W, W, W, W, W, W, W, W, W, W],
    "select_scatter": [W, W, W, W, W, W, W, W, W, W, W],
    "masked_fill":    [W, W, W, W, W, W, W, W, W, W, W],
    "at[].set":       [W, W, W, W, W, W, W, W, W, W, W],
}  # fmt: skip

DETAILS = {
    ("inplace", "autograd"): "a view of a leaf Variable that requires grad",
    ("inplace", "int64"): "changed its input x",
    ("clone", "vmap value"): "vmap: inplace arithmetic(self, *extra_args) is not possible",
    ("clone", "functionalize"): "derivative for aten::copy is not implemented",
}


@pytest.fixture(scope="session")
def matrix() -> CompatibilityMatrix:
    return compatibility_matrix()


@pytest.mark.slow
def test_shape(matrix: CompatibilityMatrix) -> None:
    assert matrix.rows == list(EXPECTED)
    assert matrix.cols == list(COLUMNS)
    assert matrix.seconds < 120


@pytest.mark.slow
@pytest.mark.parametrize("row", list(EXPECTED))
def test_every_cell_is_what_torch_does(matrix: CompatibilityMatrix, row: str) -> None:
    got = [matrix[row, c].status for c in COLUMNS if c != "cuda"]
    assert got == EXPECTED[row], {c: str(matrix[row, c]) for c in COLUMNS}
    cuda = matrix[row, "cuda"]
    if torch.cuda.is_available():
        assert cuda.status == (E if row == "inplace" else W), cuda
    else:
        assert (cuda.status, cuda.detail) == ("n/a", "no CUDA")


@pytest.mark.slow
@pytest.mark.parametrize(("cell", "text"), list(DETAILS.items()))
def test_details_quote_torch(matrix: CompatibilityMatrix, cell: tuple[str, str], text: str) -> None:
    assert text in matrix[cell].detail


@pytest.mark.slow
def test_renderings_agree(matrix: CompatibilityMatrix) -> None:
    records = matrix.to_records()
    assert len(records) == len(EXPECTED) * len(COLUMNS)
    assert {"row": "clone", "column": "vmap value", "status": "error"}.items() <= records[
        list(EXPECTED).index("clone") * len(COLUMNS) + COLUMNS.index("vmap value")
    ].items()
    text = str(matrix)
    assert "at[].set" in text
    assert "error [1]" in text
    assert "[1] RuntimeError: a view of a leaf Variable" in text
    md = matrix.to_markdown()
    assert md.splitlines()[0].startswith("|  | autograd |")
    assert json.loads(matrix.to_json())["cells"] == records
    page = matrix._repr_html_()  # what the docs page shows
    assert page.count("<tr>") == 1 + len(EXPECTED)
    assert page.count("<td ") == len(EXPECTED) * len(COLUMNS)
    assert '<td class="error">error [1]</td>' in page


def test_a_failing_check_is_reported_not_raised() -> None:
    def broken(x: torch.Tensor, index: object, value: object) -> torch.Tensor:
        return x * 2  # runs, but does not write the value

    def raising(x: torch.Tensor, index: object, value: object) -> torch.Tensor:
        raise ValueError("boom\nsecond line")

    m = compatibility_matrix({"broken": broken, "raising": raising}, columns=["autograd", "vmap x"])
    assert m["broken", "autograd"].status == "wrong"
    assert m["broken", "vmap x"].status == "wrong"
    assert str(m["raising", "autograd"]) == "error: ValueError: boom"


def test_unknown_names_raise() -> None:
    with pytest.raises(ValueError, match="choose from"):
        compatibility_matrix(["nope"])
    with pytest.raises(ValueError, match="choose from"):
        compatibility_matrix(["where"], columns=["jit"])


def test_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--json", "--rows", "where", "--columns", "autograd", "int64"]) == 0
    cells = json.loads(capsys.readouterr().out)["cells"]
    assert [(c["row"], c["column"], c["status"]) for c in cells] == [
        ("where", "autograd", "works"),
        ("where", "int64", "works"),
    ]
    assert main(["--markdown", "--rows", "clone", "--columns", "vmap value"]) == 0
    assert "| clone | error [1] |" in capsys.readouterr().out
