"""Table metrics that production code may use too (the vision read's agreement), not only the
evaluation: TEDS and TEDS-struct over normalised HTML."""
