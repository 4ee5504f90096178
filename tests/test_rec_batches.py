"""The recogniser's batching plan (models.ppocr.recognise.batch_plan): pure, no model."""

from __future__ import annotations

from models.ppocr.recognise import HEIGHT, batch_plan


def test_lines_are_batched_narrowest_first_and_cut_at_the_batch_size() -> None:
    widths = [100, 60, 80, 70, 90]
    plan = batch_plan(widths, batch_size=2, max_pad=10.0)
    assert plan == [[1, 3], [2, 4], [0]]
    assert sorted(i for b in plan for i in b) == list(range(len(widths)))


def test_a_much_wider_line_starts_its_own_call_instead_of_padding_the_others() -> None:
    widths = [50, 60, 400, 420]
    plan = batch_plan(widths, batch_size=8, max_pad=1.5)
    assert plan == [[0, 1], [2, 3]]


def test_lines_narrower_than_the_line_height_share_a_call() -> None:
    # below HEIGHT the limit is max_pad * HEIGHT, so tiny crops do not each cost a call
    widths = [8, 16, 40, int(1.5 * HEIGHT)]
    assert batch_plan(widths, batch_size=8, max_pad=1.5) == [[0, 1, 2, 3]]


def test_no_lines_no_calls() -> None:
    assert batch_plan([], batch_size=8, max_pad=1.5) == []
