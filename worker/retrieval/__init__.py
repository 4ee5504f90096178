"""What retrieval reads from a stored document: chunks, descriptions, exports, logical tables.

The CLI (`tablesight chunks`, `describe`, `sql`), the HTTP API, the public Python API and the
loaders all call these modules, so that a chunk or a description is built in one place. The
modules are imported on their own (this package imports nothing eagerly), since the writers
(`worker.outputs`) need `exports` without the rest.
"""
