"""The one settings object. Every knob lives here; no other module reads the environment."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

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
    torch_threads: int = Field(0, description="intra-op threads for torch on CPU; 0 = torch default")
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
    threshold_projected_row_header: float = Field(0.5, ge=0, le=1, description="min score for `table projected row header`")
    threshold_spanning_cell: float = Field(0.5, ge=0, le=1, description="min score for `table spanning cell`")
    duplicate_overlap: float = Field(0.5, ge=0, le=1, description="rows/columns overlapping more are duplicates")

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

    # --- vision reader ------------------------------------------------------
    vision_backend: str = Field("openai", description="openai or transformers")
    vision_model: str = Field("", description="model id (hub id or folder for transformers; served name for openai)")
    vision_url: str = Field("http://localhost:8000/v1", description="base URL of an OpenAI-compatible server")
    vision_api_key: str = Field("", description="API key for the vision server, if it needs one")

    log_level: str = Field("INFO", description="DEBUG, INFO, WARNING or ERROR")

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
