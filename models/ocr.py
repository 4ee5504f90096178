"""Words from an image by tesseract: the text source for pages without a text layer.

Plain data out: `Word`s with boxes in the caller's pixel frame (`offset` shifts
crop coordinates back onto the page) and confidence in 0..1.
"""

from __future__ import annotations

import logging
import os
import subprocess
import tempfile

import numpy as np
import pytesseract
from PIL import Image

from models.rules import DARK, RULE_MAX_THICKNESS_PX, RULE_MIN_PX, dilate, rule_runs
from worker.core.types import Word
from worker.errors import OcrUnavailable

log = logging.getLogger(__name__)

# Tesseract reads best with text lines ~20-40 px tall. Lines shorter than this (estimated from
# the image, see _text_line_height) are read at UPSCALE_FACTOR. Measured on the sample tables
# (worker.devtools.samples, clean and scan-noised): lines of 8-15 px go from 85% to 97.5% of words exact;
# upscaling larger text costs ~2 points, hence the threshold.
UPSCALE_BELOW_PX = 18
UPSCALE_FACTOR = 2
# Ruling lines make tesseract drop most words of a fully ruled table (measured: under half of
# the words read, psm 11, any size), so they are erased first; what a rule is lives in
# models.rules, shared with the line positions reconstruction uses.
_DARK = DARK


def ocr_words(
    image: Image.Image,
    *,
    lang: str = "eng",
    psm: int = 11,
    offset: tuple[float, float] = (0, 0),
    upscale: float | None = None,
    rule_min_px: int | None = RULE_MIN_PX,
    threads: int | None = None,
    invert: bool = True,
    dpi: int | None = None,
    line_px: float | None = None,
) -> list[Word]:
    """OCR `image`; words with text and a confidence, boxes shifted by `offset`.

    `upscale` scales the image before OCR (boxes are mapped back); None means automatic:
    `UPSCALE_FACTOR` when text lines are under `UPSCALE_BELOW_PX` tall, else 1.
    psm 11 (sparse text) suits table crops: cells are scattered words, not paragraphs.
    `rule_min_px` is the shortest ruling line erased before OCR (scale it with the render dpi:
    about dpi / 5); None keeps the lines.
    `threads` caps tesseract's OpenMP threads for this call (OMP_THREAD_LIMIT); None keeps the
    environment's (tesseract then uses every core). 1 reads the same words with about a third
    of the CPU time, which is what lets several crops be read at once (see `_tesseract_tsv`).
    `invert=False` stops tesseract from re-reading low-confidence words as white on black
    (`tessedit_do_invert`); `dpi` is the image's resolution before `upscale`, told to tesseract
    (`--dpi`) instead of its guess. What each does to words and time: worker.devtools.bench_ocr.
    """
    if upscale is not None and upscale <= 0:
        raise ValueError("upscale must be positive")
    image = image.convert("L")
    if rule_min_px is not None:
        image = erase_rules(image, rule_min_px)
    if upscale is None:
        upscale = auto_upscale(_text_line_height(image), line_px)
    log.debug("ocr %dx%d px, upscale %s, psm %s", image.width, image.height, upscale, psm)
    if upscale != 1:
        size = (max(1, round(image.width * upscale)), max(1, round(image.height * upscale)))
        image = image.resize(size, Image.Resampling.LANCZOS)
    switches = ["--psm", str(int(psm))]
    if dpi is not None:
        switches += ["--dpi", str(max(1, round(dpi * upscale)))]
    if not invert:
        switches += ["-c", "tessedit_do_invert=0"]
    try:
        if threads is None:
            data = pytesseract.image_to_data(
                image, lang=lang, config=" ".join(switches), output_type=pytesseract.Output.DICT
            )
        else:
            data = _tesseract_tsv(image, lang, switches, threads)
    except pytesseract.TesseractNotFoundError as exc:
        raise OcrUnavailable("tesseract is not installed or not on PATH (apt-get install tesseract-ocr)") from exc
    except pytesseract.TesseractError as exc:
        message = " ".join(str(exc.message).split())
        if "Failed loading language" in message or "Error opening data file" in message:
            raise OcrUnavailable(
                f"tesseract has no data for language {lang!r} (install tesseract-ocr-<lang>): {message[:200]}"
            ) from exc
        raise
    dx, dy = offset
    words = []
    for text, conf, left, top, width, height in zip(
        data["text"], data["conf"], data["left"], data["top"], data["width"], data["height"]
    ):
        text = text.strip()
        conf = float(conf)
        if not text or conf < 0:
            continue
        bbox = (left / upscale + dx, top / upscale + dy, (left + width) / upscale + dx, (top + height) / upscale + dy)
        x0, y0, x1, y1 = (round(v, 2) for v in bbox)
        words.append(Word(text, (x0, y0, x1, y1), round(conf / 100, 4)))
    return words


