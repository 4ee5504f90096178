"""Opening, validating and rendering inputs: real files, real pdfium and poppler."""

from __future__ import annotations

import hashlib
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import isolated_settings
from PIL import Image
from pypdf import PdfWriter

from worker.devtools.samples import make_scanned_pdf
from worker.errors import InputError
from worker.inputs import Document, open_document, parse_page_ranges

# Three pages of different sizes and colours, so a render shows which page it is.
PAGES = [((400, 300), (200, 30, 30)), ((300, 400), (30, 200, 30)), ((500, 200), (30, 30, 200))]


def _pages() -> list[Image.Image]:
    images = []
    for size, colour in PAGES:
        im = Image.new("RGB", size, "white")
        im.paste(colour, (size[0] // 4, size[1] // 4, 3 * size[0] // 4, 3 * size[1] // 4))
        images.append(im)
    return images


@pytest.fixture
def scanned_pdf(tmp_path: Path) -> Path:
    """A three-page image-only PDF at 100 dpi."""
    return make_scanned_pdf(tmp_path / "scan.pdf", _pages(), dpi=100)


def _minimal_pdf(pages_dict: bytes) -> bytes:
    """A hand-written PDF with a correct xref table around the given /Pages dictionary."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", pages_dict]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return out


def _png_header(width: int, height: int) -> bytes:
    """A PNG that claims a size but holds almost no data (what a decompression bomb looks like)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(b"\x00" * 16))
        + chunk(b"IEND", b"")
    )


def _write(data: bytes, name: str = "input.pdf") -> Callable[[Path, Path], Path]:
    def make(tmp_path: Path, _valid: Path) -> Path:
        path = tmp_path / name
        path.write_bytes(data)
        return path

    return make


