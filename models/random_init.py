"""Randomly initialised Table Transformers, saved like real ones, for tests and speed runs.

Our build and test machines cannot reach the hub: tests build tiny models with
the real classes and label maps, save them, and load them through the production loader.
A `full` model has the real configuration (ResNet-18, d_model 256, 6+6 layers, 15/125
queries), so it costs what the real one costs to run. Nothing is downloaded.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Literal

import torch
from torch import nn

from models.table_transformer import DETECTION_LABELS
from worker.core.types import STRUCTURE_LABELS

Kind = Literal["detection", "structure"]
Size = Literal["tiny", "full"]

_LABELS: dict[str, tuple[str, ...]] = {"detection": DETECTION_LABELS, "structure": STRUCTURE_LABELS}
_QUERIES: dict[tuple[str, str], int] = {
    ("detection", "full"): 15,
    ("structure", "full"): 125,
    ("detection", "tiny"): 15,
    ("structure", "tiny"): 30,
}
# Keys of the hub's original (timm-backbone) configs, e.g. microsoft/table-transformer-detection
# at `main`, written by transformers 4.26; the loader must read this form.
_LEGACY_DROP = ("backbone_config", "backbone_kwargs", "dtype", "torch_dtype", "transformers_version")
_LEGACY_SET: dict[str, Any] = {
    "architectures": ["TableTransformerForObjectDetection"],
    "backbone": "resnet18",
    "dilation": None,
    "max_position_embeddings": 1024,
    "scale_embedding": False,
    "torch_dtype": "float32",
    "transformers_version": "4.26.0.dev0",
    "use_pretrained_backbone": True,
    "use_timm_backbone": True,
}


def build_random_model(
    kind: Kind, out_dir: Path, size: Size = "tiny", legacy_config: bool = False, seed: int = 0
) -> Path:
    """Build, save (save_pretrained) and return `out_dir` holding a random Table Transformer.

    `legacy_config=True` uses the timm ResNet-18 backbone and rewrites config.json in the
    hub's legacy form (`backbone: resnet18`, `use_timm_backbone: true`, `dilation: null`,
    `use_pretrained_backbone: true`), the form the original hub checkpoints carry.
    Otherwise the backbone is transformers' own ResNet (the hub's `no_timm` form).
    """
    from transformers import TableTransformerForObjectDetection

    if kind not in _LABELS:
        raise ValueError(f"kind must be 'detection' or 'structure', not {kind!r}")
    if size not in ("tiny", "full"):
        raise ValueError(f"size must be 'tiny' or 'full', not {size!r}")
    torch.manual_seed(seed)
    config = _config(kind, size, legacy_config)
    model = TableTransformerForObjectDetection(config).eval()
    with torch.no_grad():
        _spread_weights(model)
    out_dir = Path(out_dir)
    model.save_pretrained(out_dir, safe_serialization=True)
    if legacy_config:
        _rewrite_legacy(out_dir / "config.json")
    return out_dir


def _config(kind: str, size: str, legacy: bool) -> Any:
    from transformers import ResNetConfig, TableTransformerConfig

    labels = _LABELS[kind]
    if size == "full":
        dims = dict(
            d_model=256,
            encoder_layers=6,
            decoder_layers=6,
            encoder_ffn_dim=2048,
            decoder_ffn_dim=2048,
            encoder_attention_heads=8,
            decoder_attention_heads=8,
        )
        resnet = dict(embedding_size=64, hidden_sizes=[64, 128, 256, 512], depths=[2, 2, 2, 2])  # ResNet-18
    else:
        dims = dict(
            d_model=32,
            encoder_layers=1,
            decoder_layers=1,
            encoder_ffn_dim=64,
            decoder_ffn_dim=64,
            encoder_attention_heads=2,
            decoder_attention_heads=2,
        )
        resnet = dict(embedding_size=16, hidden_sizes=[16, 24, 32, 48], depths=[1, 1, 1, 1])
    if legacy:  # timm resnet18 whatever the size: the legacy form names it
        backbone: dict[str, Any] = dict(use_timm_backbone=True, backbone="resnet18", dilation=None)
    else:
        backbone = dict(
            use_timm_backbone=False,
            backbone=None,
            backbone_config=ResNetConfig(
                layer_type="basic",
                hidden_act="relu",
                downsample_in_first_stage=False,
                out_features=["stage1", "stage2", "stage3", "stage4"],
                **resnet,
            ),
        )
    return TableTransformerConfig(
        **backbone,
        **dims,
        use_pretrained_backbone=False,
        num_queries=_QUERIES[(kind, size)],
        id2label=dict(enumerate(labels)),
        label2id={label: i for i, label in enumerate(labels)},
    )


def _spread_weights(model: Any) -> None:
    """Re-initialise so outputs depend on the image and differ per query.

    The default init (normal, std 0.02, no batch-norm statistics) fades the image signal
    out, so every query predicts the same box; tests of batching and box mapping need
    outputs that differ between images.
    """
    for module in model.modules():
        if type(module).__name__.endswith("FrozenBatchNorm2d"):
            module.weight.fill_(1.0)  # timm zero-inits each block's last norm: blocks would be dead
        elif isinstance(module, nn.Conv2d):
            nn.init.kaiming_normal_(module.weight, mode="fan_in", nonlinearity="relu")
        elif isinstance(module, nn.Linear):
            nn.init.xavier_uniform_(module.weight)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, std=1.0)
    for layer in model.bbox_predictor.layers:
        nn.init.normal_(layer.weight, std=1.0 / math.sqrt(layer.in_features))


def _rewrite_legacy(path: Path) -> None:
    config = json.loads(path.read_text(encoding="utf-8"))
    for key in _LEGACY_DROP:
        config.pop(key, None)
    config.update(_LEGACY_SET)
    config["num_hidden_layers"] = config["encoder_layers"]
    path.write_text(json.dumps(dict(sorted(config.items())), indent=2) + "\n", encoding="utf-8")
