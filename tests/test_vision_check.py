"""Answer checks: only table markup survives, hostile markup is stripped, what is not a table
fails with a reason, and odd tables are repaired into rectangular grids."""

from __future__ import annotations

import pytest
from vision_fixtures import GOOD

from worker.core.html_parse import html_to_grid
from worker.vision.agreement import agreement
from worker.vision.check import check_answer
from worker.vision.sanitise import sanitise_answer

HOSTILE = (
    '<div style="x"><table class="t" onclick="steal()"><tr><th onmouseover="x()">A<script>alert(1)</script>'
    '</th><td><a href="javascript:alert(2)">link</a><img src=x onerror="alert(3)"></td></tr>'
    '<style>td{color:red}</style><tr><td colspan="2" style="w">&lt;b&gt; &amp; <iframe>bad</iframe>ok</td></tr>'
    "</table></div>"
)


def test_good_table_passes_unchanged_in_structure():
    checked = check_answer(GOOD)
    assert checked.ok and checked.failure is None and checked.repairs == [] and checked.removed == []
    assert checked.grid.shape_signature() == html_to_grid(GOOD).shape_signature()
    assert checked.grid.header_rows == 2


def test_fence_and_prose_are_removed():
    answer = f"Sure! Here is the table you asked for:\n\n```html\n{GOOD}\n```\n\nLet me know if you need more."
    checked = check_answer(answer)
    assert checked.ok
    assert "markdown fence" in checked.removed
    assert any("outside the table" in r for r in checked.removed)
    assert checked.grid.shape_signature() == html_to_grid(GOOD).shape_signature()


def test_hostile_markup_is_stripped():
    checked = check_answer(HOSTILE)
    assert checked.ok
    html = checked.html.lower()
    for bad in (
        "script",
        "alert",
        "onclick",
        "onmouseover",
        "onerror",
        "style",
        "href",
        "<a",
        "<img",
        "iframe",
        "class",
        "javascript",
        "<div",
    ):
        assert bad not in html, bad
    tags = " ".join(checked.removed)
    assert "script" in tags and "iframe" in tags and "onclick" in tags and "href" in tags
    texts = [c.text for c in checked.grid.sorted_cells()]
    assert texts == ["A", "link", "<b> & ok"]  # escaped text stays text; dropped tags keep their words
    assert "&lt;b&gt; &amp; ok" in checked.html


@pytest.mark.parametrize(
    "answer, failure",
    [
        ("I cannot read this image.", "no-table"),
        ("", "no-table"),
        ("a | b\n1 | 2", "no-table"),
        ("<table></table>", "empty-table"),
        ("<table><tr><td> </td><td></td></tr></table>", "empty-table"),
        ("<script><table><tr><td>x</td></tr></table></script>", "no-table"),
    ],
)
def test_no_table_is_a_failure_with_reason(answer, failure):
    checked = check_answer(answer)
    assert not checked.ok and checked.failure == failure and checked.reason
    assert checked.html is None and checked.grid is None


def test_ragged_and_overlapping_tables_are_repaired():
    checked = check_answer(
        "<table><tr><td>a</td><td>b</td><td>c</td></tr><tr><td rowspan=9>d</td></tr><tr><td colspan=5000>e</td>"
    )
    assert checked.ok
    checked.grid.owner_map()  # a partition of the rectangle, or this raises
    repairs = " ".join(checked.repairs)
    assert "colspan=5000 clipped to 100" in repairs and "ran past the table" in repairs
    assert "not closed" in repairs


def test_rows_without_table_element_are_wrapped():
    checked = check_answer("<tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr>")
    assert checked.ok and checked.grid.n_rows == 2 and checked.grid.n_cols == 2
    assert any("without a <table>" in r for r in checked.repairs)


def test_only_the_first_table_is_kept_and_caption_survives():
    answer = (
        "<table><caption>Sales <b>by</b> region</caption><tr><td>1</td></tr></table><table><tr><td>2</td></tr></table>"
    )
    checked = check_answer(answer)
    assert checked.caption == "Sales by region"
    assert checked.html.startswith("<table><caption>Sales by region</caption>")
    assert "further table" in " ".join(checked.removed)
    assert [c.text for c in checked.grid.cells] == ["1"]


def test_long_answers_are_cut():
    checked = check_answer("<table>" + "<tr><td>x</td></tr>" * 1000, max_chars=1000)
    assert checked.ok and any("cut at 1000" in r for r in checked.repairs)


def test_sanitiser_never_emits_unknown_tags():
    out = sanitise_answer('<table><tr><td><svg><script>1</script></svg><b onclick="x">b</b><td/></tr></table>').html
    assert out == "<table><tr><td>b<td></td></tr></table>"


def test_agreement_identical_and_different():
    same = agreement(GOOD, html_to_grid(GOOD), GOOD)
    assert same["teds"] == 1.0 and same["teds_struct"] == 1.0 and same["same_shape"]
    assert same["cell_match"] == 1.0 and same["differences"] == []
    other = "<table><tr><td>Region</td><td>Sales</td></tr><tr><td>North</td><td>10</td></tr></table>"
    diff = agreement(other, html_to_grid(other), GOOD)
    assert 0 <= diff["teds"] < 1 and 0 <= diff["teds_struct"] < 1 and not diff["same_shape"]
    assert diff["n_differences"] > 0
    whats = {d["what"] for d in diff["differences"]}
    assert "missing in vision read" in whats
    none = agreement(other, html_to_grid(other), None)
    assert none["detector_shape"] == [0, 0] and none["teds"] == 0.0


def test_markdown_pipe_table_is_converted():
    answer = (
        "Here it is:\n\n| Region | Sales \\| net |\n|:---|---:|\n| North<br>East | <b>10</b> |\n| South | 3 |\n\nBye"
    )
    checked = check_answer(answer)
    assert checked.ok and checked.grid.header_rows == 1
    assert [c.text for c in checked.grid.sorted_cells()] == ["Region", "Sales | net", "North East", "10", "South", "3"]
    assert any("markdown table converted" in r for r in checked.repairs)
    assert "<b>" not in checked.html and "&lt;" not in checked.html
