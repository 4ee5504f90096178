"""Tooling beside the runtime: sample documents with known tables, and the throughput bench.

Nothing on the extraction path imports from here except `tablesight demo` (its sample PDF).
"""
