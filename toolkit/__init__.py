"""mssdiag: diagnose TCP MSS, path MTU and IP fragmentation problems."""

# A constant, not importlib.metadata (~20 ms at start-up); tests/test_startup.py keeps it
# equal to setup.cfg's version and to the installed package's metadata.
__version__ = "0.1.0"
