"""The distributed job system: Celery app and tasks, job state in Redis, the client API.

    worker.queue.app      the Celery app (`celery -A worker.queue.app worker`), every knob from Settings
    worker.queue.tasks    document task (validate, fan out) and page task (model work, last one finalises)
    worker.queue.client   enqueue / status / result / wait
    worker.queue.state    job state in Redis (hashes, a set of done pages, TTLs)

Nothing here is imported by the in-process path; importing it never loads torch.
"""
