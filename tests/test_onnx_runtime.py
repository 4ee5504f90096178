"""Table Transformer on ONNX Runtime answers as torch does: same plain objects, scores within
1e-4 and boxes within 0.5 px, on random-weight models loaded through the real loader; the
graph is exported once and cached under a key of the weights."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

SCORE_TOL = 1e-4
BOX_TOL_PX = 0.5


def _images() -> list[Image.Image]:
    """Pages and crops of different shapes (wide, tall, small), with something drawn on them."""
    out = []
    for i, size in enumerate(((900, 600), (500, 820), (1200, 300), (240, 180))):
        image = Image.new("RGB", size, "white")
        draw = ImageDraw.Draw(image)
        for y in range(10, size[1] - 10, 23 + 7 * i):
            draw.line((10, y, size[0] - 10, y), fill="black", width=1 + i % 2)
            draw.text((20 + 5 * i, y + 4), f"cell {y} {i}", fill="black")
        out.append(image)
    return out


def _compare(torch_out: list, onnx_out: list) -> tuple[float, float]:
    assert len(torch_out) == len(onnx_out)
    score = box = 0.0
    for a, b in zip(torch_out, onnx_out):
        assert len(a) == len(b)
        for oa, ob in zip(sorted(a, key=lambda o: o["bbox"]), sorted(b, key=lambda o: o["bbox"])):
            assert oa.keys() == ob.keys() == {"label", "score", "bbox"}
            assert isinstance(ob["score"], float) and all(isinstance(v, float) for v in ob["bbox"])
            assert oa["label"] == ob["label"]
            score = max(score, abs(oa["score"] - ob["score"]))
            box = max(box, max(abs(u - v) for u, v in zip(oa["bbox"], ob["bbox"])))
    return score, box


def test_onnx_matches_torch_and_caches_the_graph(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    """The structure model (the detector is the same graph with fewer queries and labels)."""
    from models.table_transformer import STRUCTURE_MAX_SIZE, TableTransformer
    from worker.core.types import STRUCTURE_LABELS

    folder = shutil.copytree(tiny_models["structure"], tmp_path / "structure")
    common = dict(device="cpu", max_size=STRUCTURE_MAX_SIZE, expected_labels=STRUCTURE_LABELS, cpu_batch_size=0)
    reference = TableTransformer.load(str(folder), runtime="torch", **common)  # type: ignore[arg-type]
    runner = TableTransformer.load(str(folder), runtime="auto", **common)  # type: ignore[arg-type]
    assert reference.session is None and runner.session is not None
    graphs = list((folder / "onnx").glob("*.onnx"))
    assert graphs == [runner.session.path], "the graph is cached beside writable weights"

    images = _images()
    one_by_one = [reference.predict([im])[0] for im in images]
    score, box = _compare(one_by_one, [runner.predict([im])[0] for im in images])
    assert score < SCORE_TOL and box < BOX_TOL_PX, (score, box)
    # padded batches (dynamic batch, height, width and a pixel mask with zeros)
    score, box = _compare(reference.predict(images, 4), runner.predict(images, 4))
    assert score < SCORE_TOL and box < BOX_TOL_PX, (score, box)

    stamp = graphs[0].stat().st_mtime_ns
    again = TableTransformer.load(str(folder), runtime="onnx", **common)  # type: ignore[arg-type]
    assert again.session is not None and again.session.path == graphs[0]
    assert again.model is None, "a cached graph needs no torch model (nor the transformers import)"
    score, box = _compare(one_by_one, [again.predict([im])[0] for im in images])
    assert score < SCORE_TOL and box < BOX_TOL_PX, (score, box)
    assert graphs[0].stat().st_mtime_ns == stamp, "a cached graph is not exported again"


def test_hub_weights_cache_elsewhere_and_changed_weights_get_a_new_graph(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    import torch
    from transformers import TableTransformerForObjectDetection

    from models.onnx_graph import files_key, graph_key, graph_path, resolve_runtime

    folder = shutil.copytree(tiny_models["detection"], tmp_path / "detection")
    model = TableTransformerForObjectDetection.from_pretrained(folder)
    key, on_disk = graph_key(model), files_key(folder)
    with torch.no_grad():
        model.class_labels_classifier.bias[0] += 1.0
    assert graph_key(model) != key
    model.save_pretrained(folder)
    assert files_key(folder) != on_disk, "changed weights on disk get a new graph"
    assert graph_path(key, None, tmp_path / "cache") == tmp_path / "cache" / f"{key}.onnx"  # a hub id
    assert graph_path(key, tmp_path, tmp_path / "cache") == tmp_path / "onnx" / f"{key}.onnx"
    assert resolve_runtime("auto", "cpu") == "onnx" and resolve_runtime("auto", "cuda:0") == "torch"
    with pytest.raises(ValueError, match="CPU only"):
        resolve_runtime("onnx", "cuda:0")
    with pytest.raises(ValueError, match="not one of"):
        resolve_runtime("tensorrt", "cpu")


def test_auto_falls_back_to_torch_when_no_graph_can_be_written(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    from models.table_transformer import DETECTION_LABELS, DETECTION_MAX_SIZE, TableTransformer

    folder = shutil.copytree(tiny_models["detection"], tmp_path / "detection", ignore=shutil.ignore_patterns("onnx"))
    (folder / "onnx").write_text("a file where the graph folder would go\n")
    common = dict(device="cpu", max_size=DETECTION_MAX_SIZE, expected_labels=DETECTION_LABELS)
    runner = TableTransformer.load(str(folder), runtime="auto", **common)  # type: ignore[arg-type]
    assert runner.session is None and runner.model is not None
    assert runner.predict(_images()[:1])[0], "torch still answers"
    with pytest.raises(OSError):
        TableTransformer.load(str(folder), runtime="onnx", **common)  # type: ignore[arg-type]
