"""Pure-Python core: geometry, grid reconstruction, cell text, HTML, serialisations.

Imports neither torch nor celery (a test enforces it): it is a pure function of the
structure objects and words, so it can be replayed and tested without models.
"""