def auto_upscale(line_h: float | None, line_px: float | None = None) -> float:
    """The factor that gives tesseract lines of an adequate height: `UPSCALE_FACTOR` below
    `UPSCALE_BELOW_PX` (the default), or with `line_px`, enough to bring lines to that height."""
    if line_h is None:
        return 1
    if line_px is None:
        return UPSCALE_FACTOR if line_h < UPSCALE_BELOW_PX else 1
    return round(min(3.0, line_px / line_h), 2) if line_h < line_px else 1


def _tesseract_tsv(image: Image.Image, lang: str, switches: list[str], threads: int) -> dict[str, list]:
    """`pytesseract.image_to_data` (DICT) with OMP_THREAD_LIMIT set for this one process.

    pytesseract always passes the process environment, so a per-call thread limit needs its
    own subprocess call. Tesseract's OpenMP build spins its threads: measured on a 2-core host,
    a table crop takes ~1 s of CPU with the default and ~0.35 s with one thread, same TSV.
    The input PNG is written at compression 1 (lossless either way, so the same pixels).
    """
    with tempfile.TemporaryDirectory(prefix="tess_") as tmp:
        src, base = os.path.join(tmp, "in.png"), os.path.join(tmp, "out")
        image.save(src, format="PNG", compress_level=1)
        cmd = [
            pytesseract.pytesseract.tesseract_cmd,
            src,
            base,
            "-l",
            lang,
            *switches,
            "-c",
            "tessedit_create_tsv=1",
            "tsv",
        ]
        env = {**os.environ, "OMP_THREAD_LIMIT": str(max(1, threads))}
        try:
            proc = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, capture_output=True, check=False)
        except FileNotFoundError:
            raise pytesseract.TesseractNotFoundError() from None
        if proc.returncode:
            raise pytesseract.TesseractError(proc.returncode, pytesseract.pytesseract.get_errors(proc.stderr))
        with open(base + ".tsv", "rb") as fh:
            return pytesseract.pytesseract.file_to_dict(fh.read().decode("utf-8"), "\t", -1)


def erase_rules(
    image: Image.Image, min_len: int = RULE_MIN_PX, max_thickness: int = RULE_MAX_THICKNESS_PX
) -> Image.Image:
    """The greyscale image with thin horizontal and vertical lines (table rules) painted white."""
    grey = np.asarray(image.convert("L"))
    h_rules, v_rules, long_h, long_v = rule_runs(grey, min_len, max_thickness)
    rules = h_rules | v_rules
    if not rules.any():
        return image.convert("L")
    # Crossings of two rules are thick both ways: take long-run pixels next to a rule. Then widen
    # by one pixel for the grey anti-aliased fringe along each line.
    crossings = dilate(rules, 2 * (max_thickness // 2) + 1) & long_h & long_v
    out = grey.copy()
    out[dilate(rules | crossings, 3)] = 255
    return Image.fromarray(out)


def _text_line_height(image: Image.Image) -> float | None:
    """Median height of the bands of rows holding ink: the text line height of a table
    (whose cells in one row share a baseline). None for a blank image."""
    dark_rows = (np.asarray(image) < _DARK).sum(axis=1) >= 2
    edges = np.flatnonzero(np.diff(np.concatenate([[0], dark_rows.astype(np.int8), [0]])))
    heights = edges[1::2] - edges[::2]
    heights = heights[heights >= 3]  # specks
    return float(np.median(heights)) if heights.size else None
