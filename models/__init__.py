"""Model wrappers and weight resolution: the only layer that imports torch.

Images go in, plain data (labels, scores, pixel boxes) comes out. Import submodules
directly (`models.table_transformer`, `models.weights`); this package stays light so that
importing it costs nothing until a model is actually needed.
"""
