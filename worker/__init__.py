"""tablesight: tables out of scanned PDFs, intact."""

__version__ = "0.1.0"
