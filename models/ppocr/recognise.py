"""PP-OCRv6 text recognition (SVTR encoder, CTC head): the characters of one text line.

The model's contract, as PaddleOCR trains it: a BGR line image resized to height 48 at its
aspect ratio, scaled to [-1, 1], right-padded with zeros to the batch's width, NCHW; out come
per-frame class probabilities (softmax applied), one frame per 8 input columns. Class 0 is
the CTC blank, classes 1..n the characters listed in the ONNX file's `character` metadata,
and the last class a space. Greedy CTC decoding (best class per frame, repeats collapsed,
blanks dropped) gives the text; the frames each character was read on are kept, so that
words and their x positions can be recovered (models.ppocr.words).

Cost grows with the padded width of a batch, so lines are sorted by width and batched with
lines of similar width (`batch_size` at most, and a batch is cut where the widest line would
pad the others by more than `max_pad`).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image

if TYPE_CHECKING:
    from collections.abc import Callable

HEIGHT = 48
FRAME_PX = 8  # input columns per output frame
BLANK = 0
# The dictionary is multilingual (18,708 characters, most of them CJK). Tables in Latin-script
# languages gain nothing from the CJK classes and lose to them: a lone "±" read as "十".
# Without `cjk`, decoding considers only characters below the CJK blocks (U+2E80 onward:
# radicals, kana, hangul, ideographs, full-width forms): Latin, Greek, Cyrillic, digits,
# punctuation and symbols stay.
CJK_START = 0x2E80


@dataclass(frozen=True, slots=True)
class Glyph:
    """One decoded character: its text, probability, and the frames [first, last] it was read on."""

    char: str
    prob: float
    first: int
    last: int


@dataclass(frozen=True, slots=True)
class LineRead:
    """A recognised line: its glyphs, and how many crop pixels one frame spans."""

    glyphs: tuple[Glyph, ...]
    frame_px: float  # crop pixels per output frame
    read_score: float | None = None  # the greedy reading's score, where words were since corrected

    @property
    def text(self) -> str:
        return "".join(g.char for g in self.glyphs)

    @property
    def score(self) -> float:
        """Mean probability of the glyphs (0 for an empty read), as PaddleOCR scores a line; the
        greedy reading's, where a word was corrected (models.ppocr.lexicon), so that whether a
        line is kept stays the model's own call."""
        if self.read_score is not None:
            return self.read_score
        return float(np.mean([g.prob for g in self.glyphs])) if self.glyphs else 0.0


@dataclass(frozen=True, slots=True)
class RecogniseConfig:
    batch_size: int = 8
    max_pad: float = 1.5  # a batch's widest line at most this times the narrowest's width
    max_width: int = 3200  # longest resized line (px at height 48); longer ones are squeezed
    cjk: bool = False  # also decode CJK characters (see CJK_START)
    lexicon: str = "en"  # unsure non-words read again against this word list (models.ppocr.lexicon); "off"


class TextRecogniser:
    """The CTC recogniser on one onnxruntime session, with the dictionary from its metadata."""

    def __init__(
        self,
        path: Path,
        threads: int = 0,
        device: str = "cpu",
        config: RecogniseConfig | None = None,
        sha256: str | None = None,
    ) -> None:
        """`sha256`: the file's checked digest, when the caller has one (models.embedded.weights
        checks it at every start), so that the pruned copy is found without hashing it again."""
        from models.embedded.session import open_session, run

        self.config = config or RecogniseConfig()
        model = path if self.config.cjk else _latin_model(path, sha256)
        self.session = open_session(model, threads=threads, device=device)
        meta = self.session.get_modelmeta().custom_metadata_map
        if "character" not in meta:
            raise ValueError(f"{path} carries no character list in its metadata")
        characters = ["", *meta["character"].split("\n"), " "]
        self.characters = [characters[i] for i in _classes(meta["character"], self.config.cjk)]  # by model class
        self.input_name = self.session.get_inputs()[0].name
        self._call = run  # shrinks the CPU arena after a read's last call (models.embedded.session)
        self._correct: Callable[[tuple[Glyph, ...], np.ndarray], tuple[Glyph, ...]] | None = None
        if self.config.lexicon == "en":
            from functools import partial

            from models.ppocr.lexicon import LexiconConfig, correct_words, english_words

            self._correct = partial(
                correct_words, characters=self.characters, words=english_words(), config=LexiconConfig()
            )
        elif self.config.lexicon != "off":
            raise ValueError(f"unknown PP-OCR word list {self.config.lexicon!r} (en or off)")

    def read(self, crops: list[np.ndarray]) -> list[LineRead]:
        """Read each (h, w, 3) uint8 line crop; results in the order of `crops`."""
        cfg = self.config
        widths = [self._resized_width(c) for c in crops]
        out: list[LineRead | None] = [None] * len(crops)
        plan = batch_plan(widths, cfg.batch_size, cfg.max_pad)
        for n, batch in enumerate(plan):
            last = n == len(plan) - 1  # the widest batch: the arena is shrunk after it, once per read
            probs = self._run([crops[i] for i in batch], [widths[i] for i in batch], shrink=last)
            for row, i in enumerate(batch):
                line = probs[row, : math.ceil(widths[i] / FRAME_PX)]
                read = LineRead(self._decode(line), frame_px=crops[i].shape[1] / widths[i] * FRAME_PX)
                if self._correct is not None:
                    glyphs = self._correct(read.glyphs, line)
                    if glyphs != read.glyphs:
                        read = LineRead(glyphs, read.frame_px, read_score=read.score)
                out[i] = read
        return [r for r in out if r is not None]

    def _resized_width(self, crop: np.ndarray) -> int:
        h, w = crop.shape[:2]
        return max(FRAME_PX, min(self.config.max_width, math.ceil(HEIGHT * w / max(h, 1))))

    def _run(self, crops: list[np.ndarray], widths: list[int], shrink: bool = True) -> np.ndarray:
        padded = math.ceil(max(widths) / FRAME_PX) * FRAME_PX
        batch = np.zeros((len(crops), 3, HEIGHT, padded), dtype=np.float32)
        for row, (crop, width) in enumerate(zip(crops, widths)):
            line = Image.fromarray(crop).resize((width, HEIGHT), Image.Resampling.BILINEAR)
            bgr = np.asarray(line, dtype=np.float32)[:, :, ::-1]
            batch[row, :, :, :width] = ((bgr / 255.0 - 0.5) / 0.5).transpose(2, 0, 1)
        (probs,) = self._call(self.session, {self.input_name: batch}, shrink)
        return np.asarray(probs)

    def _decode(self, probs: np.ndarray) -> tuple[Glyph, ...]:
        """Greedy CTC over (frames, classes): each run of one non-blank class is a glyph."""
        best = probs.argmax(axis=1)
        conf = probs.max(axis=1)
        glyphs = []
        t = 0
        while t < best.size:
            cls, first = int(best[t]), t
            while t + 1 < best.size and best[t + 1] == cls:
                t += 1
            if cls != BLANK:
                glyphs.append(Glyph(self.characters[cls], float(conf[first : t + 1].max()), first, t))
            t += 1
        return tuple(glyphs)


