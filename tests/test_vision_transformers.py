"""The `transformers` backend with a tiny random LLaVA built and saved here, loaded through the
real code path (settings -> load_reader -> AutoProcessor/AutoModelForImageTextToText). Its
answer is garbage: the read must end as a stored failure or a repaired read, never a crash."""

from __future__ import annotations

import pytest
from helpers import isolated_settings
from PIL import Image
from vision_fixtures import DOC_ID, TABLE_ID, build_tiny_vlm, store_table

from worker.settings import Settings
from worker.storage import LocalStorage
from worker.vision.read import read_table


@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory):
    return build_tiny_vlm(tmp_path_factory.mktemp("tiny-vlm") / "llava")


def local_vlm_settings(model_dir, **kw) -> Settings:
    base = dict(
        vision_backend="transformers",
        vision_model=str(model_dir),
        device="cpu",
        torch_threads=1,
        vision_max_new_tokens=24,
    )
    return isolated_settings(**{**base, **kw})


def test_garbage_answer_is_stored_as_failed_or_repaired(tiny_vlm, tmp_path):
    store = LocalStorage(tmp_path / "out")
    ref = store_table(store)
    record = read_table(store, ref, local_vlm_settings(tiny_vlm))
    stored = store.get_json(f"{DOC_ID}/tables/{TABLE_ID}.vision.json")
    assert stored["status"] == record["status"] and record["backend"] == "transformers"
    assert record["model"] == str(tiny_vlm)
    assert record["tokens"]["prompt"] > 0 and 0 < record["tokens"]["completion"] <= 24
    assert record["finish_reason"] in ("stop", "length") and record["latency_seconds"] > 0
    assert isinstance(record["raw_answer"], str)
    if record["status"] == "ok":  # repaired into a rectangle, with the repairs listed
        html = store.get_bytes(record["html_key"]).decode()
        assert html.startswith("<table>") and record["agreement"] is not None
    else:
        assert record["failure"] in ("no-table", "empty-table") and record["reason"]
        assert record["html_key"] is None and not store.exists(f"{DOC_ID}/tables/{TABLE_ID}.vision.html")
        assert record["retryable"] is False
    # greedy decoding is repeatable, so the stored read is reused
    assert read_table(store, ref, local_vlm_settings(tiny_vlm))["cached"] is True


def test_reader_is_cached_per_process_and_reads_odd_crops(tiny_vlm):
    from models.vision import load_reader

    s = local_vlm_settings(tiny_vlm, vision_max_image_side=64)
    reader = load_reader(s.vision, s.models)
    assert load_reader(s.vision, s.models) is reader and reader.device == "cpu"
    for size in ((3000, 20), (1, 1), (40, 900)):
        answer = reader.read(Image.new("L", size, 255), "read the table")
        assert isinstance(answer.text, str) and answer.completion_tokens <= 24


def test_missing_folder_is_a_clear_setup_error(tmp_path):
    from models.weights import WeightsNotFound

    store = LocalStorage(tmp_path / "out")
    ref = store_table(store)
    with pytest.raises(WeightsNotFound, match="does not exist"):
        read_table(store, ref, local_vlm_settings(tmp_path / "nope"))


def test_default_model_names_follow_the_device():
    from models.vision import DEFAULT_CPU_MODEL, model_name

    s = Settings(_env_file=None, vision_backend="transformers", vision_model="", device="cpu")
    assert model_name(s.vision, s.models) == DEFAULT_CPU_MODEL


@pytest.mark.gpu
def test_gpu_bf16_read(tiny_vlm, tmp_path):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    from models.vision import load_reader

    s = local_vlm_settings(tiny_vlm, device="cuda")
    reader = load_reader(s.vision, s.models)
    assert reader.device.startswith("cuda") and reader.dtype in (torch.bfloat16, torch.float16)
    answer = reader.read(Image.new("RGB", (200, 100), "white"), "read the table")
    assert isinstance(answer.text, str)
