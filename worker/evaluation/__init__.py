"""Quality measurement: ground-truth tables, oracle structure objects, noise and TEDS.

Nothing here is imported by the pipeline; it measures the core (grid reconstruction and
HTML) against third-party ground truth without needing model weights (docs/architecture.md, 'Evaluation').
"""
