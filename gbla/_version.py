"""The version of gbla, in one place (the package and the bench records read it)."""

__version__ = "0.1.0"
