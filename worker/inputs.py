"""Open and validate an input file, then render it one page per call.

Everything that can be wrong with an input is found here and raised as `InputError`
(a permanent failure: the job fails at once with a clear reason). Pages are
rendered one at a time, after checking their pixel count, so a huge page or a long
document never fills memory.
"""

from __future__ import annotations

import hashlib
import math
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from pdf2image import convert_from_path
from pdf2image.exceptions import PDFPageCountError, PDFSyntaxError
from PIL import Image, ImageOps, UnidentifiedImageError

from worker.errors import InputError

if TYPE_CHECKING:
    from worker.settings import Settings

Kind = Literal["pdf", "image"]

_SNIFF_BYTES = 1024
_IMAGE_MAGIC = {
    b"\x89PNG\r\n\x1a\n": "PNG",
    b"\xff\xd8\xff": "JPEG",
    b"II*\x00": "TIFF",
    b"MM\x00*": "TIFF",
    b"II+\x00": "TIFF",  # BigTIFF
    b"MM\x00+": "TIFF",
}
# EXIF orientations that swap width and height (transpose, rotate 90/270, transverse).
_SWAPPING_ORIENTATIONS = {5, 6, 7, 8}
_PDFIUM_LOAD_ERRORS = {
    pdfium_c.FPDF_ERR_PASSWORD: "encrypted PDF (password required)",
    pdfium_c.FPDF_ERR_SECURITY: "encrypted PDF (unsupported security handler)",
}
_PDFIUM_ERROR_NAMES = {
    pdfium_c.FPDF_ERR_UNKNOWN: "unknown error",
    pdfium_c.FPDF_ERR_FILE: "file not found or could not be opened",
    pdfium_c.FPDF_ERR_FORMAT: "not a PDF or corrupted",
    pdfium_c.FPDF_ERR_PAGE: "page not found or content error",
}


@dataclass(frozen=True)
class Document:
    """A validated input. `page_sizes` are points for a PDF (crop box, after /Rotate) and
    pixels for an image (after EXIF orientation); pages are numbered from 1."""

    path: Path
    kind: Kind
    page_count: int
    sha256: str
    page_sizes: tuple[tuple[float, float], ...]
    max_page_pixels: int
    image_format: str | None = None  # PNG, JPEG or TIFF for images

    def page_size_px(self, page_no: int, dpi: int) -> tuple[int, int]:
        """Size of the page as `render` will return it (poppler rounds up; images ignore dpi)."""
        w, h = self.page_sizes[self._index(page_no)]
        if self.kind == "image":
            return int(w), int(h)
        _check_dpi(dpi)
        return math.ceil(w * dpi / 72 - 1e-6), math.ceil(h * dpi / 72 - 1e-6)

    def check_pixels(self, page_no: int, dpi: int) -> None:
        """Refuse a page over the pixel limit before anything is rendered or decoded."""
        w, h = self.page_size_px(page_no, dpi)
        if w * h > self.max_page_pixels:
            at = f" at {dpi} dpi" if self.kind == "pdf" else ""
            raise InputError(
                str(self.path),
                f"page {page_no} would be {w} x {h} px{at}, over the limit of "
                f"{self.max_page_pixels} pixels; lower --dpi or raise TABLESIGHT_MAX_PAGE_PIXELS",
            )

    def render(self, page_no: int, dpi: int) -> Image.Image:
        """One page as an RGB image; checks the pixel limit before anything is decoded."""
        index = self._index(page_no)
        self.check_pixels(page_no, dpi)
        if self.kind == "pdf":
            return self._render_pdf(page_no, dpi)
        return self._render_image(index)

    def _index(self, page_no: int) -> int:
        if not 1 <= page_no <= self.page_count:
            raise ValueError(f"page {page_no} is out of range 1..{self.page_count}")
        return page_no - 1

    def _render_pdf(self, page_no: int, dpi: int) -> Image.Image:
        # use_cropbox: render what viewers (and pdfium's sizes and text boxes) show, not the media box.
        try:
            pages = convert_from_path(
                self.path, dpi=dpi, first_page=page_no, last_page=page_no, use_cropbox=True, thread_count=1
            )
        except (PDFPageCountError, PDFSyntaxError) as exc:
            raise InputError(str(self.path), f"poppler cannot read page {page_no}: {_one_line(exc)}") from exc
        if not pages:
            raise InputError(str(self.path), f"poppler rendered nothing for page {page_no}")
        return pages[0].convert("RGB")

    def _render_image(self, index: int) -> Image.Image:
        try:
            with Image.open(self.path) as im:
                im.seek(index)
                return _to_rgb(ImageOps.exif_transpose(im))
        except Image.DecompressionBombError as exc:
            raise InputError(str(self.path), f"image too large to decode safely: {exc}") from exc
        except (OSError, SyntaxError, ValueError) as exc:
            raise InputError(str(self.path), f"corrupt image (frame {index + 1}): {_one_line(exc)}") from exc


