"""The second look (worker.pipeline.second_look): a grid whose numbers share cells is read again.

The core's measure is checked on hand-built grids; the whole step with the real SLANet-plus on
heavily noisy, JPEG-compressed crops of a 15-row table of figures, which its first reading
collapses into a few tall rows (the failure seen on scanned dev tables, docs/scans.md). With
labels in a stub, the rebuild parts such rows on their text lines (worker.core.stacked_rows);
without them, the crop is read again."""

from __future__ import annotations

import io
from types import SimpleNamespace

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from models.denoise import structure_view
from models.embedded.weights import default_dir, fetch
from worker.core.number_cells import NumberFit, better_fit, needs_second_look, number_fit, number_tokens
from worker.core.types import Cell, TableGrid, Word
from worker.engines.embedded import EmbeddedEngine
from worker.pipeline.second_look import second_look
from worker.settings import Settings

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
ROWS = 15


def _grid(rows: list[list[str]]) -> TableGrid:
    cells = [Cell(r, c, text=t) for r, row in enumerate(rows) for c, t in enumerate(row)]
    return TableGrid(len(rows), len(rows[0]), cells)


def _words(texts: list[str]) -> list[Word]:
    return [Word(t, (0.0, 0.0, 1.0, 1.0)) for t in texts]


def test_numbers_are_counted_in_the_words_and_apart_in_the_cells() -> None:
    words = _words(["Country", "Fund", "2.3", "0.21", "1,250", "Total", "(4.5)", "n/a", "12%", "2 230"])
    assert number_tokens(words) == 6  # 2.3, 0.21, 1,250, (4.5), 12%, 2 230 (thousands grouped by a space)
    parted = _grid([["Bulgaria", "2.3", "0.21"], ["Total", "1,250", "(4.5)"], ["All", "12%", ""]])
    assert number_fit(parted, 5) == NumberFit(5, 5)
    # one number grouped by a space, a date, a list of labelled values: all apart
    listed = _grid([["2 230", "1 January 2008", "Total: 39% Effi (10.5%) Plantafin (20.1%)"]])
    assert number_fit(listed, 6) == NumberFit(6, 6)
    collapsed = _grid([["Bulgaria Total All", "2.3 1,250 12%", "0.21 (4.5)"]])
    assert number_fit(collapsed, 5) == NumberFit(0, 5)
    wrapped = _grid([["Number of financial companies who applied", "27", "16"]])  # words, not numbers
    assert number_fit(wrapped, 2).share == 1.0


def test_a_grid_is_read_again_only_with_enough_numbers_sharing_cells() -> None:
    assert needs_second_look(NumberFit(3, 40), below=0.75, min_numbers=6)
    assert not needs_second_look(NumberFit(34, 40), below=0.75, min_numbers=6)
    assert not needs_second_look(NumberFit(0, 5), below=0.75, min_numbers=6)  # too few numbers to judge
    assert better_fit(NumberFit(28, 40), NumberFit(0, 40), margin=0.25)
    assert not better_fit(NumberFit(20, 30), NumberFit(16, 30), margin=0.25)  # a few more keep the first
    assert not better_fit(NumberFit(4, 5), NumberFit(3, 5), margin=0.1)  # two more at least


def _table(seed: int, stub: bool = True) -> tuple[Image.Image, list[Word], list[list[str]]]:
    """A 15-row table of figures, its words (boxes as drawn) and its rows' texts; without
    `stub`, its rows have no label (a table of figures alone)."""
    rng = np.random.default_rng(seed)
    font, bold = ImageFont.truetype(FONT, 13), ImageFont.truetype(FONT.replace(".ttf", "-Bold.ttf"), 13)
    width, step = 800, 23
    image = Image.new("L", (width, step * (ROWS + 1) + 20), 255)
    draw = ImageDraw.Draw(image)
    xs = [14, 260, 450, 640]
    words: list[Word] = []
    rows: list[list[str]] = []

    def put(x: int, y: int, text: str, f: ImageFont.FreeTypeFont) -> None:
        draw.text((x, y), text, fill=0, font=f)
        left = x
        for token in text.split():  # one word a token, as a text layer gives them
            box = draw.textbbox((left, y), token, font=f)
            words.append(Word(token, tuple(float(v) for v in box)))  # type: ignore[arg-type]
            left = int(box[2] + f.getlength(" "))

    for c, text in enumerate(["Country", "Fund EURbn", "ERDF EURbn", "Total EURbn"]):
        put(xs[c], 10, text, bold)
    draw.line([(4, 8 + step), (width - 4, 8 + step)], fill=0, width=1)
    draw.rectangle([4, 4, width - 4, image.height - 4], outline=0)
    for r in range(ROWS):
        a, b = int(rng.integers(1, 300)) / 10, int(rng.integers(1, 300)) / 10
        row = [f"Region {chr(65 + r)}" if stub else "", f"{a:.1f}", f"{b:.1f}", f"{a + b:.1f}"]
        for c, text in enumerate(row):
            if text:
                put(xs[c], 12 + step * (r + 1), text, font)
        rows.append(row)
    return image, words, rows


