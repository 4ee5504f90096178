"""Unsure non-words read again against the word list (models.ppocr.lexicon): the CTC frames
decide, the list only says which readings are words. Pure numpy on made-up frame
probabilities, no weights."""

from __future__ import annotations

import numpy as np
import pytest

from models.ppocr.lexicon import LexiconConfig, _align, beam_readings, correct_words, english_words
from models.ppocr.recognise import BLANK, Glyph, LineRead

CHARS = ["", *"TotailnOAILusrMed ()0123456789"]  # class 0 is the CTC blank
CLASS = {ch: i for i, ch in enumerate(CHARS) if ch}


def _frames(spec: list[dict[str, float]]) -> np.ndarray:
    """One frame per dict: the given classes' probabilities, the rest on the blank."""
    probs = np.zeros((len(spec), len(CHARS)))
    for t, frame in enumerate(spec):
        for ch, p in frame.items():
            probs[t, CLASS[ch]] = p
        probs[t, BLANK] = 1.0 - sum(frame.values())
    return probs


def _greedy(probs: np.ndarray) -> tuple[Glyph, ...]:
    best, glyphs, t = probs.argmax(axis=1), [], 0
    while t < len(best):
        first = t
        while t + 1 < len(best) and best[t + 1] == best[t]:
            t += 1
        if best[first] != BLANK:
            glyphs.append(Glyph(CHARS[best[first]], float(probs[first : t + 1].max()), first, t))
        t += 1
    return tuple(glyphs)


def _text(glyphs: tuple[Glyph, ...]) -> str:
    return "".join(g.char for g in glyphs)


def _totai(second: float) -> np.ndarray:
    """`Totai (n)`, its last letter an `i` with `l` at `second` beside it, frames between letters blank."""
    spec: list[dict[str, float]] = []
    for ch in "Tota":
        spec += [{ch: 0.99}, {}]
    spec += [{"i": 0.9 - second, "l": second}, {}, {" ": 0.99}, {"(": 0.99}, {"n": 0.99}, {")": 0.99}]
    return _frames(spec)


def test_the_word_list_is_the_english_dictionary_lower_case() -> None:
    listed = english_words()
    assert len(listed.words) > 80_000 and 20_000 < len(listed.common) < 25_000 and listed.common < listed.words
    assert {"total", "finland", "domestic", "imported"} <= listed.words and "totai" not in listed.words
    assert "mean" in listed.common and "stria" in listed.words - listed.common


def test_beam_probabilities_sum_over_alignments() -> None:
    probs = _frames([{"T": 0.6}, {"T": 0.3}])  # blank 0.4, then 0.7
    readings = beam_readings(probs, top=2, beam=8)
    assert readings[(CLASS["T"],)] == pytest.approx(0.6 * 0.3 + 0.6 * 0.7 + 0.4 * 0.3)
    assert readings[()] == pytest.approx(0.4 * 0.7)


def test_a_close_second_letter_that_makes_a_word_replaces_the_unsure_one() -> None:
    probs = _totai(second=0.3)
    glyphs = _greedy(probs)
    assert _text(glyphs) == "Totai (n)"
    fixed = correct_words(glyphs, probs, CHARS, english_words(), LexiconConfig())
    assert _text(fixed) == "Total (n)"
    # the new letter sits on the frame it was read on, with the probability it had there
    assert (fixed[4].first, fixed[4].last, fixed[4].prob) == (8, 8, pytest.approx(0.3))
    assert fixed[5:] == glyphs[5:]


def test_a_word_the_frames_barely_allow_is_not_taken() -> None:
    """`Total` at under 1/200 of `Totai`'s probability: the model read something else."""
    probs = _totai(second=0.004)
    glyphs = _greedy(probs)
    assert _text(correct_words(glyphs, probs, CHARS, english_words(), LexiconConfig())) == "Totai (n)"


