"""Black-and-white pages (photocopies, faxes) are told from renders and grey scans, and their
crops are softened for the structure model and the OCR (models.page_normalise.soften_binary)."""

from __future__ import annotations

import pytest

from models.page_normalise import is_binary, soften_binary
from worker.devtools.samples import financial_table, make_page
from worker.evaluation.degrade import degrade


@pytest.fixture(scope="module")
def page():
    return make_page([financial_table()], seed=1).image


def test_a_render_is_not_black_and_white_and_its_threshold_is(page) -> None:
    assert not is_binary(page)  # antialiased edges
    copy = page.convert("L").point(lambda v: 0 if v < 150 else 255)
    assert is_binary(copy)
    softened = soften_binary(copy)
    assert not is_binary(softened) and softened.size == copy.size
    assert soften_binary(page) is page  # anything else is left as it is


@pytest.mark.parametrize(
    ("kind", "binary"), [("photocopy", True), ("office", False), ("noise", False), ("jpeg", False)]
)
def test_simulated_scans(page, kind: str, binary: bool) -> None:
    for seed in (0, 1):
        assert is_binary(degrade(page, 200, kind, "moderate", seed).image) is binary
