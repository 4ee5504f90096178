"""The page normalisation stage: a scanned page turned upright and deskewed before detection.

Pages without text-layer words (scans, images) go through `models.page_normalise`; pages with
a text layer are born straight and their words are in page coordinates, so they are left as
they are. The map back to the page as it came in goes into the page record, and every box
stored is mapped through it (docs/scans.md).
"""

from __future__ import annotations

from PIL import Image

from worker.contract.page_transform import PageTransformRecord
from worker.core.page_transform import PageTransform
from worker.settings import Settings


def normalise(
    image: Image.Image, settings: Settings, dpi: int | None = None
) -> tuple[Image.Image, PageTransform, PageTransformRecord]:
    """The normalised page (rendered or scanned at `dpi`), its transform, and the record of it."""
    from models.page_normalise import NormaliseOptions, normalise_page

    n = settings.normalise
    options = NormaliseOptions(
        orientation=n.orientation,
        deskew=n.deskew,
        max_skew=n.max_skew,
        min_skew=n.min_skew,
        background=n.background,
        rescale=n.rescale,
        x_height=n.x_height,
        sharpen=n.sharpen,
        sharpen_above=n.sharpen_above,
        dpi=dpi,
        threads=settings.ocr.threads or 1,
    )
    done = normalise_page(image, options)
    t = done.transform
    record = PageTransformRecord(
        to_original=[round(v, 6) for v in t.to_original],
        quarter_turns=t.quarter_turns,
        skew=t.skew,
        skew_estimate=done.skew_estimate,
        orientation_confidence=done.orientation_confidence,
        scale=t.scale,
        size=list(t.size),
        original_size=list(t.original_size),
    )
    return done.image, t, record


def detector_input(image: Image.Image, settings: Settings) -> Image.Image:
    """What the detector reads of a normalised page: the page cleaned (paper white, specks
    wiped) when `normalise.clean` is on; the same size, so its boxes need no mapping."""
    if not settings.normalise.clean:
        return image
    from models.page_normalise import clean_page

    return clean_page(image)


def crop_input(crop: Image.Image, settings: Settings) -> Image.Image:
    """What the structure model and the OCR read of a table crop: a black-and-white crop (a
    photocopy) softened to grey edges when `normalise.soften_binary` is on; any other crop as it is."""
    if not settings.normalise.soften_binary:
        return crop
    from models.page_normalise import soften_binary

    return soften_binary(crop, descreen=settings.normalise.descreen)


def structure_input(crop: Image.Image, settings: Settings) -> Image.Image | None:
    """What the structure model reads of a scanned table's crop, when it differs from what the OCR
    reads: a noisy crop median-filtered (`normalise.denoise_structure`; the OCR reads it as it is)."""
    if not settings.normalise.denoise_structure:
        return None
    from models.denoise import structure_view

    view = structure_view(crop)
    return None if view is crop else view
