"""mssdiag: diagnose TCP MSS, path MTU and IP fragmentation problems."""


def __getattr__(name: str):
    # The version comes from the installed package's metadata, read only when asked for
    # (importlib.metadata costs ~20 ms at start-up).
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version
        try:
            value = version("mssdiag")
        except PackageNotFoundError:  # running from a source tree that is not installed
            value = "0+unknown"
        globals()["__version__"] = value
        return value
    raise AttributeError(name)