def open_document(path: Path | str, *, settings: Settings) -> Document:
    """Validate `path` (existence, size, kind by magic bytes, readability) and describe it."""
    path = Path(path)
    _check_file(path, settings.inputs.max_file_bytes)
    head, digest = _read_head_and_hash(path)
    sniffed = sniff_kind(head)
    if sniffed is None:
        raise InputError(str(path), f"not a PDF or image (starts with {head[:12]!r})")
    kind, image_format = sniffed
    if kind == "pdf":
        page_sizes = _pdf_page_sizes(path, settings.inputs.max_pages)
    else:
        assert image_format is not None
        page_sizes = _image_page_sizes(path, image_format, settings.inputs.max_pages)
    return Document(
        path=path,
        kind=kind,
        page_count=len(page_sizes),
        sha256=digest,
        page_sizes=tuple(page_sizes),
        max_page_pixels=settings.inputs.max_page_pixels,
        image_format=image_format,
    )


def sniff_kind(head: bytes) -> tuple[Kind, str | None] | None:
    """What the first bytes say the file is: ("pdf", None), ("image", "PNG"|"JPEG"|"TIFF"), or None.

    Names and declared content types are never trusted; the HTTP upload sniffs with this too.
    """
    if b"%PDF-" in head[:_SNIFF_BYTES]:
        return "pdf", None
    image_format = next((fmt for magic, fmt in _IMAGE_MAGIC.items() if head.startswith(magic)), None)
    return ("image", image_format) if image_format else None


def parse_page_ranges(spec: str | None, page_count: int) -> list[int]:
    """'1-3,5,7-' -> sorted unique 1-based pages; None, '' or 'all' mean every page."""
    if spec is None or spec.strip().lower() in ("", "all"):
        return list(range(1, page_count + 1))
    pages: set[int] = set()
    for part in spec.split(","):
        m = re.fullmatch(r"\s*(\d*)\s*(-?)\s*(\d*)\s*", part)
        if not m or not (m.group(1) or m.group(3)) or (m.group(3) and not m.group(2)):
            raise ValueError(f"bad page range {part.strip()!r} in {spec!r}; use e.g. '1-3,5,7-'")
        first = int(m.group(1)) if m.group(1) else 1
        last = (int(m.group(3)) if m.group(3) else page_count) if m.group(2) else first
        if first > last:
            raise ValueError(f"bad page range {part.strip()!r}: {first} is after {last}")
        for p in (first, last):
            if not 1 <= p <= page_count:
                raise ValueError(f"page {p} is out of range: the document has {page_count} page(s)")
        pages.update(range(first, last + 1))
    return sorted(pages)


