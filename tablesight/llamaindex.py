"""The LlamaIndex reader (`pip install "tablesight[llamaindex]"`); see worker.retrieval.loaders."""

from worker.retrieval.loaders.llamaindex import TablesightReader

__all__ = ["TablesightReader"]
