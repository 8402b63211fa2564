"""`mssdiag collect`: one Linux host's evidence in one case directory or archive (the work:
toolkit/collect.py, toolkit/redact.py)."""

import os
import sys
from typing import Optional

import typer

from toolkit.output import dumps, error, table, write


def collect(
    directory: Optional[str] = typer.Argument(None, metavar="DIR", help="The case directory to write (new, or "
                                              "empty); default: mssdiag-HOST-TIME in the current directory."),
    archive: Optional[str] = typer.Option(None, "--archive", "-a", metavar="FILE.tar.gz", help="Write one "
                                          "archive holding the case directory instead (not overwritten)."),
    redact: bool = typer.Option(False, "--redact", help="Replace every IP address, MAC, host name, interface "
                                "alias and rule comment with a token, the same value with the same token in every "
                                "file; subnets, special ranges and interface names are kept (docs/collect.md)."),
    map_file: Optional[str] = typer.Option(None, "--map", metavar="FILE", help="With --redact: keep the "
                                           "redaction key and the table of tokens in FILE (outside the bundle; "
                                           "keep it, never send it). An existing FILE's key is used again, so "
                                           "every collection made with it gives the same tokens and pairs in "
                                           "triage."),
    timeout: float = typer.Option(20.0, "--timeout", min=1.0, metavar="S", help="Seconds each command may "
                                  "take; one that takes longer is stopped and recorded."),
    as_json: bool = typer.Option(False, "--json", help="Print the manifest (as written) and where it went, as JSON."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress and no summary on a terminal."),
) -> None:
    """Collect this Linux host's MSS, MTU and fragmentation evidence into one case directory.

    Runs, unprivileged and without sending a packet: netstat -s and nstat (the IP counters), ss -tin (every TCP socket's MSS and path MTU), the route caches (learned path MTUs), ip -d link and the route tables (text and JSON), the PMTU sysctls, and iptables-save / nft list ruleset where they may be read. Each output is saved as the file triage recognises, beside a host.toml naming the host and a manifest.json that records each command's exit status and error output, so a missing tool or a permission refused without root shows instead of failing the run.

    With --redact, addresses keep their subnets (routes still match interfaces) and loopback, link-local, multicast and private ranges stay recognisable, so the redacted bundle triages to the same findings. The mapping is never written into the bundle.

    Examples:

      mssdiag collect

      mssdiag collect --redact --archive /tmp/web1.tar.gz

      mssdiag collect case-4711/ --redact --map ~/case-4711.map.json

      mssdiag triage case-4711/

    Exit status: 0 the bundle was written (missing tools included); 1 nothing could be written; 2 bad usage.
    """
    from toolkit import collect as work

    if directory and archive:
        raise typer.BadParameter("give a directory or --archive, not both", param_hint="--archive")
    if map_file and not redact:
        raise typer.BadParameter("a map is the key of a redaction: add --redact", param_hint="--map")
    redactor = _redactor(map_file) if redact else None
    live = sys.stderr.isatty() and not quiet
    try:
        if live:
            with typer.progressbar(length=len(work.COMMANDS) + 2, label="collecting", file=sys.stderr) as bar:
                bundle = work.collect(timeout=timeout, progress=lambda item: bar.update(1))
        else:
            bundle = work.collect(timeout=timeout)
        host, files = work.files_of(bundle, redactor)
        where = archive or directory or work.default_name(host, bundle)
        if map_file:
            if not archive and _inside(map_file, where):
                raise work.CollectError(f"{map_file}: inside the bundle; keep the map elsewhere")
            _save_map(map_file, redactor)
        if archive:
            work.write_archive(files, archive, work.default_name(host, bundle), bundle.started)
        else:
            work.write_directory(files, where)
    except work.CollectError as exc:
        error(str(exc))
        raise typer.Exit(1)
    _report(files, where, bool(archive), as_json, quiet)


def _redactor(map_file: Optional[str]):
    from toolkit import redact

    if not map_file or not os.path.exists(map_file):
        return redact.Redactor()
    try:
        return redact.load_map(map_file)
    except redact.RedactError as exc:
        error(str(exc))
        raise typer.Exit(1)


def _inside(path: str, directory: str) -> bool:
    root, full = os.path.realpath(directory), os.path.realpath(path)
    return os.path.commonpath([root, full]) == root


def _save_map(path: str, redactor) -> None:
    from toolkit import collect as work
    from toolkit.output import write_atomic

    try:
        write_atomic(path, dumps(redactor.to_dict(), indent=1) + "\n", mode=0o600)
    except OSError as exc:
        raise work.CollectError(f"{path}: cannot write the map: {exc.strerror or exc}") from None


def _report(files, where: str, archive: bool, as_json: bool, quiet: bool) -> None:
    import json
    from toolkit import collect as work

    manifest = json.loads(files[work.MANIFEST])
    if as_json:
        manifest["written"] = {"archive" if archive else "directory": os.path.abspath(where)}
        write(sys.stdout, dumps(manifest, indent=1) + "\n")
        return
    if quiet or not sys.stdout.isatty():
        return
    table(([f["file"], f["status"], f["bytes"] if f["file"] in files else None, _detail(f)]
           for f in manifest["files"]), ["file", "status", "bytes", "detail"])
    write(sys.stdout, f"wrote {where}" + (" (redacted)" if manifest["redaction"] else "") + "\n")


def _detail(item: dict) -> str:
    text = item["note"] or (item["stderr"].splitlines() or [""])[0]
    return text if len(text) <= 70 else text[:67] + "..."


def register(app: typer.Typer) -> None:
    app.command("collect")(collect)
