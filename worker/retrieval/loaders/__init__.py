"""Document loaders for RAG frameworks (optional extras): LangChain and LlamaIndex.

Both yield one document per chunk (default) or per table, from an in-process extraction or a
running `tablesight serve`, with the same metadata (`common.records`). Each framework's module
imports its framework; this package imports neither.
"""
