"""`mssdiag audit run | report | reparse`: periodic audits with a history (docs/audit.md)."""

import os
import signal
import sys
from typing import List, Optional

import typer
from typer.core import TyperCommand

from toolkit.output import error

app = typer.Typer(help="Periodic audits: a history of every host's counters, probes and findings, change "
                       "events, and Nagios/Icinga, Checkmk, Prometheus and JSON Lines outputs (docs/audit.md).",
                  no_args_is_help=True, context_settings={"help_option_names": ["-h", "--help"]})

UNKNOWN = 3


class _PluginCommand(TyperCommand):
    """With --nagios (or --checkmk) a usage error is the monitoring plugin's UNKNOWN (exit 3,
    one line on stdout), never click's exit 2."""

    def parse_args(self, ctx, args):
        nagios = "--nagios" in args         # click consumes `args` while it parses
        plugin = nagios or "--checkmk" in args
        usage_error = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")
        try:
            return super().parse_args(ctx, args)
        except usage_error as exc:
            if not plugin:
                raise
            _plugin_exit(nagios, f"usage: {exc.format_message()} (see 'mssdiag audit run --help')")


def _plugin_exit(nagios: bool, reason: str) -> None:
    from toolkit.audit import nagios as nag
    reason = " ".join(str(reason).split())
    if nagios:
        sys.stdout.write(nag.unknown(reason))
    else:
        sys.stdout.write(f'3 "mssdiag" - {reason}\n')
    sys.stdout.flush()
    raise SystemExit(UNKNOWN)


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def run(
    paths: List[str] = typer.Argument(None, metavar="PATH...", help="Dump files, directories (a fleet directory "
                                      "with index.jsonl too), saved `probe --json` files, or - for stdin."),
    local: bool = typer.Option(False, "--local", help="This host's own counters (Linux: /proc/net/snmp{,6} of the "
                               "current network namespace; elsewhere netstat -s)."),
    probe: List[str] = typer.Option([], "--probe", metavar="TARGET", help="Probe this live target (path MTU, black "
                                    "hole, MSS); repeatable or comma-separated. Needs root for DF probes."),
    port: Optional[str] = typer.Option(None, "--port", "-p", metavar="N,...", help="TCP port(s) for the live MSS check."),
    send: Optional[str] = typer.Option(None, "--send", metavar="TEXT", help="Sent to live ports that stay silent."),
    host: Optional[str] = typer.Option(None, "--host", metavar="NAME", help="Every input is this host (with no "
                                       "input: judge only this host of the store)."),
    store: Optional[str] = typer.Option(None, "--store", metavar="FILE", help="The SQLite store (default "
                                        "$MSSDIAG_STORE, else $XDG_STATE_HOME/mssdiag/audit.sqlite)."),
    config: Optional[str] = typer.Option(None, "--config", metavar="FILE", help="Thresholds and event states "
                                         "(TOML; default $MSSDIAG_AUDIT_CONFIG, else ~/.config/mssdiag/audit.toml)."),
    warning: List[str] = typer.Option([], "--warning", "-w", metavar="METRIC=RANGE", help="Warning threshold for "
                                      "every host, e.g. reasm_fails_per_h=5 (monitoring-plugins range)."),
    critical: List[str] = typer.Option([], "--critical", "-c", metavar="METRIC=RANGE", help="Critical threshold."),
    nagios: bool = typer.Option(False, "--nagios", help="Nagios/Icinga plugin: one line with perfdata, exit 0-3."),
    checkmk: bool = typer.Option(False, "--checkmk", help="Checkmk local-check lines, one per host."),
    jsonl: bool = typer.Option(False, "--jsonl", help="JSON Lines: new snapshots, probes, changed events, hosts."),
    prom_file: Optional[str] = typer.Option(None, "--prom-file", metavar="PATH", help="Write a node_exporter "
                                            "textfile (*.prom), atomically."),
    keep: Optional[str] = typer.Option(None, "--keep", metavar="DURATION", help="Forget history older than this, "
                                       "e.g. 90d (each host keeps its latest snapshot)."),
    wait: str = typer.Option("60s", "--wait", metavar="DURATION", help="How long to wait for another run's lock."),
    timeout: Optional[str] = typer.Option(None, "--timeout", metavar="DURATION", help="Give up after this long "
                                          "(default 50s with --nagios/--checkmk, else none)."),
    now: Optional[str] = typer.Option(None, "--now", metavar="TIME", help="Judge as if it were this ISO 8601 time "
                                      "(replaying old dumps; tests)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary on a terminal."),
) -> None:
    """One cron-safe audit run: gather, store, judge, emit.

    Reads dumps (a cron log of `date; netstat -s`, files from customers, a fleet directory
    of `<host>--<UTC time>.txt` files with its index.jsonl), this host's counters
    (--local) and probes (saved `probe --json` files, live --probe), stores what is new
    (running it twice stores nothing twice), computes each interval's increase per hour
    the way `diff` does (a reboot is a reset, never a spike), and opens, updates and clears
    events against thresholds. With no input it judges what the store holds (stale hosts).

    Examples:

    ```
    mssdiag audit run /var/log/netstat/ --prom-file /var/lib/prometheus/node-exporter/mssdiag.prom
    mssdiag audit run --local --nagios -w reasm_fails_per_h=1 -c reasm_fails_per_h=10
    mssdiag audit run fleet/2026-03-03T0900Z/ --checkmk
    mssdiag audit run --probe 192.0.2.10 --port 23 --jsonl >> audit.jsonl
    */15 * * * * mssdiag audit run --local --keep 90d --prom-file /var/lib/node_exporter/mssdiag.prom
    ```

    Exit status without --nagios/--checkmk: 0 all OK; 1 nothing could be read, or the store
    or lock failed; 2 bad usage; 3 some inputs could not be read; 4 a host has an open
    warning or critical event. With --nagios/--checkmk: 0 OK, 1 WARNING, 2 CRITICAL,
    3 UNKNOWN (usage errors, internal errors, timeouts, an unusable store).
    """
    plugin = nagios or checkmk
    collected: List[str] = []
    say = (lambda m: collected.append(m)) if plugin else error

    def usage(message: str) -> None:
        if plugin:
            _plugin_exit(nagios, f"usage: {message}")
        error(message)
        raise typer.Exit(2)

    if sum((nagios, checkmk, jsonl)) > 1:
        usage("--nagios, --checkmk and --jsonl each print to stdout: choose one")
    from toolkit.audit import config as cfgmod
    from toolkit.audit.ranges import RangeError, duration
    try:
        keep_s = duration(keep) if keep else None
        wait_s = duration(wait)
        timeout_s = duration(timeout) if timeout else (50.0 if plugin else None)
    except RangeError as exc:
        usage(str(exc))
    levels = {}
    for level, items in (("warning", warning), ("critical", critical)):
        for item in items:
            metric, sep, rng = item.partition("=")
            if not sep:
                usage(f"--{level} {item!r}: give METRIC=RANGE, e.g. reasm_fails_per_h=10")
            levels.setdefault(metric.strip(), {})[level] = rng.strip()
    try:
        cfg = cfgmod.override(cfgmod.load(config), levels)
    except cfgmod.ConfigError as exc:
        usage(str(exc))
    when = None
    if now:
        from toolkit.audit.store import epoch
        try:
            when = epoch(now)
        except ValueError:
            usage(f"--now {now!r}: not an ISO 8601 time like 2026-03-03T09:00:00Z")
    targets = [t.strip() for item in probe for t in item.split(",") if t.strip()]
    ports, text = (), None
    if port:
        from toolkit.cli.options import parse_ports
        try:
            ports = tuple(parse_ports(port))
        except ValueError as exc:
            usage(f"--port {port!r}: {exc}")
    if send is not None:
        import codecs
        try:
            text = codecs.decode(send, "unicode_escape")
        except UnicodeDecodeError as exc:
            usage(f"--send {send!r}: bad escape ({exc.reason})")
    if prom_file and not os.path.isdir(os.path.dirname(os.path.abspath(prom_file))):
        usage(f"--prom-file {prom_file}: its directory does not exist")

    from toolkit.audit import run as runner
    opts = runner.Options(paths=list(paths or []), store=store, host=host, local=local, targets=targets, ports=ports,
                          send_text=text, keep_s=keep_s, wait_s=min(wait_s, timeout_s * 0.8) if timeout_s else wait_s,
                          now=when, argv=sys.argv[1:])
    if timeout_s:
        signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        status = runner.run(opts, cfg, say)
    except _Timeout:
        _fail(plugin, nagios, f"timed out after {timeout_s:g} s")
    except Exception as exc:
        _fail(plugin, nagios, _reason(exc))
    finally:
        if timeout_s:
            signal.setitimer(signal.ITIMER_REAL, 0)
    _emit(status, plugin, nagios, checkmk, jsonl, prom_file, quiet, collected)


