"""Retrievers over a corpus of unit texts: BM25, a feature-hashing encoder, a local embedder.

Every retriever is built from the unit texts and answers `search(queries, k)` with, per
query, the indices of its top-k units, best first.
- `bm25`: `bm25s` (Lucene's BM25 variant) on lowercased word tokens, English stopwords out;
- `hashing`: the dense-like baseline the seed named, a feature-hashing bag of words (word
  unigrams and bigrams hashed into 2**18 slots, log term frequency, L2-normalised) ranked by
  cosine; no model, no training, so it shows what plain lexical overlap buys as a vector;
- `embedder`: a sentence-transformers model read from a local folder (never downloaded);
  `sentence_transformers` is imported only when one is asked for.
"""

from __future__ import annotations

import math
import re
import zlib
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
STOPWORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the to was were what which with".split()
)
HASH_DIM = 1 << 18


def tokens(text: str) -> list[str]:
    """Lowercased words and numbers, stopwords out."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


class Retriever(Protocol):
    name: str

    def search(self, queries: Sequence[str], k: int) -> list[list[int]]: ...


class Bm25:
    name = "bm25"

    def __init__(self, texts: Sequence[str]) -> None:
        import bm25s

        self._n = len(texts)
        self._index = bm25s.BM25()
        # an empty unit would make an empty document; bm25s wants at least one token each
        self._index.index([tokens(t) or ["\u2400"] for t in texts], show_progress=False)

    def search(self, queries: Sequence[str], k: int) -> list[list[int]]:
        k = min(k, self._n)
        out: list[list[int]] = []
        for q in queries:
            toks = tokens(q) or ["\u2400"]
            docs, scores = self._index.retrieve([toks], k=k, show_progress=False)
            out.append([int(d) for d, s in zip(docs[0], scores[0]) if s > 0])
        return out


def _features(text: str) -> dict[int, float]:
    toks = tokens(text)
    counts: dict[int, int] = defaultdict(int)
    for f in toks + [f"{a} {b}" for a, b in zip(toks, toks[1:])]:
        counts[zlib.crc32(f.encode("utf-8")) % HASH_DIM] += 1
    weights = {i: 1.0 + math.log(c) for i, c in counts.items()}
    norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
    return {i: w / norm for i, w in weights.items()}


class Hashing:
    name = "hashing"

    def __init__(self, texts: Sequence[str]) -> None:
        self._n = len(texts)
        postings: dict[int, list[tuple[int, float]]] = defaultdict(list)
        for u, text in enumerate(texts):
            for i, w in _features(text).items():
                postings[i].append((u, w))
        self._postings = {
            i: (np.array([u for u, _ in p], dtype=np.int64), np.array([w for _, w in p], dtype=np.float32))
            for i, p in postings.items()
        }

    def search(self, queries: Sequence[str], k: int) -> list[list[int]]:
        out: list[list[int]] = []
        for q in queries:
            scores = np.zeros(self._n, dtype=np.float32)
            for i, w in _features(q).items():
                if i in self._postings:
                    units, weights = self._postings[i]
                    np.add.at(scores, units, weights * w)
            top = np.argsort(-scores, kind="stable")[:k]
            out.append([int(u) for u in top if scores[u] > 0])
        return out


class Embedder:
    """A local sentence-transformers folder; cosine over normalised embeddings."""

    def __init__(self, texts: Sequence[str], folder: Path) -> None:
        from sentence_transformers import SentenceTransformer

        self.name = f"embedder:{Path(folder).name}"
        self._model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
        self._units = self._model.encode(list(texts), normalize_embeddings=True, batch_size=32)

    def search(self, queries: Sequence[str], k: int) -> list[list[int]]:
        q = self._model.encode(list(queries), normalize_embeddings=True, batch_size=64)
        scores = q @ self._units.T
        return [[int(u) for u in np.argsort(-row, kind="stable")[:k]] for row in scores]


def make_retriever(name: str, texts: Sequence[str], embedder: Path | None = None) -> Retriever:
    if name == "bm25":
        return Bm25(texts)
    if name == "hashing":
        return Hashing(texts)
    if name == "embedder":
        if embedder is None:
            raise ValueError("the embedder retriever needs --embedder DIR")
        if not Path(embedder).is_dir():
            raise ValueError(f"--embedder {embedder}: not a folder (models are never downloaded)")
        return Embedder(texts, embedder)
    raise ValueError(f"unknown retriever {name!r}")