def test_a_surely_read_non_word_and_short_or_capital_words_are_kept() -> None:
    words = english_words()
    sure = _frames([{ch: 0.995} for ch in "Tolta"])  # every letter at 0.995: a name, kept
    assert _text(correct_words(_greedy(sure), sure, CHARS, words, LexiconConfig())) == "Tolta"
    short = _frames([{"T": 0.99}, {"o": 0.6, "a": 0.3}, {"l": 0.99}])  # `Tol`: shorter than four letters
    assert _text(correct_words(_greedy(short), short, CHARS, words, LexiconConfig())) == "Tol"
    capitals = _frames([{"T": 0.99}, {"O": 0.99}, {"T": 0.99}, {"A": 0.99}, {"I": 0.6, "L": 0.3}])
    assert _text(correct_words(_greedy(capitals), capitals, CHARS, words, LexiconConfig())) == "TOTAI"


def test_digits_are_never_read_against_the_list() -> None:
    probs = _frames([{"1": 0.6, "l": 0.35}, {}, {"0": 0.99}, {}, {"0": 0.99}])
    glyphs = _greedy(probs)
    assert _text(correct_words(glyphs, probs, CHARS, english_words(), LexiconConfig())) == "100"


def test_the_alignment_gives_an_inserted_letter_its_own_frames() -> None:
    logp = np.log(np.maximum(_frames([{"T": 0.9}, {"o": 0.5}, {"t": 0.9}, {}, {"a": 0.9}]), 1e-30))
    spans = _align(logp, [CLASS[c] for c in "Tota"])
    assert spans == [(0, 0), (1, 1), (2, 2), (4, 4)]


def test_a_corrected_line_keeps_the_greedy_score_so_the_model_decides_whether_it_stays() -> None:
    read = LineRead((Glyph("T", 0.9, 0, 0), Glyph("l", 0.1, 1, 1)), 8.0, read_score=0.7)
    assert read.score == 0.7
    assert LineRead(read.glyphs, 8.0).score == pytest.approx(0.5)


def test_a_letter_the_model_read_is_dropped_only_for_a_common_word() -> None:
    """`ustria` (its `A` split off as a word of its own) is not `stria`, a rare word of the
    list, however unsure the `u`; `Meana` is `Mean`."""
    probs = _frames([{"u": 0.55}, {}, {"s": 0.99}, {"t": 0.99}, {"r": 0.99}, {"i": 0.99}, {"a": 0.99}])
    glyphs = _greedy(probs)
    assert _text(glyphs) == "ustria"
    assert _text(correct_words(glyphs, probs, CHARS, english_words(), LexiconConfig())) == "ustria"
    probs = _frames([{"M": 0.99}, {"e": 0.99}, {"a": 0.99}, {"n": 0.99}, {}, {"a": 0.55}])
    glyphs = _greedy(probs)
    assert _text(glyphs) == "Meana"
    assert _text(correct_words(glyphs, probs, CHARS, english_words(), LexiconConfig())) == "Mean"


def _glyphs(text: str) -> tuple[Glyph, ...]:
    """One surely read glyph per character, two frames apart."""
    return tuple(Glyph(ch, 0.99, 2 * k, 2 * k) for k, ch in enumerate(text))


def test_a_capital_o_read_as_a_lone_zero_before_its_word_is_put_back() -> None:
    """Unevenly lit scan, dev eu-023 p3: the header label "Often" read as "0 ften", whose figure
    made the header row read as values. Only where the letters after the zero are no word and
    an O before them makes one; a zero before a unit, a word or a figure stays."""
    words = english_words()
    probs = np.zeros((40, len(CHARS)))
    fixed = correct_words(_glyphs("Sometimes 0 ften"), probs, CHARS, words, LexiconConfig())
    assert _text(fixed) == "Sometimes Often"
    for kept in ("0 kg", "0 pen", "0 ften3", "10 ften", "0 Ften"):
        assert _text(correct_words(_glyphs(kept), probs, CHARS, words, LexiconConfig())) == kept
