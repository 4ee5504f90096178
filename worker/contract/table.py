"""`<doc_id>/tables/<table_id>.json`: one table, everything needed to trust it or replay it."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from worker.contract.base import SCHEMA_VERSION, Contract, Number
from worker.contract.enums import TextSource
from worker.contract.page_transform import PageTransformRecord


class WordRecord(Contract):
    text: str
    bbox: list[Number]
    confidence: Number | None = None


class CellRecord(Contract):
    """One grid cell; (row, col) is its top-left slot, spans count grid rows/columns."""

    row: int
    col: int
    rowspan: int = 1
    colspan: int = 1
    text: str = ""
    bbox: list[Number] | None = None
    is_header: bool = False
    is_projected_row_header: bool = False
    confidence: Number = 1.0


class UnassignedWord(Contract):
    text: str
    bbox: list[Number]


class GridRecord(Contract):
    """A rectangular grid: every slot belongs to exactly one cell; `repairs` says what was fixed."""

    n_rows: int
    n_cols: int
    header_rows: int = 0
    confidence: Number = 1.0
    repairs: list[str] = Field(default_factory=list)
    cells: list[CellRecord] = Field(default_factory=list)
    unassigned_words: list[UnassignedWord] = Field(default_factory=list)


class FiredRule(Contract):
    rule: str
    weight: Number
    reason: str


class FlagRecord(Contract):
    """Why a table is hard: the fired rules, their score, and whether it needs the vision read."""

    spanning_cells: int
    header_rows: int
    projected_row_headers: int
    rotated: bool
    confidence: Number
    ocr_confidence: Number | None
    empty_fraction: Number
    repairs: int
    rules: list[FiredRule]
    reasons: list[str]
    score: Number
    threshold: Number
    needs_vision: bool
    is_complex: bool


class ContextRecord(Contract):
    """Caption above and notes below the table; `*_clear` says no other text sat between."""

    caption: str
    notes: list[str]
    above_clear: bool | None
    below_clear: bool | None


class BodyRowRecord(Contract):
    row: int
    kind: str
    group: list[str]
    block: int
    section: int
    line: str


class UnitRecord(Contract):
    col: int
    label: str
    unit: str
    source: str


class Serialisations(Contract):
    """Retrieval-ready text: flattened column labels, one line per body row, Markdown."""

    version: int
    header_rows: int
    header_source: str
    column_paths: list[list[str]]
    column_labels: list[str]
    units: list[UnitRecord]
    caption: str
    notes: list[str]
    pages: list[int]
    description: str
    rows: list[BodyRowRecord]
    row_lines: list[str]
    markdown: str
    markdown_lossy: bool
    markdown_lossy_reasons: list[str]


class StructureObjectRecord(Contract):
    label: str
    score: Number
    bbox: list[Number]


class LinesRecord(Contract):
    """Ruling lines found on the crop: y of horizontal and x of vertical lines, crop pixels;
    `h_runs`/`v_runs`, per line in the same order, the stretches `[from, to]` it is drawn along."""

    OMIT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset({"h_runs", "v_runs"})

    h: list[Number]
    v: list[Number]
    h_runs: list[list[list[Number]]] | None = None
    v_runs: list[list[list[Number]]] | None = None


class TokenRecord(Contract):
    """One structure token of the embedded engine, with its cell box when it opens a cell."""

    OMIT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset({"bbox"})

    token: str
    score: Number
    bbox: list[Number] | None = None


class CorrectionRecord(Contract):
    """A cell text changed after the grid was built: an OCR glyph confusion repaired where the
    context leaves no doubt (`worker.core.glyphs`; rule numeric_column or enumeration), or a
    reading the sums chose (rule totals)."""

    row: int
    col: int
    from_: str = Field(alias="from")
    to: str
    rule: str


class ReplayPayload(Contract):
    """The structure model's output plus the words: `tablesight rebuild` turns it into HTML.

    Table Transformer's objects, or (`engine: embedded`) the embedded engine's tokens."""

    OMIT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset({"engine", "tokens", "image", "lines", "corrections"})

    engine: str | None = None
    tokens: list[TokenRecord] | None = None
    image_size: list[int]
    objects: list[StructureObjectRecord]
    words: list[WordRecord]
    image: str | None = None
    lines: LinesRecord | None = None
    corrections: list[CorrectionRecord] | None = None


class ColumnSchema(Contract):
    """The typed columns of a table's CSV and Parquet exports (and its SQL view)."""

    version: int
    n_rows: int
    header_rows: int
    row_label_column: str | None
    columns: list[dict[str, Any]]