def _reason(exc: Exception) -> str:
    from toolkit.audit.files import LockTimeout
    from toolkit.audit.local import LocalError
    from toolkit.audit.store import StoreError
    import sqlite3
    if isinstance(exc, (StoreError, LockTimeout, LocalError)):
        return str(exc)
    if isinstance(exc, sqlite3.DatabaseError):
        return f"store: {exc}"
    if isinstance(exc, OSError):
        return f"{getattr(exc, 'filename', None) or 'file'}: {exc.strerror or exc}"
    return f"internal error: {type(exc).__name__}: {exc}"


def _fail(plugin: bool, nagios: bool, reason: str) -> None:
    if plugin:
        _plugin_exit(nagios, reason)
    error(reason)
    raise typer.Exit(1)


def _emit(status, plugin: bool, nagios: bool, checkmk: bool, jsonl: bool, prom_file: Optional[str], quiet: bool,
          collected: List[str]) -> None:
    from toolkit.audit import checkmk as cmk, jsonl as jl, nagios as nag, prom
    from toolkit.audit.model import UNKNOWN as S_UNKNOWN, WARNING
    from toolkit.audit.run import TOOL
    if prom_file:
        try:
            prom.write(prom_file, status)
        except OSError as exc:
            _fail(plugin, nagios, f"{prom_file}: cannot write: {exc.strerror or exc}")
    nothing = not status.read_inputs and status.failed_inputs
    if nagios:
        if nothing:
            _plugin_exit(True, f"nothing could be read: {collected[0] if collected else status.failed_inputs[0]}")
        text = nag.render(status)
        if collected and status.failed_inputs:
            head, sep, perf = text.partition(" | ")
            text = f"{head} [{collected[0]}]{sep}{perf}" if sep else text
        sys.stdout.write(text)
        sys.stdout.flush()
        raise SystemExit(status.state)
    if checkmk:
        if nothing:
            _plugin_exit(False, f"nothing could be read: {collected[0] if collected else status.failed_inputs[0]}")
        sys.stdout.write(cmk.render(status))
        sys.stdout.flush()
        raise SystemExit(0)
    if jsonl:
        sys.stdout.write(jl.render(status, TOOL))
        sys.stdout.flush()
    elif sys.stdout.isatty() and not quiet:
        _summary(status)
    else:
        for e in status.changed_events:
            if e["state"] == "open" and e["severity"] != "info" and e["count"] == 1:
                print(f"{e['host']}: {e['event']}{' ' + e['key'] if e['key'] else ''} opened ({e['severity']}): "
                      f"{e['detail']}")
        sys.stdout.flush()
    if nothing:
        raise typer.Exit(1)
    if status.failed_inputs:
        raise typer.Exit(3)
    if any(h.state >= WARNING for h in status.hosts if h.state != S_UNKNOWN):
        raise typer.Exit(4)


