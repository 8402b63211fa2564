"""mssdiag: diagnose TCP MSS, path MTU and IP fragmentation problems."""
from importlib.metadata import PackageNotFoundError, version as _version

try:
    __version__ = _version("mssdiag")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"
