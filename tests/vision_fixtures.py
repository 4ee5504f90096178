"""Test helpers for the vision read: a scripted OpenAI-compatible server on loopback, a stored
table (crop, HTML, JSON) made from a grid spec, and a tiny random LLaVA saved to disk."""

from __future__ import annotations

import base64
import io
import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import helpers
from gridgen import grid_from_spec
from PIL import Image, ImageDraw

DOC_ID = "0123456789abcdef"
TABLE_ID = "p0001-t01"

# The detector's grid: 4x3, a two-column header cell over columns 1-2, and a row span in column 0.
SPEC = dict(
    n_rows=4,
    n_cols=3,
    spans=[(0, 1, 1, 2), (2, 0, 2, 1)],
    header_rows=2,
    texts={
        (0, 0): "Region",
        (0, 1): "Sales",
        (1, 0): "",
        (1, 1): "2023",
        (1, 2): "2024",
        (2, 0): "North",
        (2, 1): "10",
        (2, 2): "12",
        (3, 1): "11",
        (3, 2): "13",
    },
)

GOOD = (
    '<table><thead><tr><th rowspan="2">Region</th><th colspan="2">Sales</th></tr>'
    "<tr><th>2023</th><th>2024</th></tr></thead>"
    '<tbody><tr><td rowspan="2">North</td><td>10</td><td>12</td></tr><tr><td>11</td><td>13</td></tr></tbody></table>'
)


def store_table(storage: Any, doc_id: str = DOC_ID, crop_size: tuple[int, int] = (320, 160)) -> str:
    """The SPEC table (p0001-t01) with its cell texts drawn on the crop, stored as the pipeline
    stores it (helpers.store_table); returns `doc/tid`."""
    grid = grid_from_spec(**SPEC)
    crop = Image.new("RGB", crop_size, "white")
    draw = ImageDraw.Draw(crop)
    for cell in grid.cells:
        draw.text((10 + 100 * cell.col, 10 + 35 * cell.row), cell.text, fill="black")
    entry = helpers.store_table(storage, doc_id, grid, crop=crop, origin=(100, 100))
    return f"{doc_id}/{entry['table_id']}"


class ChatServer:
    """Speaks `POST /v1/chat/completions`; each request takes the next scripted reply.

    A reply is ("text", content) for a completion, ("status", code) for an HTTP error,
    ("sleep", seconds) to stall past the client's timeout, or ("raw", bytes) for a body as is.
    With the script empty it answers `default`. `requests` keeps every parsed request body.
    """

    def __init__(self, default: tuple[str, Any] = ("text", GOOD)) -> None:
        self.script: deque[tuple[str, Any]] = deque()
        self.default = default
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.times: list[float] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - the name http.server dispatches POST to
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                    server.times.append(time.monotonic())
                    kind, value = server.script.popleft() if server.script else server.default
                if self.path != "/v1/chat/completions":
                    kind, value = "status", 404
                if kind == "sleep":
                    time.sleep(value)
                    kind, value = "text", GOOD
                if kind == "status":
                    payload = json.dumps({"error": {"message": f"scripted {value}"}}).encode()
                    self.send_response(value)
                elif kind == "raw":
                    payload = value
                    self.send_response(200)
                else:
                    payload = json.dumps(
                        {
                            "id": "chatcmpl-1",
                            "object": "chat.completion",
                            "model": body.get("model"),
                            "choices": [
                                {
                                    "index": 0,
                                    "message": {"role": "assistant", "content": value},
                                    "finish_reason": "stop",
                                }
                            ],
                            "usage": {"prompt_tokens": 321, "completion_tokens": 45, "total_tokens": 366},
                        }
                    ).encode()
                    self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def image_of(self, i: int = -1) -> Image.Image:
        """The image sent with request `i`, decoded from its data URL."""
        parts = self.requests[i]["messages"][0]["content"]
        url = next(p["image_url"]["url"] for p in parts if p["type"] == "image_url")
        assert url.startswith("data:image/png;base64,")
        return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))


def build_tiny_vlm(out: Path) -> Path:
    """A random LLaVA (tiny CLIP tower + tiny Llama) with a processor made offline, saved to `out`.

    The tokenizer is a WordLevel model over a few words (tokenizers library), the chat template a
    small Jinja one that puts `<image>` where the image goes; nothing comes from the hub.
    """
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
        PreTrainedTokenizerFast,
    )

    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "<pad>": 3, "<image>": 4}
    for word in (
        "<table>",
        "</table>",
        "<tr>",
        "</tr>",
        "<td>",
        "</td>",
        "<th>",
        "</th>",
        'colspan="2"',
        "Region",
        "Sales",
        "North",
        "10",
        "12",
        "user:",
        "assistant:",
        "table",
        "the",
        "a",
    ):
        vocab.setdefault(word, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="<unk>",
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        extra_special_tokens={"image_token": "<image>"},
    )
    tokenizer.add_special_tokens({"additional_special_tokens": ["<image>"]})
    template = (
        "{% for m in messages %}{{ m['role'] }}: {% if m['content'] is string %}{{ m['content'] }}"
        "{% else %}{% for c in m['content'] %}{% if c['type'] == 'image' %}<image> {% else %}"
        "{{ c['text'] }} {% endif %}{% endfor %}{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}assistant: {% endif %}"
    )
    images = CLIPImageProcessor(size={"shortest_edge": 28}, crop_size={"height": 28, "width": 28})
    processor = LlavaProcessor(
        image_processor=images,
        tokenizer=tokenizer,
        patch_size=14,
        vision_feature_select_strategy="default",
        chat_template=template,
        num_additional_image_tokens=1,
    )
    vision = CLIPVisionConfig(
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        image_size=28,
        patch_size=14,
        projection_dim=16,
    )
    text = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=512,
        pad_token_id=3,
        bos_token_id=1,
        eos_token_id=2,
    )
    config = LlavaConfig(
        vision_config=vision,
        text_config=text,
        image_token_index=4,
        vision_feature_layer=-1,
        vision_feature_select_strategy="default",
    )
    torch.manual_seed(0)
    model = LlavaForConditionalGeneration(config).eval()
    # never <unk>/<pad>/<image>: the garbage is then words and tags, not an empty string
    model.generation_config.suppress_tokens = [0, 3, 4]
    model.save_pretrained(out)
    processor.save_pretrained(out)
    return out