def _truncated(tmp_path: Path, valid: Path) -> Path:
    data = valid.read_bytes()
    path = tmp_path / "truncated.pdf"
    path.write_bytes(data[: len(data) // 2])
    return path


def _encrypted(tmp_path: Path, valid: Path) -> Path:
    writer = PdfWriter()
    writer.append(str(valid))
    writer.encrypt("secret")
    path = tmp_path / "encrypted.pdf"
    writer.write(path)
    return path


def _directory(tmp_path: Path, _valid: Path) -> Path:
    (tmp_path / "folder.pdf").mkdir()
    return tmp_path / "folder.pdf"


BAD_INPUTS = {
    "truncated": (_truncated, "corrupt or unreadable PDF"),
    "garbage after header": (_write(b"%PDF-1.7\n" + bytes(range(256)) * 40), "corrupt or unreadable PDF"),
    "encrypted": (_encrypted, "encrypted PDF (password required)"),
    "empty": (_write(b""), "empty file"),
    "zero pages": (_write(_minimal_pdf(b"<< /Type /Pages /Kids [] /Count 0 >>")), "PDF has no pages"),
    "text named .pdf": (
        _write(b"Quarterly report\nnot really a PDF\n"),
        "not a PDF or image (starts with b'Quarterly re')",
    ),
    "missing": (lambda tmp_path, _v: tmp_path / "nowhere.pdf", "no such file"),
    "directory": (_directory, "is a directory, not a file"),
    "broken png": (_write(b"\x89PNG\r\n\x1a\n" + b"junk" * 50, "x.png"), "corrupt or unsupported PNG image"),
    "decompression bomb": (_write(_png_header(20000, 20000), "bomb.png"), "image too large to decode safely"),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_is_a_clear_input_error(case: str, tmp_path: Path, scanned_pdf: Path) -> None:
    make, reason = BAD_INPUTS[case]
    path = make(tmp_path, scanned_pdf)
    with pytest.raises(InputError) as info:
        open_document(path, settings=isolated_settings())
    err = info.value
    assert err.path == str(path)
    assert err.reason.startswith(reason), err.reason
    assert str(err) == f"{path}: {err.reason}" and "\n" not in str(err)


def test_zero_page_error_is_not_a_stale_password_error(tmp_path: Path, scanned_pdf: Path) -> None:
    """pypdfium2 reports a zero-page PDF with pdfium's last error, left over from a previous file."""
    with pytest.raises(InputError, match="password"):
        open_document(_encrypted(tmp_path, scanned_pdf), settings=isolated_settings())
    zero = _write(_minimal_pdf(b"<< /Type /Pages /Kids [] /Count 0 >>"), "zero.pdf")(tmp_path, scanned_pdf)
    with pytest.raises(InputError, match="PDF has no pages"):
        open_document(zero, settings=isolated_settings())


def test_limits_on_file_size_and_page_count(scanned_pdf: Path) -> None:
    with pytest.raises(InputError, match="over the limit of 100 .*TABLESIGHT_MAX_FILE_BYTES"):
        open_document(scanned_pdf, settings=isolated_settings(max_file_bytes=100))
    with pytest.raises(InputError, match="3 pages, over the limit of 2"):
        open_document(scanned_pdf, settings=isolated_settings(max_pages=2))


def test_page_over_pixel_limit_fails_before_rendering(scanned_pdf: Path) -> None:
    doc = open_document(scanned_pdf, settings=isolated_settings(max_page_pixels=1_000_000))
    assert doc.render(1, 200).size == (800, 600)  # 480,000 px: fine
    with pytest.raises(InputError) as info:
        doc.render(1, 600)  # 2400 x 1800
    assert info.value.reason == (
        "page 1 would be 2400 x 1800 px at 600 dpi, over the limit of 1000000 "
        "pixels; lower --dpi or raise TABLESIGHT_MAX_PAGE_PIXELS"
    )


def test_image_over_pixel_limit(tmp_path: Path) -> None:
    path = tmp_path / "wide.png"
    Image.new("RGB", (2000, 1000), "white").save(path)
    doc = open_document(path, settings=isolated_settings(max_page_pixels=1_000_000))
    with pytest.raises(InputError, match="page 1 would be 2000 x 1000 px, over the limit"):
        doc.render(1, 200)


def test_owner_password_only_pdf_opens(tmp_path: Path, scanned_pdf: Path) -> None:
    """Permissions-only encryption (empty user password) is readable: no reason to refuse it."""
    writer = PdfWriter()
    writer.append(str(scanned_pdf))
    writer.encrypt(user_password="", owner_password="owner")
    path = tmp_path / "restricted.pdf"
    writer.write(path)
    doc = open_document(path, settings=isolated_settings())
    assert doc.page_count == 3 and doc.render(2, 50).size == (150, 200)


def test_file_corrupted_after_open_fails_at_render(tmp_path: Path, scanned_pdf: Path) -> None:
    """poppler's own failure (pdf2image's PDFPageCountError) maps to InputError too."""
    doc = open_document(scanned_pdf, settings=isolated_settings())
    scanned_pdf.write_bytes(b"%PDF-1.4\ngone\n")
    with pytest.raises(InputError, match="poppler cannot read page 2"):
        doc.render(2, 72)


def test_pdf_document_pages_sizes_and_hash(scanned_pdf: Path) -> None:
    doc = open_document(scanned_pdf, settings=isolated_settings())
    assert isinstance(doc, Document) and doc.kind == "pdf" and doc.page_count == 3
    assert doc.sha256 == hashlib.sha256(scanned_pdf.read_bytes()).hexdigest()
    assert doc.page_sizes == tuple((w * 72 / 100, h * 72 / 100) for (w, h), _ in PAGES)
    for dpi in (100, 150):
        for page_no, ((w, h), colour) in enumerate(PAGES, 1):
            image = doc.render(page_no, dpi)  # one page per call, each its own size and colour
            assert image.mode == "RGB"
            assert image.size == doc.page_size_px(page_no, dpi) == (w * dpi // 100, h * dpi // 100)
            centre = image.getpixel((image.width // 2, image.height // 2))
            assert all(abs(a - b) < 40 for a, b in zip(centre, colour))
    with pytest.raises(ValueError, match="out of range"):
        doc.render(4, 100)


def test_kind_comes_from_magic_bytes_not_the_name(tmp_path: Path, scanned_pdf: Path) -> None:
    png_named_pdf = tmp_path / "picture.pdf"
    Image.new("RGB", (30, 20), "white").save(png_named_pdf, format="PNG")
    pdf_named_png = tmp_path / "scan.png"
    pdf_named_png.write_bytes(scanned_pdf.read_bytes())
    assert open_document(png_named_pdf, settings=isolated_settings()).kind == "image"
    assert open_document(pdf_named_png, settings=isolated_settings()).kind == "pdf"


def test_multipage_tiff_each_frame_a_page(tmp_path: Path) -> None:
    frames = _pages()
    path = tmp_path / "scan.tiff"
    frames[0].save(path, save_all=True, append_images=frames[1:], compression="tiff_lzw")
    doc = open_document(path, settings=isolated_settings())
    assert (doc.kind, doc.image_format, doc.page_count) == ("image", "TIFF", 3)
    for page_no, (size, colour) in enumerate(PAGES, 1):
        image = doc.render(page_no, 300)  # dpi does not apply to images
        assert image.size == size == doc.page_size_px(page_no, 300)
        assert image.getpixel((size[0] // 2, size[1] // 2)) == colour


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "TIFF"])
def test_exif_orientation_is_applied(tmp_path: Path, fmt: str) -> None:
    image = Image.new("RGB", (60, 40), "white")
    image.paste((255, 0, 0), (0, 0, 10, 10))  # a red mark at the stored top-left
    exif = Image.Exif()
    exif[0x0112] = 6  # display rotated 90 degrees clockwise
    path = tmp_path / f"photo.{fmt.lower()}"
    image.save(path, format=fmt, exif=exif)
    doc = open_document(path, settings=isolated_settings())
    shown = doc.render(1, 200)
    assert shown.size == doc.page_size_px(1, 200) == (40, 60)
    assert shown.getpixel((35, 5))[0] > 200 and shown.getpixel((35, 5))[1] < 60  # now top-right


def test_transparent_png_is_flattened_on_white(tmp_path: Path) -> None:
    path = tmp_path / "alpha.png"
    Image.new("RGBA", (20, 20), (0, 0, 0, 0)).save(path)
    assert open_document(path, settings=isolated_settings()).render(1, 200).getpixel((5, 5)) == (255, 255, 255)


@pytest.mark.parametrize(
    "spec,expected",
    [
        (None, [1, 2, 3, 4, 5, 6, 7, 8, 9]),
        ("all", [1, 2, 3, 4, 5, 6, 7, 8, 9]),
        ("1-3,5,7-", [1, 2, 3, 5, 7, 8, 9]),
        (" 2 , 2-3 ", [2, 3]),
        ("-2", [1, 2]),
        ("9", [9]),
    ],
)
def test_parse_page_ranges(spec: str | None, expected: list[int]) -> None:
    assert parse_page_ranges(spec, 9) == expected


@pytest.mark.parametrize(
    "spec,message",
    [
        ("0", "out of range"),
        ("10", "out of range"),
        ("8-12", "out of range"),
        ("3-1", "3 is after 1"),
        ("a", "bad page range"),
        ("1,,2", "bad page range"),
        ("-", "bad page range"),
        ("1-2-3", "bad page range"),
    ],
)
def test_parse_page_ranges_rejects(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_page_ranges(spec, 9)