def _summary(status) -> None:
    from toolkit.audit.model import STATE_NAMES
    from toolkit.audit.store import iso
    from toolkit.output import table
    rows = []
    for h in status.hosts:
        evs = ", ".join(f"{e['event']}{'(' + e['key'] + ')' if e['key'] else ''}" for e in h.events) or "-"
        m = h.metrics
        rows.append([h.name, STATE_NAMES[h.state], h.os, h.snapshots, iso(h.last_t),
                     m.get("reasm_reqds_per_h"), m.get("reasm_fails_per_h"), m.get("frag_fails_per_h"), evs])
    table(rows, ["host", "state", "os", "snapshots", "last snapshot", "reasm/h", "fails/h", "fragfails/h",
                 "open events"])
    print(f"{len(status.new_snapshots)} new snapshot(s), {len(status.new_probes)} probe(s), "
          f"{len(status.changed_events)} event change(s); store {status.store}")


def report(
    store: Optional[str] = typer.Option(None, "--store", metavar="FILE", help="The SQLite store (as audit run)."),
    since: str = typer.Option("7d", "--since", metavar="DURATION|TIME", help="From this long ago (7d, 12h) or "
                              "this ISO 8601 time."),
    host: List[str] = typer.Option([], "--host", metavar="NAME", help="Only this host (repeatable)."),
    fmt: str = typer.Option("table", "--format", "-f", help="table, json, md or html (charts)."),
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="FILE", help="Write here (atomically) "
                                         "instead of stdout."),
) -> None:
    """Per host: events and the per-hour time series of the counters and the path MTU.

    Examples:

    ```
    mssdiag audit report --since 7d
    mssdiag audit report --host web1 --format md
    mssdiag audit report --since 30d --format html -o audit.html
    ```

    Exit status: 0 report written; 1 the store cannot be read; 2 bad usage.
    """
    from toolkit.audit import report as rep
    from toolkit.audit.ranges import RangeError, duration
    from toolkit.audit.store import Store, StoreError, epoch, resolve
    import time as _time
    if as_json:
        fmt = "json"
    if fmt not in rep.FORMATS:
        raise typer.BadParameter(f"{fmt!r} is not one of {', '.join(rep.FORMATS)}", param_hint="--format")
    try:
        since_t = _time.time() - duration(since)
    except RangeError:
        try:
            since_t = epoch(since)
        except ValueError:
            raise typer.BadParameter(f"{since!r} is neither a duration (7d, 12h) nor an ISO 8601 time",
                                     param_hint="--since")
    from toolkit.output import Interrupted, OutputClosed, _flush, write, write_atomic
    path = resolve(store)
    try:
        with Store(path, create=False) as st:
            pieces = rep.render(st, since_t, host or None, fmt)       # written as they come: bounded memory
            if output:
                write_atomic(output, lambda fh: fh.writelines(pieces), 0o644)
            else:
                for piece in pieces:
                    write(sys.stdout, piece)
                _flush(sys.stdout)
    except (OutputClosed, Interrupted):
        raise
    except StoreError as exc:
        error(str(exc))
        raise typer.Exit(1)
    except OSError as exc:          # reading the store raises sqlite3 errors: this is the output
        if not output:
            raise                   # stdout: the CLI's one handler for every command's output
        error(f"{output}: cannot write: {exc.strerror or exc}")
        raise typer.Exit(1)
    except Exception as exc:
        error(_reason(exc))
        raise typer.Exit(1)


