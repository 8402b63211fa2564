"""A wheel of this very mssdiag, for vantage hosts (`mssdiag fleet probe` installs it there).

Built from the installed packages (`toolkit`, `parsers`, their package data), so it works
from an ordinary install and from an editable checkout alike, offline, without setuptools.
The wheel is reproducible: the same code gives the same bytes, so its digest says whether
a vantage already has it.
"""
from __future__ import annotations

import base64
import hashlib
import os
import zipfile
from typing import Iterator, List, Optional, Tuple

import parsers
import toolkit

PACKAGES = (toolkit, parsers)
TAG = "py3-none-any"
_EPOCH = (1980, 1, 1, 0, 0, 0)
ENTRY_POINTS = "[console_scripts]\nmssdiag = toolkit.entry:main\n"


def _files() -> Iterator[Tuple[str, str]]:
    """(archive name, path) of every module and package-data file, in a stable order."""
    for package in PACKAGES:
        root = os.path.dirname(os.path.abspath(package.__file__))
        base = os.path.dirname(root)
        for folder, dirs, names in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
            for name in sorted(names):
                if name.endswith((".pyc", ".pyo")) or name.startswith("."):
                    continue
                path = os.path.join(folder, name)
                yield os.path.relpath(path, base).replace(os.sep, "/"), path


def _metadata(version: str) -> str:
    """METADATA with the installed distribution's requirements (dist-info or egg-info alike)."""
    from importlib import metadata
    lines = ["Metadata-Version: 2.1", "Name: mssdiag", f"Version: {version}"]
    try:
        dist = metadata.distribution("mssdiag")
    except metadata.PackageNotFoundError:
        return "\n".join(lines) + "\n"
    meta = dist.metadata
    for key in ("Summary", "License", "Requires-Python"):
        if meta.get(key):
            lines.append(f"{key}: {meta[key]}")
    for extra in meta.get_all("Provides-Extra") or []:
        lines.append(f"Provides-Extra: {extra}")
    for req in dist.requires or []:
        lines.append(f"Requires-Dist: {req}")
    return "\n".join(lines) + "\n"


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build(folder: str) -> str:
    """Write `mssdiag-<version>-py3-none-any.whl` into folder; returns its path."""
    version = toolkit.__version__
    info = f"mssdiag-{version}.dist-info"
    path = os.path.join(folder, f"mssdiag-{version}-{TAG}.whl")
    record: List[str] = []
    tmp = path + ".part"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as whl:
        def add(name: str, data: bytes) -> None:
            entry = zipfile.ZipInfo(name, _EPOCH)
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            whl.writestr(entry, data)
            record.append(f"{name},{_digest(data)},{len(data)}")

        for name, src in _files():
            with open(src, "rb") as fh:
                add(name, fh.read())
        add(f"{info}/METADATA", _metadata(version).encode())
        add(f"{info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: mssdiag fleet\nRoot-Is-Purelib: true\nTag: {TAG}\n"
            .encode())
        add(f"{info}/entry_points.txt", ENTRY_POINTS.encode())
        add(f"{info}/top_level.txt", "".join(f"{p.__name__}\n" for p in PACKAGES).encode())
        name = f"{info}/RECORD"
        entry = zipfile.ZipInfo(name, _EPOCH)
        entry.external_attr = 0o644 << 16
        whl.writestr(entry, "\n".join(record + [f"{name},,"]) + "\n")
    os.replace(tmp, path)
    return path


def digest(path: str) -> str:
    """Sixteen hex digits of the file's SHA-256: what a vantage compares."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


def bundle(folder: str, dependencies: Optional[str] = None) -> Tuple[str, str]:
    """A tar of this mssdiag's wheel and, for vantages without a package index, the wheels in
    `dependencies` (made with `pip download -d DIR ...`): one file to copy per vantage.
    Returns (path, id): the id (its digest) tells whether a vantage already has it."""
    import tarfile
    members = [build(folder)]
    if dependencies:
        members += sorted(os.path.join(dependencies, n) for n in os.listdir(dependencies)
                          if n.endswith(".whl") and not n.startswith("mssdiag-"))
    tmp = os.path.join(folder, "bundle.tar.part")
    with tarfile.open(tmp, "w", format=tarfile.USTAR_FORMAT) as tar:
        for path in members:
            info = tar.gettarinfo(path, arcname=os.path.basename(path))
            info.mtime, info.uid, info.gid, info.uname, info.gname, info.mode = 0, 0, 0, "", "", 0o644
            with open(path, "rb") as fh:
                tar.addfile(info, fh)
    ident = digest(tmp)
    path = os.path.join(folder, f"mssdiag-bundle-{ident}.tar")
    os.replace(tmp, path)
    return path, ident
