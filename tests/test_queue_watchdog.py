"""The watchdog's rules (worker.queue.watchdog.lost_tasks), without a broker: what counts as a
lost task, and what never does. The end-to-end case (a message taken by a worker that died
before recording it) is in tests/test_queue_crash.py."""

from __future__ import annotations

from worker.queue.watchdog import Resend, grace_seconds, last_moved, lost_tasks
from worker.settings import Settings

JOB = "a" * 32
NOW = 10_000.0
GRACE = 100.0


def job(status: str, moved: float, **extra) -> dict:
    return {"job_id": JOB, "status": status, "created_ts": f"{moved:.3f}", **extra}


def lost(j: dict, pages=None, done=(), present=(), per_task: int = 1) -> list[Resend]:
    return lost_tasks(j, pages or {}, set(done), set(present), now=NOW, grace=GRACE, pages_per_task=per_task)


def test_a_queued_job_whose_document_task_is_nowhere_is_sent_again():
    assert lost(job("queued", NOW - 150, sent_ts="1")) == [Resend(JOB, "document")]
    # still queued behind others: its message is there, nothing to do
    assert lost(job("queued", NOW - 150, sent_ts="1"), present={f"{JOB}.doc"}) == []
    # not stalled long enough: kombu may still hand it back
    assert lost(job("queued", NOW - 50, sent_ts="1")) == []


def test_running_pages_without_a_task_are_sent_again_and_done_pages_never():
    j = job("running", NOW - 500, page_list=[1, 2, 3, 4], started_at="1970-01-01T02:00:00+00:00")
    pages = {p: {"state": "queued"} for p in (1, 2, 3, 4)}
    present = {f"{JOB}.p0002"}  # page 2's task is queued; page 1 is done; 3 and 4 were lost
    assert lost(j, pages, done={1}, present=present) == [Resend(JOB, "pages", (3,)), Resend(JOB, "pages", (4,))]
    # page groups: one task per two pages; only the undone pages of a lost group go again
    assert lost(j, pages, done={1, 3}, present=set(), per_task=2) == [
        Resend(JOB, "pages", (2,)),
        Resend(JOB, "pages", (4,)),
    ]


def test_a_page_that_moved_recently_holds_the_job_back():
    j = job("running", NOW - 500, page_list=[1, 2])
    pages = {1: {"state": "done", "finished_at": "1970-01-01T02:45:30+00:00"}, 2: {"state": "queued"}}
    assert last_moved(j, pages) == 9930.0  # page 1 ended 70 s ago: within the grace
    assert lost(j, pages, done={1}) == []
    pages[1]["finished_at"] = "1970-01-01T02:44:00+00:00"  # 160 s ago: page 2's task is lost
    assert lost(j, pages, done={1}) == [Resend(JOB, "pages", (2,))]


def test_every_page_counted_but_no_manifest_sends_the_last_page_to_finalise():
    j = job("running", NOW - 500, page_list=[1, 2])
    assert lost(j, {}, done={1, 2}) == [Resend(JOB, "pages", (2,))]
    assert lost(j, {}, done={1, 2}, present={f"{JOB}.p0002"}) == []


def test_ended_jobs_are_left_alone_and_the_grace_outlasts_kombus_own_restore():
    for status in ("complete", "partial", "failed", "cancelled"):
        assert lost(job(status, 0.0, sent_ts="1")) == []
    s = Settings()
    assert grace_seconds(s) > s.queue.visibility_timeout + s.queue.unacked_restore_interval
