"""One router per resource: jobs, documents (tables, chunks), vision reads, health, review page."""
