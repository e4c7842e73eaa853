"""The compiler's version (part of every cache key and of ``op.json``)."""

__version__ = "0.1.0"
