"""A caption above a booktabs-style table's top rule, or a source note under its bottom rule,
cut off the table's box before the structure model reads the crop (models.prose_rules)."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from models.prose_rules import cut_prose_at_rules

DPI = 200
MARGINS = (8.0, 8.0)
LEFT, RIGHT = 100, 1100
TOP_RULE, MID_RULE, BOTTOM_RULE = 200, 250, 420


def _page(caption: bool = True, note: bool = True, header_above: bool = False) -> Image.Image:
    """A table from LEFT to RIGHT with a rule over its header, one under it and one under its last
    row; its caption (a title and a long sentence) above and a source line below."""
    im = Image.new("L", (1200, 560), 255)
    d = ImageDraw.Draw(im)
    font = ImageFont.load_default(size=24)
    if caption:
        d.text((420, 100), "Table 2: Financial Literacy", fill=0, font=font)
        d.text(
            (LEFT, 135),
            "This table contains the frequency and the share of respondents who answered",
            fill=0,
            font=font,
        )
    for y in (TOP_RULE, MID_RULE, BOTTOM_RULE):
        d.line([(LEFT, y), (RIGHT, y)], fill=0, width=2)
    labels = ("Answers", "Freq.", "Percent", "Cum.")
    xs = (LEFT + 10, 450, 700, 950)
    head_y = 155 if header_above else 215
    for x, label in zip(xs, labels):
        d.text((x, head_y), label, fill=0, font=font)
    for r, row in enumerate((("0", "138", "6.9", "6.9"), ("1", "178", "8.8", "15.7"), ("2", "626", "31.1", "46.8"))):
        for x, text in zip(xs, row):
            d.text((x, 270 + 45 * r), text, fill=0, font=font)
    if note:
        d.text((LEFT, 440), "Source: SAVE 2007, data weighted by sample weights, N = 2012", fill=0, font=font)
    return im


def test_a_caption_over_the_top_rule_and_a_note_under_the_bottom_rule_are_cut_off():
    page = _page()
    box = (float(LEFT), 90.0, float(RIGHT), 480.0)  # the detector took in caption and note
    x0, y0, x1, y1 = cut_prose_at_rules(page, box, DPI, MARGINS)
    assert (x0, x1) == (LEFT, RIGHT)
    # the crop (8 px past the box) now starts on the blank paper over the top rule, under the
    # caption's last line, and ends on the blank paper under the bottom rule
    top, bottom = round(y0 - MARGINS[0]), round(y1 + MARGINS[1])  # crop rows [top, bottom)
    lines = (np.asarray(page)[:, LEFT:RIGHT] < 160).sum(axis=1) >= 2  # rows holding a line's ink
    assert 150 < top < TOP_RULE and not lines[top : TOP_RULE - 1].any() and lines[top - 3 : top].any()
    assert BOTTOM_RULE < bottom < 480 and not lines[BOTTOM_RULE + 2 : bottom].any() and lines[bottom : bottom + 3].any()


def test_a_header_over_the_first_rule_is_the_tables_own():
    # no rule over the header: the first rule is under it, and the labels above it stand apart
    page = _page(caption=False, note=False, header_above=True)
    box = (float(LEFT), 140.0, float(RIGHT), 430.0)
    assert cut_prose_at_rules(page, box, DPI, MARGINS) == box


def test_a_box_without_prose_past_its_rules_is_left_as_it_is():
    page = _page(caption=False, note=False)
    box = (float(LEFT), 190.0, float(RIGHT), 430.0)
    assert cut_prose_at_rules(page, box, DPI, MARGINS) == box


def test_a_header_band_over_the_rule_under_it_is_no_prose():
    # eu-017 p2 on the noise scan: white labels on a dark band, a thin rule under it; the
    # band's rows are long runs of ink, its letters breaking them into pieces shorter than a rule
    im = Image.new("L", (1200, 560), 255)
    d = ImageDraw.Draw(im)
    font = ImageFont.load_default(size=24)
    d.rectangle([LEFT, 150, RIGHT, 196], fill=60)
    for x, label in zip((LEFT + 10, 450, 700, 950), ("Country", "Domestic (%)", "Imported (%)", "Total (n)")):
        d.text((x, 160), label, fill=255, font=font)
    for y in (TOP_RULE, BOTTOM_RULE):
        d.line([(LEFT, y), (RIGHT, y)], fill=0, width=2)
    for r in range(4):
        d.text((LEFT + 10, 215 + 45 * r), f"Country {r}   12.{r}   3.{r}   4,21{r}", fill=0, font=font)
    pixels = np.asarray(im).copy()  # sensor noise: light grains break the band's runs of ink
    grain = np.random.default_rng(0).random((47, RIGHT - LEFT + 1)) < 0.15
    pixels[150:197, LEFT : RIGHT + 1][grain] = 230
    box = (float(LEFT), 140.0, float(RIGHT), 430.0)
    assert cut_prose_at_rules(Image.fromarray(pixels), box, DPI, MARGINS) == box


def test_ink_run_together_over_many_rows_is_no_line_of_prose():
    # eu-019 p3 on the noise scan: grain left no blank row between the header band and the rows
    # under it, and the whole lot read as one band of ink over the rule under it
    pixels = np.asarray(_page(note=False)).copy()
    grain = np.random.default_rng(1).random((110, RIGHT - LEFT)) < 0.004
    grain[:, ::97] = True  # a grain or two on every row: no blank row left
    pixels[88:198, LEFT:RIGHT][grain] = 0
    box = (float(LEFT), 90.0, float(RIGHT), 430.0)
    assert cut_prose_at_rules(Image.fromarray(pixels), box, DPI, MARGINS) == box


def _caption_page(last_line_y: int, last_line: str = "the question and their mean loss.") -> Image.Image:
    """A table under a two-line caption: a full-width line, then a short last line at
    `last_line_y` over the top rule (eu-026 p4's "and the average fraction of wealth lost are
    reported.")."""
    page = _page(caption=False)
    d = ImageDraw.Draw(page)
    font = ImageFont.load_default(size=24)
    first = "This table contains the frequency and the share of respondents who answered"
    d.text((LEFT, 128), first, fill=0, font=font)
    d.text((LEFT, last_line_y), last_line, fill=0, font=font)
    return page


def test_a_caption_line_the_crop_cuts_in_half_counts_as_wide_and_the_short_line_under_it_is_cut_off():
    page = _caption_page(160)
    box = (float(LEFT), 153.0, float(RIGHT), 480.0)  # the crop (8 px over it) cuts the first line in half
    top = round(cut_prose_at_rules(page, box, DPI, MARGINS)[1] - MARGINS[0])
    lines = (np.asarray(page)[:, LEFT:RIGHT] < 160).sum(axis=1) >= 2
    assert 180 < top < TOP_RULE and not lines[top : TOP_RULE - 1].any()


def test_a_caption_line_on_the_rule_cut_short_by_its_fringe_keeps_its_word_spaces():
    # eu-026 p4's photocopy: the caption's last line sits on the top rule, and the strip over
    # the rule (its ragged fringe left out) holds only the top of its letters
    page = _caption_page(177, "the  question  and  their  mean  loss.")
    box = (float(LEFT), 120.0, float(RIGHT), 480.0)
    top = round(cut_prose_at_rules(page, box, DPI, MARGINS)[1] - MARGINS[0])
    assert 185 < top < TOP_RULE


def _paragraph_page() -> Image.Image:
    """The table with its source line, then a section heading and a paragraph under it, its lines
    set solid (no blank row between one line's descenders and the next one's ascenders)."""
    page = _page(caption=False)
    im = Image.new("L", (1200, 900), 255)
    im.paste(page, (0, 0))
    d = ImageDraw.Draw(im)
    font = ImageFont.load_default(size=24)
    d.text((LEFT, 520), "Fresh bovine meat", fill=0, font=font)
    lines = (
        "In 2007, only Italy out of the four reporting states found samples of fresh",
        "bovine meat positive for the bacterium at retail (2.4%). Data from 2007 agree",
        "with observations from the previous years, showing low occurrences at retail.",
    )
    for i, line in enumerate(lines):
        d.text((LEFT, 580 + 21 * i), line, fill=0, font=font)
    return im


def test_a_heading_and_a_paragraph_set_solid_under_the_table_are_cut_off_though_half_the_box():
    # eu-018 p1 on a photocopy: the detector's box took in the notes, a heading and two
    # paragraphs under the table, more than half its height
    page = _paragraph_page()
    ink = (np.asarray(page)[:, LEFT:RIGHT] < 160).sum(axis=1)
    assert not (ink[586:651] == 0).any()  # the paragraph's lines leave no blank row between them
    box = (float(LEFT), 190.0, float(RIGHT), 660.0)
    x0, y0, x1, y1 = cut_prose_at_rules(page, box, DPI, MARGINS)
    assert (x0, y0, x1) == box[:3]
    note = BOTTOM_RULE + 3 + int(np.flatnonzero(ink[BOTTOM_RULE + 3 :])[0])  # the note's first inked row
    assert BOTTOM_RULE < y1 + MARGINS[1] <= note  # the crop ends under the bottom rule, over the note


def test_one_line_of_prose_does_not_cut_more_than_its_share_of_the_box():
    # the source line alone under the rule, the box running on over blank paper: one wide line
    # is no paragraph, and more than MAX_CUT_SHARE of the box stays
    page = Image.new("L", (1200, 900), 255)
    page.paste(_page(caption=False), (0, 0))
    box = (float(LEFT), 190.0, float(RIGHT), 700.0)
    assert cut_prose_at_rules(page, box, DPI, MARGINS) == box
