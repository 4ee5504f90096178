"""The HTTP API and review page (`tablesight serve`): a thin layer over the job client and storage.

Nothing here runs a job or a model: uploads go through `JobClient.enqueue`, progress comes from
the job state in Redis, files come from storage, vision reads go to the `vision` queue.
"""

from worker.api.app import create_app

__all__ = ["create_app"]
