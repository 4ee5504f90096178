"""A table whose figures sit side by side in its cells has its structure read again, on other views.

The check is `worker.core.number_cells`: a table's figures stand apart in their cells, so a grid
in which many of the words' numbers sit beside another in one cell has lost rows or columns.
Such a crop goes back to the structure model on each view of `models.structure_views`, and the
reading that parts the numbers best is kept when it parts clearly more of them than the first
(a quarter of them: a collapse costs most); the first reading is kept otherwise. A grid whose
rows the rebuild parted on their text lines (`worker.core.stacked_rows`) was a collapsed reading
too: it is read again whatever its numbers, and a view that parts more of them is kept. On the dev
tables' clean renders and text layers a few crops go back and no reading changes, so the cost
falls where it is needed.

The grid kept is built from its own tokens, so the stored replay rebuilds it as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from worker.core.number_cells import better_fit, needs_second_look, number_fit, number_tokens
from worker.core.stacked_rows import was_split

if TYPE_CHECKING:
    from PIL import Image

    from worker.core.types import Word
    from worker.engines.base import BuiltGrid
    from worker.pipeline.run import Run


def second_look(run: Run, built: BuiltGrid, words: list[Word], crop: Image.Image) -> BuiltGrid:
    """`built`, or the grid of another view of `crop` that keeps the table's numbers apart better."""
    r = run.settings.refine
    if not r.second_look or not words:
        return built
    numbers = number_tokens(words)
    first = number_fit(built.grid, numbers)
    # rows the rebuild had to part on their text lines: the model's reading collapsed, and a view
    # it reads whole is taken when it parts more numbers (the parting keeps the model's columns)
    parted = was_split(built.grid.repairs) and numbers >= r.second_look_min_numbers
    if not parted and not needs_second_look(first, r.second_look_below, r.second_look_min_numbers):
        return built
    from models.structure_views import second_views

    readings = []
    for view_name, view in second_views(crop, r.second_look_views):
        candidate = run.engine.build_grid(
            run.stages.structure.predict([view], 1)[0], words, crop, run.dpi, run.settings
        )
        readings.append((number_fit(candidate.grid, numbers), view_name, candidate))
    # the most numbers apart; on a tie the fewer slots, then the earlier view (max keeps the first)
    fit, name, best = max(readings, key=lambda k: (k[0].apart, -k[2].grid.n_rows * k[2].grid.n_cols))
    if not better_fit(fit, first, 0.0 if parted else r.second_look_margin):
        if first.apart == numbers:
            return built
        built.grid.repairs.append(
            f"{numbers - first.apart} of {numbers} numbers beside another in a cell; "
            "no other view of the crop parted them"
        )
        return built
    best.grid.repairs.append(
        f"structure read again on a {name} view of the crop: {fit.apart} of {numbers} numbers "
        f"apart in their cells, against {first.apart} on the first reading"
    )
    return best