def _check_file(path: Path, max_bytes: int) -> None:
    try:
        st = path.stat()
    except FileNotFoundError:
        raise InputError(str(path), "no such file") from None
    except OSError as exc:
        raise InputError(str(path), f"cannot access file: {exc.strerror or exc}") from exc
    if stat.S_ISDIR(st.st_mode):
        raise InputError(str(path), "is a directory, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise InputError(str(path), "not a regular file")
    if st.st_size == 0:
        raise InputError(str(path), "empty file")
    if st.st_size > max_bytes:
        raise InputError(
            str(path), f"file is {st.st_size} bytes, over the limit of {max_bytes} (TABLESIGHT_MAX_FILE_BYTES)"
        )


def _read_head_and_hash(path: Path) -> tuple[bytes, str]:
    """First bytes (for sniffing) and the sha256 of the whole file, in one streamed pass."""
    digest = hashlib.sha256()
    head = b""
    try:
        with path.open("rb") as f:
            while chunk := f.read(1 << 20):
                if not head:
                    head = chunk[:_SNIFF_BYTES]
                digest.update(chunk)
    except OSError as exc:
        raise InputError(str(path), f"cannot read file: {exc.strerror or exc}") from exc
    return head, digest.hexdigest()


def _check_page_count(path: Path, count: int, max_pages: int) -> None:
    if count > max_pages:
        raise InputError(str(path), f"{count} pages, over the limit of {max_pages} (TABLESIGHT_MAX_PAGES)")


def _pdf_page_sizes(path: Path, max_pages: int) -> list[tuple[float, float]]:
    # Raw load rather than PdfDocument(path): pypdfium2 reports a zero-page PDF with a stale
    # FPDF_GetLastError (e.g. "Incorrect password" left over from an earlier file).
    raw = pdfium_c.FPDF_LoadDocument((str(path.resolve()) + "\x00").encode("utf-8"), None)
    if not raw:
        code = pdfium_c.FPDF_GetLastError()
        reason = (
            _PDFIUM_LOAD_ERRORS.get(code)
            or f"corrupt or unreadable PDF: {_PDFIUM_ERROR_NAMES.get(code, f'pdfium error {code}')}"
        )
        raise InputError(str(path), reason)
    pdf = pdfium.PdfDocument(raw)
    try:
        count = len(pdf)
        if count < 1:
            raise InputError(str(path), "PDF has no pages")
        _check_page_count(path, count, max_pages)
        return [tuple(pdf.get_page_size(i)) for i in range(count)]
    except pdfium.PdfiumError as exc:
        raise InputError(str(path), f"corrupt or unreadable PDF: {exc}") from exc
    finally:
        pdf.close()


def _image_page_sizes(path: Path, fmt: str, max_pages: int) -> list[tuple[float, float]]:
    """Pixel size of each page as it will be shown: TIFF frames are pages; EXIF rotation applied."""
    try:
        with Image.open(path) as im:
            frames = getattr(im, "n_frames", 1) if fmt == "TIFF" else 1  # JPEG MPO / APNG: one page
            _check_page_count(path, frames, max_pages)
            sizes = []
            for i in range(frames):
                im.seek(i)
                w, h = im.size
                # PIL already reports a TIFF's size turned by its orientation (Pillow >= 8.3).
                raw = (im.tag_v2.get(256), im.tag_v2.get(257)) if fmt == "TIFF" else (w, h)
                if _orientation(im, fmt) in _SWAPPING_ORIENTATIONS and raw == (w, h):
                    w, h = h, w
                sizes.append((float(w), float(h)))
            return sizes
    except Image.DecompressionBombError as exc:
        raise InputError(str(path), f"image too large to decode safely: {exc}") from exc
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError) as exc:
        raise InputError(str(path), f"corrupt or unsupported {fmt} image: {_one_line(exc)}") from exc


def _orientation(im: Image.Image, fmt: str) -> int | None:
    """EXIF orientation without decoding pixels: PIL's PNG getexif() decodes the whole image
    (to find an eXIf chunk after the data), so for PNG only an early eXIf chunk counts."""
    if fmt != "PNG":
        return im.getexif().get(0x0112)
    raw = im.info.get("exif")
    if not raw:
        return None
    exif = Image.Exif()
    exif.load(raw)
    return exif.get(0x0112)


def _to_rgb(im: Image.Image) -> Image.Image:
    """RGB, with transparency flattened onto white (dropping alpha would turn it black)."""
    if im.mode in ("I", "I;16", "I;16B", "I;16L", "I;16N"):
        im = im.point(lambda v: v / 256).convert("L")  # 16-bit scans
    elif im.mode == "F":
        im = im.convert("L")
    if im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info):
        rgba = im.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB")
    return im.convert("RGB")


def _check_dpi(dpi: int) -> None:
    if not isinstance(dpi, int) or dpi <= 0:
        raise ValueError(f"dpi must be a positive integer, not {dpi!r}")


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300] or type(exc).__name__
