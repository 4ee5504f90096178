"""The Celery app: every Celery setting in one place, all from the settings object.

Workers start with `celery -A worker.queue.app worker` (or `tablesight worker`). Importing
this module imports neither torch nor the models: they load lazily, once, in each pool
child on its first page task (worker.queue.runtime), so the parent never touches CUDA.

Reliability (docs/architecture.md, 'The queue's guarantees'): late acks and
reject-on-worker-lost give a killed child's task
back at once; Redis's visibility timeout gives a lost node's tasks back after
`visibility_timeout` seconds, swept every `unacked_restore_interval` seconds (a sweep's lock,
left behind by a worker killed mid-sweep, expires after `unacked_mutex_expire`), so tasks are
kept page-sized and their hard time limit (plus the longest retry delay) stays below it.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Celery, signals
from celery._state import get_current_task
from kombu import Exchange, Queue

from worker.settings import Settings, get_settings

DOCUMENT_TASK = "tablesight.document"
PAGES_TASK = "tablesight.pages"
VISION_TASKS = "tablesight.vision.*"
CALLBACK_TASK = "tablesight.callback"  # the end-of-job callback POST (worker.queue.callback_tasks)
LOG_FORMAT = "%(asctime)s %(levelname)s %(processName)s %(name)s%(task)s %(message)s"


def celery_config(s: Settings) -> dict[str, Any]:
    """The Celery configuration for settings `s` (tests read it to check the knobs)."""
    return {
        "broker_url": s.queue.broker_url,
        "result_backend": s.queue.result_backend or s.queue.broker_url,
        "broker_connection_retry_on_startup": True,
        "broker_connection_retry": True,
        "broker_connection_max_retries": None,  # a worker waits for its broker, however long it is away
        "broker_transport_options": {
            "visibility_timeout": s.queue.visibility_timeout,
            "unacked_restore_interval": s.queue.unacked_restore_interval,
            "unacked_restore_throttle": 1,  # sweep every interval, not every 10th
            # a worker killed mid-sweep holds the sweep's lock: a short expiry gives lost tasks back
            # after seconds, not kombu's 5 minutes (restore_by_tag is a WATCH transaction, so two
            # sweeps at once cannot restore one task twice)
            "unacked_mutex_expire": s.queue.unacked_mutex_expire,
            "socket_connect_timeout": 5,
            "socket_timeout": 30,
            "retry_on_timeout": True,
            "health_check_interval": 25,
        },
        "result_backend_transport_options": {
            "retry_policy": {"max_retries": 10, "interval_start": 0.2, "interval_step": 0.5, "interval_max": 3}
        },
        "task_publish_retry": True,
        "task_publish_retry_policy": {
            "max_retries": 10,
            "interval_start": 0.2,
            "interval_step": 0.5,
            "interval_max": 3,
        },
        # a task is acknowledged only when it has finished: a lost worker's task runs again
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_soft_time_limit": s.queue.task_soft_time_limit,
        "task_time_limit": s.queue.task_time_limit,
        "worker_max_tasks_per_child": s.queue.worker_max_tasks_per_child,
        "worker_max_memory_per_child": s.queue.worker_max_memory_per_child,
        "worker_proc_alive_timeout": s.queue.worker_proc_alive_timeout,
        "worker_pool": "prefork",
        # running tasks finish after a broker reconnect (they are idempotent either way)
        "worker_cancel_long_running_tasks_on_connection_loss": False,
        # monitoring (Flower): task events on, and the `task-sent` event from clients
        "worker_send_task_events": True,
        "task_send_sent_event": True,
        # job state lives in our own Redis hashes (worker.queue.state); results are not needed
        "task_ignore_result": True,
        "result_expires": s.queue.result_expires,
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        "task_default_queue": s.queue.docs,
        "task_queues": [_queue(s.queue.docs), _queue(s.queue.pages), _queue(s.queue.vision)],
        "task_routes": {
            DOCUMENT_TASK: {"queue": s.queue.docs},
            PAGES_TASK: {"queue": s.queue.pages},
            VISION_TASKS: {"queue": s.queue.vision},
            CALLBACK_TASK: {"queue": s.queue.docs},
        },
        "worker_hijack_root_logger": True,
        "worker_log_format": LOG_FORMAT,
        "worker_task_log_format": LOG_FORMAT,
        "worker_redirect_stdouts_level": "INFO",
        "timezone": "UTC",
        "enable_utc": True,
    }


class JobFormatter(logging.Formatter):
    """Adds ` task[task id]` to every line logged while a task runs, from any logger (models,
    pipeline, storage): task ids are `<job id>.doc` or `<job id>.pNNNN`, so each line names
    its job and page."""

    def format(self, record: logging.LogRecord) -> str:
        task = get_current_task()
        record.task = f" {task.name}[{task.request.id}]" if task is not None and task.request.id else ""
        return super().format(record)


def _use_job_formatter(logger: logging.Logger, **_: Any) -> None:
    for handler in logger.handlers:
        handler.setFormatter(JobFormatter(LOG_FORMAT))


# Logging is configured by the worker entry point (Celery's own set-up); these hooks only
# change the format of the handlers it installs.
signals.after_setup_logger.connect(_use_job_formatter, weak=False)
signals.after_setup_task_logger.connect(_use_job_formatter, weak=False)


def _queue(name: str) -> Queue:
    return Queue(name, Exchange(name, type="direct"), routing_key=name)


def make_app(settings: Settings | None = None, *, worker: bool = False) -> Celery:
    """A Celery app for `settings`. Clients send by task name, so only the worker's app
    (`worker=True`) includes the task module and becomes Celery's current app."""
    settings = settings or get_settings()
    app = Celery(
        "tablesight",
        include=["worker.queue.tasks", "worker.queue.vision_tasks", "worker.queue.callback_tasks"] if worker else [],
        set_as_current=worker,
    )
    app.conf.update(celery_config(settings))
    return app


# The worker's app: `celery -A worker.queue.app worker`. Tasks register on import of the module.
app = make_app(worker=True)
