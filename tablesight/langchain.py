"""The LangChain loader (`pip install "tablesight[langchain]"`); see worker.retrieval.loaders."""

from worker.retrieval.loaders.langchain import TablesightLoader

__all__ = ["TablesightLoader"]