def _scanned(image: Image.Image, seed: int) -> Image.Image:
    """Heavy sensor noise, then JPEG at quality 30."""
    grain = np.random.default_rng(seed).normal(0, 45, (image.height, image.width))
    noisy = Image.fromarray(np.clip(np.asarray(image, dtype=np.float32) + grain, 0, 255).astype(np.uint8))
    buf = io.BytesIO()
    noisy.convert("RGB").save(buf, "JPEG", quality=30)
    return Image.open(io.BytesIO(buf.getvalue())).convert("RGB")


@pytest.fixture(scope="module")
def run() -> SimpleNamespace:
    """What second_look reads of a pipeline run: settings, the real structure model, the engine."""
    fetch(default_dir(None))  # no-op when .ci/setup left the weights
    from models.embedded import load_structure

    settings = Settings(_env_file=None, engine="embedded", device="cpu")
    structure = load_structure(settings.models, 1)
    return SimpleNamespace(
        settings=settings, stages=SimpleNamespace(structure=structure), engine=EmbeddedEngine(), dpi=144
    )


def _found(grid: TableGrid, rows: list[list[str]]) -> int:
    """Rows of `rows` whose figures sit side by side in one grid row, in their columns."""
    cells = {(c.row, c.col): c.text for c in grid.cells}
    found = 0
    for row in rows:
        at = [r for r in range(grid.n_rows) if [cells.get((r, c), "") for c in (1, 2, 3)] == row[1:]]
        if at and cells.get((at[0], 0), "") == row[0]:
            found += 1
    return found


def test_rows_the_model_read_together_are_parted_on_their_text_lines(run) -> None:
    """On this crop SLANet-plus reads the 15 rows as a few tall ones and ends the table early;
    the lines of figures part them again in the first rebuild (worker.core.stacked_rows), so the
    crop is not read again."""
    image, words, rows = _table(2)
    crop = _scanned(image, 2)
    raw = run.stages.structure.predict([structure_view(crop)], 1)[0]
    assert sum(t["token"] == "<tr>" for t in raw) < ROWS  # the model's own reading collapsed
    first = run.engine.build_grid(raw, words, crop, run.dpi, run.settings)
    assert any("given their own lines" in r for r in first.grid.repairs)
    assert _found(first.grid, rows) == ROWS, first.grid.n_rows
    assert second_look(run, first, words, crop) is first  # type: ignore[arg-type]


def test_a_collapsed_reading_of_a_noisy_crop_is_read_again_and_its_figures_land_in_their_cells(run) -> None:
    """A table of figures without labels in a stub: its lines say nothing of its rows, and the
    collapsed reading goes back to the model on other views."""
    image, words, rows = _table(3, stub=False)
    crop = _scanned(image, 3)
    first = run.engine.build_grid(
        run.stages.structure.predict([structure_view(crop)], 1)[0], words, crop, run.dpi, run.settings
    )
    numbers = number_tokens(words)
    assert numbers == 3 * ROWS
    assert needs_second_look(number_fit(first.grid, numbers), 0.75, 6), first.grid.n_rows  # it collapsed

    kept = second_look(run, first, words, crop)  # type: ignore[arg-type]
    assert kept is not first and any("structure read again" in r for r in kept.grid.repairs)
    assert _found(kept.grid, rows) >= ROWS - 1, (kept.grid.n_rows, kept.grid.n_cols)  # each figure in its row


def test_a_clean_crop_is_read_once(run) -> None:
    image, words, _ = _table(2)
    crop = image.convert("RGB")
    first = run.engine.build_grid(run.stages.structure.predict([crop], 1)[0], words, crop, run.dpi, run.settings)
    assert second_look(run, first, words, crop) is first  # type: ignore[arg-type]
    assert not first.grid.repairs or not any("numbers" in r for r in first.grid.repairs)
