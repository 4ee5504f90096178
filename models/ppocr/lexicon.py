"""Words the recogniser was unsure of, read again against a word list.

A photocopied label loses strokes: `Total` reads as `Totai`, `Finland` as `Fintand`, and a
header label misread by one letter in five puts every value below it under a wrong label.
Greedy CTC decoding takes the best character of each frame alone; the frames often still hold
the right letter as a close second. So, for a word of letters that is not in the word list,
the few most probable readings of its frames are found (a CTC prefix beam search over each
frame's most likely classes), and the most probable one that *is* a word replaces it, but only
when the frames themselves give it at least `1 / max_ratio` of the greedy reading's
probability. The model's own evidence decides; the list only says which readings are words.
A reading shorter than the greedy one drops a letter the model did read; it is taken only
when it is one letter shorter and a common word (at least a million occurrences in the list's
counts, 22,129 words): `Meada` is `Mean`, but `ustria`, its `A` split off, is not `stria`, nor
the brand `Prima` the rare `pima`.
A word read with confidence, or one with no near reading in the list (a name, a chemical, a
plural the list lacks), is kept as read. Numbers, acronyms (all capitals) and words shorter
than `min_letters` are never touched. A lone zero before the rest of a word ("0 ften") is the
word's capital O where only the two together are a listed word (`capital_o`).

The word list is the English frequency dictionary that ships in the `symspellpy` wheel
(82,834 words, MIT), read as a plain set: its spelling algorithm is not used.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files

import numpy as np

from models.ppocr.recognise import BLANK, Glyph

WORDS_FILE = "frequency_dictionary_en_82_765.txt"
COMMON_COUNT = 1_000_000  # occurrences in the list's counts that make a word common


@dataclass(frozen=True, slots=True)
class WordList:
    """The words, lower case, and those of them common enough to drop a letter for."""

    words: frozenset[str]
    common: frozenset[str]


@dataclass(frozen=True, slots=True)
class LexiconConfig:
    min_letters: int = 4  # shorter words are too often codes or abbreviations
    top_classes: int = 5  # classes per frame the beam considers
    beam: int = 16  # prefixes kept per frame
    max_ratio: float = 200.0  # a word reading may be this many times less probable than the greedy one
    max_prob: float = 0.98  # a word whose every letter was read at least this surely is kept


@lru_cache(maxsize=1)
def english_words() -> WordList:
    """The English list (one `word count` per line)."""
    words, common = [], []
    with (files("symspellpy") / WORDS_FILE).open(encoding="utf-8") as lines:
        for line in lines:
            word, _, count = line.strip().partition(" ")
            if word:
                words.append(word)
                if int(count or 0) >= COMMON_COUNT:
                    common.append(word)
    return WordList(frozenset(words), frozenset(common))


def beam_readings(probs: np.ndarray, top: int, beam: int) -> dict[tuple[int, ...], float]:
    """The most probable class sequences of `probs` (frames, classes) under CTC, with their
    probabilities summed over alignments (a prefix beam search over each frame's `top` classes)."""
    # prefix -> (probability ending in blank, probability ending in its last class)
    beams: dict[tuple[int, ...], tuple[float, float]] = {(): (1.0, 0.0)}
    for frame in probs:
        classes = [int(c) for c in np.argsort(frame)[::-1][:top]]
        nxt: dict[tuple[int, ...], list[float]] = defaultdict(lambda: [0.0, 0.0])
        for prefix, (pb, pnb) in beams.items():
            total = pb + pnb
            for c in classes:
                p = float(frame[c])
                if c == BLANK:
                    nxt[prefix][0] += total * p
                elif prefix and prefix[-1] == c:
                    nxt[prefix][1] += pnb * p  # the same glyph held
                    nxt[(*prefix, c)][1] += pb * p  # a repeat after a blank
                else:
                    nxt[(*prefix, c)][1] += total * p
        ranked = sorted(nxt.items(), key=lambda kv: kv[1][0] + kv[1][1], reverse=True)[:beam]
        beams = {k: (v[0], v[1]) for k, v in ranked}
    return {k: pb + pnb for k, (pb, pnb) in beams.items()}


def _spans(glyphs: tuple[Glyph, ...]) -> list[tuple[int, int]]:
    """[start, end) glyph index ranges of the runs of letters."""
    out, start = [], None
    for i, g in enumerate((*glyphs, Glyph(" ", 1.0, 0, 0))):
        if g.char.isalpha():
            start = i if start is None else start
        elif start is not None:
            out.append((start, i))
            start = None
    return out


def correct_words(
    glyphs: tuple[Glyph, ...],
    probs: np.ndarray,
    characters: list[str],
    words: WordList,
    config: LexiconConfig,
) -> tuple[Glyph, ...]:
    """`glyphs` (a greedy read of `probs`) with each unsure non-word replaced by the most
    probable word reading of its frames, where one is close enough (module docstring), and a
    capital O read as a zero at a word's start put back (`capital_o`)."""
    glyphs = capital_o(glyphs, words)
    out = list(glyphs)
    for a, b in reversed(_spans(glyphs)):
        run = glyphs[a:b]
        word = "".join(g.char for g in run)
        if (
            len(word) < config.min_letters
            or word.isupper()
            or word.casefold() in words.words
            or min(g.prob for g in run) >= config.max_prob
        ):
            continue
        lo = glyphs[a - 1].last + 1 if a > 0 else 0
        hi = glyphs[b].first if b < len(glyphs) else len(probs)
        readings = beam_readings(probs[lo:hi], config.top_classes, config.beam)
        texts = {k: "".join(characters[c] for c in k) for k in readings}
        greedy = max((p for k, p in readings.items() if texts[k] == word), default=0.0)
        best = max(
            (
                (p, k)
                for k, p in readings.items()
                if texts[k] != word and texts[k].isalpha() and _listed(texts[k].casefold(), len(word), words)
            ),
            default=None,
        )
        if best is None or best[0] * config.max_ratio < greedy:
            continue
        out[a:b] = _placed(best[1], probs[lo:hi], characters, lo)
    return tuple(out)


def capital_o(glyphs: tuple[Glyph, ...], words: WordList) -> tuple[Glyph, ...]:
    """`glyphs` with a capital O that was read as a lone zero before the rest of its word put
    back: "0 ften" for "Often" on an unevenly lit scan (dev eu-023 p3), a label whose figure
    made its whole header row read as a row of values. The zero stands alone (a space or the
    line's start before it, a space after), the letters after it are a whole token in lower
    case, no word by themselves, and a listed word with an O before them; "0 kg" and "0 pen"
    stay."""
    out = list(glyphs)
    for a, b in reversed(_spans(glyphs)):
        rest = "".join(g.char for g in glyphs[a:b])
        if (
            a < 2
            or glyphs[a - 1].char != " "
            or glyphs[a - 2].char != "0"
            or (a > 2 and not glyphs[a - 3].char.isspace())
            or (b < len(glyphs) and not glyphs[b].char.isspace())
            or len(rest) < 3
            or not rest.islower()
            or rest in words.words
            or f"o{rest}" not in words.words
        ):
            continue
        zero = glyphs[a - 2]
        out[a - 2 : a] = [Glyph("O", zero.prob, zero.first, zero.last)]
    return tuple(out)


def _listed(reading: str, read_length: int, words: WordList) -> bool:
    """Whether `reading` may replace a greedy reading of `read_length` letters (module docstring)."""
    if len(reading) >= read_length:
        return reading in words.words
    return len(reading) == read_length - 1 and reading in words.common


def _placed(classes: tuple[int, ...], probs: np.ndarray, characters: list[str], lo: int) -> list[Glyph]:
    """The glyphs of `classes` on the frames the CTC's best alignment gives them within `probs`
    (frames from `lo`), each with the best probability its class has on its own frames."""
    spans = _align(np.log(np.maximum(probs, 1e-30)), list(classes))
    return [
        Glyph(characters[c], float(probs[f0 : f1 + 1, c].max()), lo + f0, lo + f1)
        for c, (f0, f1) in zip(classes, spans)
    ]


def _align(logp: np.ndarray, classes: list[int]) -> list[tuple[int, int]]:
    """[first, last] frame of each class of `classes` in the most probable CTC alignment of
    them to `logp` (frames, classes): Viterbi over the blank-interleaved states."""
    states = [BLANK]
    for c in classes:
        states += [c, BLANK]
    n, frames = len(states), len(logp)
    score = np.full((frames, n), -np.inf)
    back = np.zeros((frames, n), dtype=np.int64)
    score[0, 0] = logp[0, states[0]]
    if n > 1:
        score[0, 1] = logp[0, states[1]]
    for t in range(1, frames):
        for s in range(n):
            options = [(score[t - 1, s], s)]
            if s >= 1:
                options.append((score[t - 1, s - 1], s - 1))
            if s >= 2 and states[s] != BLANK and states[s] != states[s - 2]:
                options.append((score[t - 1, s - 2], s - 2))
            best, came = max(options)
            score[t, s] = best + logp[t, states[s]]
            back[t, s] = came
    s = n - 1 if n < 2 or score[-1, n - 1] >= score[-1, n - 2] else n - 2
    path = [s]
    for t in range(frames - 1, 0, -1):
        s = int(back[t, s])
        path.append(s)
    path.reverse()
    spans: list[tuple[int, int]] = []
    for k in range(len(classes)):
        at = [t for t, s in enumerate(path) if s == 2 * k + 1]
        spans.append((at[0], at[-1]) if at else (0, 0))
    return spans
