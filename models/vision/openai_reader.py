"""`openai` backend: any OpenAI-compatible chat-completions server that accepts images.

vLLM, llama.cpp's server, Ollama and TGI all speak this protocol: the crop travels as a
base64 PNG data URL in an `image_url` content part. Standard library only (urllib), so an
API-only node needs neither torch nor an extra HTTP client. Timeouts, connection errors,
429 and 5xx are retried with bounded exponential backoff; other 4xx (bad model name, no
image support, bad key) fail at once, since asking again cannot help.
"""

from __future__ import annotations

import base64
import json
import logging
import socket
import time
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any

from PIL import Image

from models.vision.base import VisionAnswer, VisionError, png_bytes, prepare_image

if TYPE_CHECKING:
    from worker.settings import Settings

logger = logging.getLogger(__name__)

_RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
_MAX_RESPONSE_BYTES = 16 * 1024 * 1024


class OpenAIReader:
    """One server, one model; the retry policy comes from settings."""

    backend = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str = "",
        timeout: float = 60.0,
        retries: int = 2,
        backoff: float = 1.0,
        backoff_max: float = 10.0,
        max_tokens: int = 2048,
        temperature: float = 0.0,
        max_image_side: int = 1536,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise VisionError(f"vision URL {base_url!r} must start with http:// or https://")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.backoff_max = backoff_max
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.max_image_side = max_image_side

    @classmethod
    def from_settings(cls, s: Settings, model: str) -> OpenAIReader:
        return cls(
            s.vision.url,
            model,
            api_key=s.vision.api_key,
            timeout=s.vision.timeout,
            retries=s.vision.retries,
            backoff=s.vision.retry_backoff,
            backoff_max=s.vision.retry_backoff_max,
            max_tokens=s.vision.max_new_tokens,
            temperature=s.vision.temperature,
            max_image_side=s.vision.max_image_side,
        )

    def request_body(self, image: Image.Image, prompt: str) -> dict[str, Any]:
        data = base64.b64encode(png_bytes(prepare_image(image, self.max_image_side))).decode("ascii")
        return {
            "model": self.model,
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}},
                        {"type": "text", "text": prompt},
                    ],
                }
            ],
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
        }

    def read(self, image: Image.Image, prompt: str, *, deadline: float | None = None) -> VisionAnswer:
        return self._chat(json.dumps(self.request_body(image, prompt)).encode("utf-8"), deadline)

    def complete(self, prompt: str, *, max_tokens: int | None = None, deadline: float | None = None) -> VisionAnswer:
        """A text-only chat completion on the same server, with the same retries (table summaries)."""
        body = {
            "model": self.model,
            "messages": [{"role": "user", "content": prompt}],
            "max_tokens": max_tokens or self.max_tokens,
            "temperature": self.temperature,
        }
        return self._chat(json.dumps(body).encode("utf-8"), deadline)

    def _chat(self, body: bytes, deadline: float | None) -> VisionAnswer:
        last = ""
        for attempt in range(1, self.retries + 2):
            timeout = self.timeout
            if deadline is not None:
                timeout = min(timeout, deadline - time.monotonic())
                if timeout <= 0:
                    raise VisionError(
                        f"read deadline passed before attempt {attempt} ({last or 'no answer'})", transient=True
                    )
            try:
                reply = self._post(body, timeout)
            except _Retryable as exc:
                last = str(exc)
                if attempt > self.retries:
                    break
                delay = min(self.backoff * 2 ** (attempt - 1), self.backoff_max)
                if exc.retry_after is not None:
                    delay = min(max(delay, exc.retry_after), self.backoff_max)
                if deadline is not None and time.monotonic() + delay >= deadline:
                    break
                logger.warning("vision server: %s; retry %d/%d in %.1fs", last, attempt, self.retries, delay)
                time.sleep(delay)
                continue
            answer = _parse_reply(reply)
            answer.attempts = attempt
            return answer
        raise VisionError(f"vision server {self.url}: {last} (after {attempt} attempt(s))", transient=True)

    def _post(self, body: bytes, timeout: float) -> bytes:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (URL from settings)
                return response.read(_MAX_RESPONSE_BYTES)
        except urllib.error.HTTPError as exc:
            detail = _error_detail(exc)
            if exc.code in _RETRY_STATUS:
                raise _Retryable(f"HTTP {exc.code}{detail}", _retry_after(exc)) from exc
            raise VisionError(f"vision server {self.url} refused the request: HTTP {exc.code}{detail}") from exc
        except TimeoutError as exc:
            raise _Retryable(f"no answer within {timeout:.1f}s") from exc
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, (TimeoutError, socket.timeout)):
                raise _Retryable(f"no answer within {timeout:.1f}s") from exc
            raise _Retryable(f"cannot connect: {exc.reason}") from exc
        except (ConnectionError, OSError) as exc:  # reset mid-answer, remote closed, ...
            raise _Retryable(f"connection failed: {exc}") from exc


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def _retry_after(exc: urllib.error.HTTPError) -> float | None:
    try:
        return max(0.0, float(exc.headers.get("Retry-After", "")))
    except (TypeError, ValueError):
        return None


def _error_detail(exc: urllib.error.HTTPError) -> str:
    try:
        text = exc.read(2000).decode("utf-8", "replace")
    except OSError:
        return ""
    try:
        err = json.loads(text).get("error")
        text = err.get("message", "") if isinstance(err, dict) else str(err or text)
    except (ValueError, AttributeError):
        pass
    text = " ".join(text.split())[:300]
    return f": {text}" if text else ""


def _parse_reply(raw: bytes) -> VisionAnswer:
    """`choices[0].message.content` (a string, or a list of text parts) and the token usage."""
    try:
        reply = json.loads(raw.decode("utf-8"))
        choice = reply["choices"][0]
        content = choice["message"].get("content")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        raise VisionError(f"vision server sent no chat completion: {raw[:200]!r}") from exc
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if not isinstance(content, str):
        content = ""
    usage = reply.get("usage") if isinstance(reply.get("usage"), dict) else {}
    return VisionAnswer(
        text=content,
        prompt_tokens=_int(usage.get("prompt_tokens")),
        completion_tokens=_int(usage.get("completion_tokens")),
        finish_reason=choice.get("finish_reason"),
    )


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