class ContinuationRecord(Contract):
    logical_table: str
    continues: str | None
    continued_by: str | None


class SumCheckRecord(Contract):
    """One printed total against the sum of its members (`worker.core.totals.SumCheck`)."""

    axis: str  # "row": a total row, summed down a column; "column": a total column, summed across a row
    total: list[int]  # [row, col] of the total's slot
    members: list[list[int]]
    label: str
    printed: Number
    computed: Number
    difference: Number
    tolerance: Number
    status: str  # agree | mismatch | unverified
    members_rule: str


class ReadingRecord(Contract):
    text: str
    source: str
    confidence: Number | None = None


class DecidedCell(Contract):
    """A cell whose text the sums chose among several OCR readings."""

    row: int
    col: int
    text: str
    previous: str
    source: str
    confidence: Number | None = None
    readings: list[ReadingRecord]
    decided_by: str = "totals"


class TotalsRecord(Contract):
    """The arithmetic check of a table's labelled totals: `agree` is a trust signal (every
    checked total adds up), `mismatch` sends the table to the vision read, `unverified` means
    no total could be confirmed from the rows shown. `second_reader` names who re-read the
    doubted cells (absent when nobody did)."""

    OMIT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset({"second_reader"})

    status: str
    checked: int
    agreed: int
    mismatched: int
    unverified: int
    unread: int = 0  # blank or unreadable cells that kept a total from being checked
    checks: list[SumCheckRecord]
    decided: list[DecidedCell] = Field(default_factory=list)
    second_reader: str | None = None


class ReviewState(Contract):
    """A reviewer's corrections: this record is version `version` (0 is the extraction's own);
    `verified` once a reviewer marked the table checked. The original stays as `<id>.original.json`."""

    version: int
    verified: bool
    by: str
    at: str
    changes: int


class TableRecord(Contract):
    """One detected table: where it is, its grid, why it may be hard, text for retrieval, replay."""

    OMIT_WHEN_NONE: ClassVar[frozenset[str]] = frozenset(
        {"continuation", "schema", "description", "export_error", "totals", "text_repairs", "page_transform", "review"}
    )

    schema_version: int = SCHEMA_VERSION
    doc_id: str
    table_id: str
    page: int
    dpi: int
    bbox: list[Number]
    crop_box: list[int]
    detection_score: Number
    rotated: bool
    text_source: TextSource
    grid: GridRecord
    flags: FlagRecord
    page_size: list[int]
    context: ContextRecord | None
    serialisations: Serialisations
    structure: ReplayPayload
    continuation: ContinuationRecord | None = None
    # the typed column view behind the CSV and Parquet exports, and the table's retrieval text
    column_schema: ColumnSchema | None = Field(None, alias="schema")
    description: str | None = None
    export_error: str | None = None  # why the exports are missing, when they failed
    # numbers that add up: the totals check (absent when the table labels no total) and the
    # OCR glyph repairs made (absent when none)
    totals: TotalsRecord | None = None
    text_repairs: list[CorrectionRecord] | None = None
    # the page was normalised first: `bbox` is on the original page, `crop_box` on the normalised one
    page_transform: PageTransformRecord | None = None
    review: ReviewState | None = None  # corrected by a reviewer (worker.review)
