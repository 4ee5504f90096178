"""Model wrappers, through the production loader, on tiny random models saved to disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from helpers import isolated_settings
from PIL import Image, ImageDraw

from models import weights
from models.device import inference_dtype, resolve_device
from models.random_init import build_random_model
from models.table_transformer import (
    DETECTION_LABELS,
    TableTransformer,
    load_detector,
    load_structure,
    make_batch,
    normalize,
    postprocess,
)
from models.weights import WeightsNotFound
from worker.core.types import STRUCTURE_LABELS
from worker.settings import ModelSettings


@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("models")
    return {
        "detection": build_random_model("detection", root / "det"),
        "structure": build_random_model("structure", root / "str", seed=1),
        "legacy": build_random_model("detection", root / "det-legacy", legacy_config=True),
    }


@pytest.fixture(scope="module")
def detector(model_dirs: dict[str, Path]) -> TableTransformer:
    return load_detector(cpu_model_settings(detection_model=str(model_dirs["detection"])))


@pytest.fixture(scope="module")
def structure(model_dirs: dict[str, Path]) -> TableTransformer:
    return load_structure(cpu_model_settings(structure_model=str(model_dirs["structure"])))


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """HF_HUB_OFFLINE as a fresh process would see it (the libraries read it at import)."""
    import huggingface_hub.constants
    import transformers.utils.hub

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(transformers.utils.hub, "_is_offline_mode", True)


def cpu_model_settings(**kwargs: object) -> ModelSettings:
    """CPU, no models folder; cpu_batch_size=0 so the batching tests below really batch."""
    base: dict[str, object] = dict(
        device="cpu", models_dir=None, torch_threads=0, half_precision=True, cpu_batch_size=0
    )
    return isolated_settings(**{**base, **kwargs}).models  # a model gets its own group only


def _table_image(width: int, height: int, rows: int = 6, mode: str = "RGB") -> Image.Image:
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    for r in range(rows + 1):
        y = 20 + r * (height - 40) // rows
        draw.line((20, y, width - 20, y), fill="black", width=2)
    for c in range(4):
        x = 20 + c * (width - 40) // 3
        draw.line((x, 20, x, height - 20), fill="black", width=2)
    return image.convert(mode)


def _assert_plain(objects: list[dict], image: Image.Image, labels: tuple[str, ...]) -> None:
    assert type(objects) is list and objects
    scores = [o["score"] for o in objects]
    assert scores == sorted(scores, reverse=True)
    for o in objects:
        assert type(o) is dict and set(o) == {"label", "score", "bbox"}
        assert type(o["label"]) is str and o["label"] in labels
        assert type(o["score"]) is float and 0.0 <= o["score"] <= 1.0
        assert type(o["bbox"]) is list and len(o["bbox"]) == 4 and all(type(v) is float for v in o["bbox"])
        x0, y0, x1, y1 = o["bbox"]
        assert 0 <= x0 <= x1 <= image.width and 0 <= y0 <= y1 <= image.height


def _assert_close(a: list[dict], b: list[dict], score_tol: float, box_tol: float) -> None:
    """Same objects up to tolerance; matched greedily, since near-equal scores may swap order."""
    assert len(a) == len(b)
    rest = list(b)
    for obj in a:
        best = min(
            rest, key=lambda o: (o["label"] != obj["label"], max(abs(p - q) for p, q in zip(o["bbox"], obj["bbox"])))
        )
        assert best["label"] == obj["label"]
        assert abs(best["score"] - obj["score"]) <= score_tol
        assert max(abs(p - q) for p, q in zip(best["bbox"], obj["bbox"])) <= box_tol
        rest.remove(best)


# --- outputs --------------------------------------------------------------------------


def test_detector_outputs_plain_data(detector: TableTransformer, model_dirs: dict[str, Path]) -> None:
    images = [_table_image(1200, 900), _table_image(500, 700, mode="L"), _table_image(300, 120)]
    results = detector.predict(images)
    assert len(results) == len(images)
    for objects, image in zip(results, images):
        _assert_plain(objects, image, DETECTION_LABELS)
        assert len(objects) == 15
    assert detector.labels == DETECTION_LABELS
    assert detector.model_id == str(model_dirs["detection"].resolve()) and detector.revision is None
    assert detector.max_size == 800 and detector.dtype == torch.float32 and detector.device == "cpu"
    json.dumps(results)  # nothing but plain data


def test_structure_outputs_plain_data(structure: TableTransformer) -> None:
    images = [_table_image(640, 480), _table_image(350, 900)]
    results = structure.predict(images, batch_size=2)
    for objects, image in zip(results, images):
        _assert_plain(objects, image, STRUCTURE_LABELS)
        assert len(objects) == 30
    assert structure.labels == STRUCTURE_LABELS and structure.max_size == 1000


def test_order_restored_across_aspect_sorting(detector: TableTransformer) -> None:
    images = [_table_image(400, 900), _table_image(1000, 300), _table_image(700, 700), _table_image(900, 600)]
    together = detector.predict(images, batch_size=1)  # sorted by aspect internally, no padding
    assert together == [detector.predict([im])[0] for im in images]
    assert together[0] != together[1]  # the outputs do depend on the image


def test_same_shape_batch_equals_single(structure: TableTransformer) -> None:
    images = [_table_image(800, 600, rows=4), _table_image(800, 600, rows=9), _table_image(800, 600, rows=2)]
    batched = structure.predict(images, batch_size=3)
    for objects, image in zip(batched, images):
        _assert_close(structure.predict([image])[0], objects, score_tol=1e-4, box_tol=0.05)


def test_padded_batch_close_to_single(detector: TableTransformer, monkeypatch: pytest.MonkeyPatch) -> None:
    # Padding changes backbone features near the real image's bottom/right edge (receptive
    # fields reach into the padding), as in DETR itself; results stay close, not identical.
    monkeypatch.setattr(detector, "max_padding", 1.0)  # one padded batch (size buckets would split it)
    images = [_table_image(1200, 900), _table_image(450, 800)]
    batched = detector.predict(images, batch_size=2)
    for objects, image in zip(batched, images):
        _assert_close(detector.predict([image])[0], objects, score_tol=0.05, box_tol=0.05 * max(image.size))


def test_postprocess_matches_transformers() -> None:
    from transformers import DetrImageProcessor

    torch.manual_seed(0)
    logits, boxes = torch.randn(2, 10, 3), torch.rand(2, 10, 4) * 0.8 + 0.1
    sizes = [(640, 480), (300, 1000)]  # (w, h)
    ours = postprocess(logits, boxes, sizes, {0: "table", 1: "table rotated"})

    class Out:  # what post_process_object_detection reads
        pass

    out = Out()
    out.logits, out.pred_boxes = logits, boxes  # type: ignore[attr-defined]
    theirs = DetrImageProcessor().post_process_object_detection(
        out, threshold=0.0, target_sizes=[(h, w) for w, h in sizes]
    )
    for mine, ref, (w, h) in zip(ours, theirs, sizes):
        limit = torch.tensor([w, h, w, h], dtype=torch.float32)
        expected = sorted(
            (
                (float(s), int(lab), torch.minimum(b.clamp(min=0), limit).tolist())
                for s, lab, b in zip(ref["scores"], ref["labels"], ref["boxes"])
            ),
            key=lambda t: -t[0],
        )
        assert [o["score"] for o in mine] == pytest.approx([e[0] for e in expected], abs=1e-6)
        assert [o["label"] for o in mine] == [("table", "table rotated")[e[1]] for e in expected]
        assert [o["bbox"] for o in mine] == [pytest.approx(e[2], abs=1e-3) for e in expected]


def test_full_image_box_maps_to_original_pixels() -> None:
    objects = postprocess(
        torch.tensor([[[5.0, 0.0, 0.0]]]),
        torch.tensor([[[0.5, 0.5, 1.0, 1.0]]]),
        [(1234, 567)],
        {0: "table", 1: "table rotated"},
    )
    assert objects[0][0]["label"] == "table"
    assert objects[0][0]["bbox"] == pytest.approx([0.0, 0.0, 1234.0, 567.0])


def test_make_batch_pads_with_mask() -> None:
    pixels, mask = make_batch([_table_image(1600, 800), _table_image(200, 400)], max_size=800)
    assert pixels.shape == (2, 3, 800, 800) and pixels.dtype == torch.uint8
    assert mask[0, :400].all() and not mask[0, 400:].any()
    assert mask[1, :, :400].all() and not mask[1, :, 400:].any()
    values = normalize(pixels, mask, torch.float32)
    assert values[0, :, 400:].abs().max() == 0 and values[1, :, :, 400:].abs().max() == 0
    assert values[0, :, :400].abs().max() > 1  # white is ~2 after ImageNet normalisation


# --- loading --------------------------------------------------------------------------


def test_legacy_hub_config_loads_without_download(
    model_dirs: dict[str, Path], offline: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import transformers.models.table_transformer.modeling_table_transformer as modeling

    config = json.loads((model_dirs["legacy"] / "config.json").read_text())
    assert config["use_timm_backbone"] is True and config["backbone"] == "resnet18"
    assert config["dilation"] is None and config["use_pretrained_backbone"] is True
    assert "backbone_config" not in config and "backbone_kwargs" not in config
    calls: list[bool] = []
    real = modeling.create_model

    def spy(*args: object, **kwargs: object) -> object:
        calls.append(bool(kwargs.get("pretrained")))
        return real(*args, **kwargs)

    monkeypatch.setattr(modeling, "create_model", spy)
    runner = load_detector(cpu_model_settings(detection_model=str(model_dirs["legacy"])))
    assert calls == [False]  # timm built the backbone without fetching ImageNet weights
    image = _table_image(600, 400)
    _assert_plain(runner.predict([image])[0], image, DETECTION_LABELS)


def test_no_timm_hub_config_loads(model_dirs: dict[str, Path], tmp_path: Path, offline: None) -> None:
    # The hub's `no_timm` configs carry a leftover `backbone: resnet50` beside backbone_config,
    # and `use_pretrained_backbone: true`, which alone would make load_backbone fail.
    folder = tmp_path / "no-timm"
    folder.mkdir()
    for f in model_dirs["detection"].iterdir():
        if f.is_file():  # not the onnx/ folder of cached graphs
            (folder / f.name).write_bytes(f.read_bytes())
    config = json.loads((folder / "config.json").read_text())
    config.update(backbone="resnet50", use_pretrained_backbone=True, backbone_kwargs=None)
    (folder / "config.json").write_text(json.dumps(config))
    runner = load_detector(cpu_model_settings(detection_model=str(folder)))
    image = _table_image(500, 500)
    _assert_plain(runner.predict([image])[0], image, DETECTION_LABELS)


def test_swapped_models_rejected(model_dirs: dict[str, Path]) -> None:
    with pytest.raises(ValueError, match="swapped"):
        load_structure(cpu_model_settings(structure_model=str(model_dirs["detection"])))


def test_missing_local_folder(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(WeightsNotFound) as info:
        load_detector(cpu_model_settings(detection_model=str(missing)))
    message = str(info.value)
    assert str(missing) in message
    assert "tablesight models download --dir" in message and "TABLESIGHT_MODELS_DIR" in message
    assert "HF_HUB_OFFLINE" in message


def test_folder_without_config(tmp_path: Path) -> None:
    with pytest.raises(WeightsNotFound, match="config.json"):
        weights.resolve(str(tmp_path))


def test_hub_id_offline(tmp_path: Path, offline: None) -> None:
    settings = cpu_model_settings(detection_model="microsoft/table-transformer-detection@no_timm", models_dir=tmp_path)
    with pytest.raises(WeightsNotFound) as info:
        load_detector(settings)
    message = str(info.value)
    assert "microsoft/table-transformer-detection" in message and "'no_timm'" in message
    assert str(tmp_path / "microsoft--table-transformer-detection") in message
    assert "HF_HUB_OFFLINE is set" in message and "TABLESIGHT_MODELS_DIR" in message


def test_download_offline_fails_clearly(tmp_path: Path, offline: None) -> None:
    with pytest.raises(WeightsNotFound, match="needs hub access"):
        weights.download(["microsoft/table-transformer-detection@no_timm"], tmp_path)
    with pytest.raises(ValueError, match="not a hub id"):
        weights.download([str(tmp_path)], tmp_path)


def test_resolve(tmp_path: Path, model_dirs: dict[str, Path]) -> None:
    hub = weights.resolve("microsoft/table-transformer-detection@no_timm")
    assert hub == weights.ResolvedModel(
        "microsoft/table-transformer-detection", "no_timm", False, "microsoft/table-transformer-detection"
    )
    assert weights.resolve("org/name", tmp_path).local is False  # not in models_dir: the hub
    local = weights.resolve(str(model_dirs["detection"]), tmp_path)
    assert local.local and local.revision is None and local.path_or_id == str(model_dirs["detection"].resolve())

    copy = tmp_path / "microsoft--table-transformer-detection"
    copy.mkdir()
    (copy / "config.json").write_text("{}")
    found = weights.resolve("microsoft/table-transformer-detection@no_timm", tmp_path)
    assert found == weights.ResolvedModel(str(copy.resolve()), "no_timm", True, "microsoft/table-transformer-detection")
    (copy / weights.REVISION_FILE).write_text("abc123\n")
    assert weights.resolve("microsoft/table-transformer-detection", tmp_path).revision == "abc123"
    with pytest.raises(WeightsNotFound):
        weights.resolve("./does/not/exist")


def test_models_dir_copy_loads(tmp_path: Path, model_dirs: dict[str, Path]) -> None:
    copy = tmp_path / "microsoft--table-structure-recognition-v1.1-all"
    copy.mkdir()
    for f in model_dirs["structure"].iterdir():
        if f.is_file():  # not the onnx/ folder of cached graphs
            (copy / f.name).write_bytes(f.read_bytes())
    runner = load_structure(cpu_model_settings(models_dir=tmp_path))  # the default hub id, found in MODELS_DIR
    assert runner.model_id == "microsoft/table-structure-recognition-v1.1-all" and runner.revision == "main"


def test_devicecpu_model_settings() -> None:
    assert resolve_device("cpu") == "cpu" and resolve_device(" CPU ") == "cpu"
    assert resolve_device("auto") == ("cuda:0" if torch.cuda.is_available() else "cpu")
    assert inference_dtype("cpu", True) == torch.float32
    for bad in ("gpu", "cuda:x", "cuda:-1", "tpu:0"):
        with pytest.raises(ValueError, match="not one of"):
            resolve_device(bad)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA"):
            resolve_device("cuda")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_half_precision(model_dirs: dict[str, Path]) -> None:
    folder = str(model_dirs["detection"])
    half = load_detector(cpu_model_settings(detection_model=folder, device="cuda"))
    full = load_detector(cpu_model_settings(detection_model=folder, device="cuda", half_precision=False))
    expected = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    assert half.device == "cuda:0" and half.dtype == expected and next(half.model.parameters()).dtype == expected
    assert full.dtype == torch.float32
    images = [_table_image(1200, 900), _table_image(450, 800)]
    for objects, image in zip(half.predict(images, batch_size=2), images):
        _assert_plain(objects, image, DETECTION_LABELS)
    # Raw outputs per query (scores sorted per run could swap near-ties): half vs fp32.
    pixels, mask = (t.to("cuda:0") for t in make_batch(images, half.max_size))
    with torch.inference_mode():
        low = half.model(pixel_values=normalize(pixels, mask, half.dtype), pixel_mask=mask)
        ref = full.model(pixel_values=normalize(pixels, mask, torch.float32), pixel_mask=mask)
    torch.testing.assert_close(low.pred_boxes.float(), ref.pred_boxes, atol=0.03, rtol=0)
    torch.testing.assert_close(low.logits.float().softmax(-1), ref.logits.softmax(-1), atol=0.05, rtol=0)