def reparse(
    store: Optional[str] = typer.Option(None, "--store", metavar="FILE", help="The SQLite store (as audit run)."),
    everything: bool = typer.Option(False, "--all", help="Re-read every snapshot, not only those an older parser read."),
    host: List[str] = typer.Option([], "--host", metavar="NAME", help="Only this host (repeatable)."),
    wait: str = typer.Option("60s", "--wait", metavar="DURATION", help="How long to wait for a run's lock."),
) -> None:
    """Re-read stored snapshots from their raw text with today's parsers (after a parser fix).

    Counters, OS, format and warnings are replaced, the deltas recomputed and the events
    that derive from them judged again from the start; stale events and probes stay.

    Examples:

    ```
    mssdiag audit reparse
    mssdiag audit reparse --all --host vos1
    ```

    Exit status: 0 done; 1 the store cannot be used; 2 bad usage; 3 some snapshots could
    not be read again (they keep their old values).
    """
    from toolkit.audit import reparse as rp
    from toolkit.audit.files import LockTimeout, RunLock
    from toolkit.audit.ranges import RangeError, duration
    from toolkit.audit.store import Store, StoreError, resolve
    try:
        wait_s = duration(wait)
    except RangeError as exc:
        raise typer.BadParameter(str(exc), param_hint="--wait")
    path = resolve(store)
    try:
        with RunLock(path + ".lock", wait_s), Store(path, create=False) as st:
            from toolkit.audit import config as cfgmod
            done = rp.reparse(st, cfgmod.load(None), everything, host or None, error)
    except (StoreError, LockTimeout) as exc:
        error(str(exc))
        raise typer.Exit(1)
    except Exception as exc:
        error(_reason(exc))
        raise typer.Exit(1)
    if sys.stdout.isatty():
        print(f"re-read {done.read} snapshot(s): {done.changed} changed, {done.failed} unreadable; "
              f"{done.hosts} host(s) re-judged")
    if done.failed:
        raise typer.Exit(3)


app.command("run", cls=_PluginCommand)(run)
app.command("report")(report)
app.command("reparse")(reparse)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="audit")
