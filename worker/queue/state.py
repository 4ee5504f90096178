"""Job state in Redis: one hash per job, a set of done pages, per-page progress; all with a TTL.

Keys (prefix `P` = settings.queue.job_key_prefix):

    P:job:<id>           hash: status, doc_id, sha256, source, options, pages_total, pages_done, ...
    P:job:<id>:done      set of pages finished (SADD is 1 only the first time: counted once)
    P:job:<id>:pages     hash page -> JSON {state, tables, seconds, worker, pid, error}
    P:job:<id>:attempts  hash page -> deliveries of that page (crashes and retries included)
    P:job:<id>:final     who finalises the manifest (SET NX, the winning task id)
    P:dedup:<sha256>:<options hash> -> job id (the same document and options give the same job)

Every counter update runs as one Lua script, so a reply lost on a dropped connection can be
retried safely: the page is added at most once and the count returned is always the true one.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, cast

import redis
from redis.backoff import ExponentialWithJitterBackoff
from redis.retry import Retry

from worker.settings import Settings
from worker.timestamps import utc_now_iso

STATES = ("queued", "running", "complete", "partial", "failed", "cancelled")
TERMINAL = frozenset({"complete", "partial", "failed", "cancelled"})
_JSON_FIELDS = ("options", "page_list", "models")
_INT_FIELDS = (
    "pages_total",
    "pages_done",
    "pages_failed",
    "page_count",
    "tables",
    "force",
    "callback_attempts",
    "cancel_remove",
)
_JOB_ID = re.compile(r"^[0-9a-f]{32}$")

# KEYS: job, done, pages, attempts. ARGV: page, info JSON, failed (0/1), ttl.
# Returns {added, pages_done, pages_total}; added = -1 when the job no longer exists.
_MARK_DONE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1, 0, 0} end
local added = redis.call('SADD', KEYS[2], ARGV[1])
if added == 1 then
  redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
  redis.call('HINCRBY', KEYS[1], 'pages_done', 1)
  if ARGV[3] == '1' then redis.call('HINCRBY', KEYS[1], 'pages_failed', 1) end
end
for i = 1, 4 do redis.call('EXPIRE', KEYS[i], ARGV[4]) end
return {added, tonumber(redis.call('HGET', KEYS[1], 'pages_done') or 0),
        tonumber(redis.call('HGET', KEYS[1], 'pages_total') or 0)}
"""

# KEYS: job. ARGV: allowed current states (comma separated), new state, ttl, then field/value pairs.
# Returns 1 when the state changed, 0 when the job is in another state or gone.
_TRANSITION = """
local current = redis.call('HGET', KEYS[1], 'status')
if not current then return 0 end
local allowed = false
for s in string.gmatch(ARGV[1], '[^,]+') do if s == current then allowed = true end end
if not allowed then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2])
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
"""