def batch_plan(widths: list[int], batch_size: int, max_pad: float) -> list[list[int]]:
    """The lines' indices in model calls: sorted by resized width, narrowest first, a call cut
    after `batch_size` lines or where a line is wider than `max_pad` times the call's first
    (at least HEIGHT) would pad the others by too much. Every index appears once."""
    order = sorted(range(len(widths)), key=lambda i: widths[i])
    plan: list[list[int]] = []
    for i in order:
        if plan and len(plan[-1]) < batch_size and widths[i] <= max_pad * max(widths[plan[-1][0]], HEIGHT):
            plan[-1].append(i)
        else:
            plan.append([i])
    return plan


def _classes(listed: str, cjk: bool) -> list[int]:
    """The model classes decoded, from its `character` metadata: all, or none in the CJK blocks."""
    characters = ["", *listed.split("\n"), " "]
    return [i for i, c in enumerate(characters) if i == BLANK or cjk or ord(c[:1] or " ") < CJK_START]


def _latin_model(path: Path, sha256: str | None = None) -> Path | bytes:
    """The recogniser with its CTC head cut to the non-CJK classes (`_keep_classes`), as a file
    beside `path` named for its source's sha256: pruning needs the `onnx` package, whose import
    alone costs a process ~1.5 s of CPU, so it is done once per weights file, not per start
    (docs/speed.md, Round 7). Where the folder is read-only, the pruned model stays in memory."""
    import hashlib

    digest = (sha256 or hashlib.sha256(path.read_bytes()).hexdigest())[:16]
    cached = path.with_name(f"{path.stem}.latin-{digest}{path.suffix}")
    if cached.is_file():
        return cached
    import onnx

    model = onnx.load(str(path))
    meta = {p.key: p.value for p in model.metadata_props}
    if "character" not in meta:
        return path  # the caller names the missing list
    keep = _classes(meta["character"], cjk=False)
    n_classes = len(meta["character"].split("\n")) + 2
    if len(keep) == n_classes:
        return path
    _keep_classes(model, n_classes, keep)
    data = model.SerializeToString()
    partial = cached.with_name(f"{cached.name}.{os.getpid()}.part")
    try:
        partial.write_bytes(data)
        os.replace(partial, cached)  # atomic: a concurrent start reads the whole file or none
    except OSError:
        partial.unlink(missing_ok=True)
    return data


def _keep_classes(model: Any, n_classes: int, keep: list[int]) -> None:
    """Cut the CTC head (the last linear layer: weight (d, n_classes), bias (n_classes,)) down
    to the classes `keep`, in place. The softmax then runs over those alone: the same best
    class among them as masking the full output, with ~1/10 of the head's work and output."""
    from onnx import numpy_helper

    head = [t for t in model.graph.initializer if t.dims and t.dims[-1] == n_classes]
    if len(head) != 2:
        raise ValueError(f"expected the CTC head's weight and bias over {n_classes} classes, found {len(head)}")
    index = np.asarray(keep)
    for tensor in head:
        tensor.CopyFrom(numpy_helper.from_array(np.take(numpy_helper.to_array(tensor), index, axis=-1), tensor.name))
    for value in model.graph.output:
        dims = value.type.tensor_type.shape.dim
        if dims and dims[-1].dim_value == n_classes:
            dims[-1].dim_value = len(keep)
