"""mssdiag: diagnose TCP MSS, path MTU and IP fragmentation problems."""

# tests/test_startup.py keeps it equal to setup.cfg's version and the installed package's.
__version__ = "0.1.0"