# KEYS: job, done, pages. ARGV: page, info JSON, ttl. Progress of a page not yet done.
_PAGE_INFO = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then return 0 end
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
redis.call('EXPIRE', KEYS[3], ARGV[3])
return 1
"""


def options_hash(options: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(options, sort_keys=True).encode()).hexdigest()[:16]


def valid_job_id(job_id: str) -> bool:
    return bool(_JOB_ID.match(job_id or ""))


def redis_client(url: str) -> redis.Redis:
    """A client that rides out a broker restart: commands retry with jittered backoff (~20 s)."""
    return redis.Redis.from_url(
        url,
        decode_responses=True,
        socket_timeout=15,
        socket_connect_timeout=5,
        health_check_interval=15,
        retry=Retry(ExponentialWithJitterBackoff(cap=2.0, base=0.05), retries=14),
        retry_on_error=[redis.exceptions.ConnectionError, redis.exceptions.TimeoutError],
    )


class JobState:
    """Read and update job state; safe to use from any process (redis-py reconnects after fork)."""

    def __init__(self, client: redis.Redis, prefix: str, ttl: int) -> None:
        self.r = client
        self.prefix = prefix
        self.ttl = int(ttl)
        self._mark_done = client.register_script(_MARK_DONE)
        self._transition = client.register_script(_TRANSITION)
        self._page_info = client.register_script(_PAGE_INFO)

    @classmethod
    def from_settings(cls, settings: Settings) -> JobState:
        url = settings.queue.job_state_url or settings.queue.broker_url
        return cls(redis_client(url), settings.queue.job_key_prefix, settings.queue.job_ttl_seconds)

    # --- keys ---------------------------------------------------------------
    def key(self, job_id: str, part: str = "") -> str:
        if not valid_job_id(job_id):
            raise ValueError(f"not a job id: {job_id[:40]!r}")
        return f"{self.prefix}:job:{job_id}" + (f":{part}" if part else "")

    def _keys(self, job_id: str) -> list[str]:
        return [self.key(job_id), self.key(job_id, "done"), self.key(job_id, "pages"), self.key(job_id, "attempts")]

    def dedup_key(self, sha256: str, options_hash: str) -> str:
        return f"{self.prefix}:dedup:{sha256}:{options_hash}"

    # --- jobs ---------------------------------------------------------------
    def create(self, job_id: str, fields: dict[str, Any]) -> None:
        with self.r.pipeline() as pipe:
            pipe.hset(self.key(job_id), mapping=_encode(fields))
            pipe.expire(self.key(job_id), self.ttl)
            pipe.execute()

    def get(self, job_id: str) -> dict[str, Any] | None:
        raw = cast(dict[str, str], self.r.hgetall(self.key(job_id)))
        return _decode(raw) if raw else None

    def update(self, job_id: str, **fields: Any) -> None:
        with self.r.pipeline() as pipe:
            pipe.hset(self.key(job_id), mapping=_encode(fields))
            pipe.expire(self.key(job_id), self.ttl)
            pipe.execute()

    def transition(self, job_id: str, allowed: set[str] | frozenset[str], status: str, **fields: Any) -> bool:
        """Set `status` (and fields) only if the current status is one of `allowed`."""
        flat: list[str] = []
        for k, v in _encode(fields).items():
            flat += [k, v]
        return bool(
            self._transition(keys=[self.key(job_id)], args=[",".join(sorted(allowed)), status, self.ttl, *flat])
        )

    def start(self, job_id: str, pages: list[int], page_count: int, kind: str) -> bool:
        """Record the page plan (queued pages keep whatever progress a re-run finds) and go running."""
        pages_key = self.key(job_id, "pages")
        queued = json.dumps({"state": "queued"})
        with self.r.pipeline() as pipe:
            for p in pages:
                pipe.hsetnx(pages_key, str(p), queued)
            pipe.expire(pages_key, self.ttl)
            pipe.execute()
        self.update(job_id, pages_total=len(pages), page_list=pages, page_count=page_count, kind=kind)
        return self.transition(job_id, {"queued"}, "running", started_at=utc_now_iso())

    # --- pages --------------------------------------------------------------
    def count_attempts(self, job_id: str, pages: list[int]) -> dict[int, int]:
        key = self.key(job_id, "attempts")
        with self.r.pipeline() as pipe:
            for p in pages:
                pipe.hincrby(key, str(p), 1)
            pipe.expire(key, self.ttl)
            counts = pipe.execute()[:-1]
        return dict(zip(pages, (int(c) for c in counts)))

    def done_pages(self, job_id: str) -> set[int]:
        return {int(p) for p in cast(set[str], self.r.smembers(self.key(job_id, "done")))}

    def page_info(self, job_id: str, page: int, info: dict[str, Any]) -> None:
        keys = self._keys(job_id)[:3]
        self._page_info(keys=keys, args=[str(page), json.dumps(info), self.ttl])

    def mark_done(self, job_id: str, page: int, info: dict[str, Any], failed: bool) -> tuple[int, int, int]:
        """Count the page once; returns (1 if this call counted it else 0 or -1, done, total)."""
        added, done, total = self._mark_done(
            keys=self._keys(job_id), args=[str(page), json.dumps(info), "1" if failed else "0", self.ttl]
        )
        return int(added), int(done), int(total)

    def pages(self, job_id: str) -> dict[int, dict[str, Any]]:
        raw = cast(dict[str, str], self.r.hgetall(self.key(job_id, "pages")))
        attempts = cast(dict[str, str], self.r.hgetall(self.key(job_id, "attempts")))
        out = {}
        for p, info in sorted(raw.items(), key=lambda kv: int(kv[0])):
            out[int(p)] = {**json.loads(info), "attempts": int(attempts.get(p, 0))}
        return out

    def claim_final(self, job_id: str, token: str, hold_seconds: int) -> bool:
        """True for exactly one token (and again for it when its task runs twice)."""
        key = self.key(job_id, "final")
        if self.r.set(key, token, nx=True, ex=hold_seconds):
            return True
        return cast(str | None, self.r.get(key)) == token

    # --- deduplication ------------------------------------------------------
    def find_duplicate(self, sha256: str, options_hash: str) -> str | None:
        return cast(str | None, self.r.get(self.dedup_key(sha256, options_hash)))

    def remember(self, sha256: str, options_hash: str, job_id: str, *, replace: bool) -> str:
        """Point the document+options at `job_id`; returns the job that holds the key afterwards."""
        key = self.dedup_key(sha256, options_hash)
        if replace:
            self.r.set(key, job_id, ex=self.ttl)
            return job_id
        if self.r.set(key, job_id, nx=True, ex=self.ttl):
            return job_id
        return cast(str | None, self.r.get(key)) or job_id

    def forget(self, sha256: str, options_hash: str, job_id: str) -> None:
        key = self.dedup_key(sha256, options_hash)
        if self.r.get(key) == job_id:
            self.r.delete(key)


def _encode(fields: dict[str, Any]) -> dict[str, str]:
    out = {}
    for k, v in fields.items():
        if k in _JSON_FIELDS:
            out[k] = json.dumps(v, sort_keys=True)
        elif isinstance(v, bool):
            out[k] = "1" if v else "0"
        else:
            out[k] = "" if v is None else str(v)
    return out


def _decode(raw: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = dict(raw)
    for k in _JSON_FIELDS:
        if k in out and out[k]:
            out[k] = json.loads(out[k])
    for k in _INT_FIELDS:
        if k in out and out[k] != "":
            out[k] = int(out[k])
    return out
