"""`mssdiag fleet collect | probe | playbook`: many hosts through Ansible, into the audit store
(docs/fleet.md). Ansible runs as a subprocess: nothing of it is imported here."""

import os
import shutil
import sys
import time
from typing import Dict, List, Optional

import typer

from toolkit.output import error, safe

app = typer.Typer(help="Fleet scale on Ansible: collect every host's IP statistics (no Python needed on them) "
                       "and probe from several vantage points, into the audit store (docs/fleet.md).",
                  no_args_is_help=True, context_settings={"help_option_names": ["-h", "--help"]})

INVENTORY_HELP = "Ansible inventory: a file, a directory, or a comma-separated host list (web1,web2,)."


class _Progress:
    """Hosts done / failed on a terminal (stderr), nothing under cron; one stderr line per host
    that failed, naming it and why, wherever stderr goes."""

    def __init__(self, what: str, quiet: bool):
        self.what, self.done, self.failed = what, 0, 0
        self.live = sys.stderr.isatty() and not quiet
        self.shown = False

    def __call__(self, line: Dict) -> None:
        self.done += 1
        if line.get("status") != "ok":
            self.failed += 1
            self.clear()
            why = line.get("detail") or "no detail"
            if line.get("rc") is not None:
                why += f" (exit status {line['rc']})"
            error(f"{line['host']}: {line.get('status')}: {why}")
        if self.live:
            sys.stderr.write(f"\r{self.what}: {self.done} host(s) done, {self.failed} failed")
            sys.stderr.flush()
            self.shown = True

    def clear(self) -> None:
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
            self.shown = False


def _stamp(now: Optional[str]):
    """(epoch, ISO text) of --now, or (None, None); exit 2 for a bad time."""
    if not now:
        return None, None
    from toolkit.audit.store import epoch, iso
    try:
        t = epoch(now)
    except ValueError:
        error(f"--now {now!r}: not an ISO 8601 time like 2026-03-03T09:00:00Z")
        raise typer.Exit(2)
    return t, iso(t)


def _inventory(inventory: str) -> None:
    """A path that does not exist is refused here: Ansible would only warn and match no host."""
    if "," not in inventory and not os.path.exists(inventory):
        error(f"{inventory}: no such file or directory (an inventory file, directory or a host list like web1,web2,)")
        raise typer.Exit(1)


def _folder(keep: Optional[str], when: Optional[float]) -> str:
    if keep:
        name = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(when if when is not None else time.time()))
        folder = os.path.join(keep, name)
        n = 1
        while os.path.exists(folder):
            n += 1
            folder = os.path.join(keep, f"{name}-{n}")
        try:
            os.makedirs(folder)
        except OSError as exc:
            error(f"{keep}: cannot create a directory in it: {exc.strerror or exc}")
            raise typer.Exit(1)
        return folder
    import tempfile           # here, not at the top: every mssdiag run loads this module
    return tempfile.mkdtemp(prefix="mssdiag-fleet-")


def _play(playbook: str, inventory: str, folder: str, kept: bool, extra: Dict, limit, forks, stamp, args,
          progress, what: str):
    """Run the playbook; nothing recorded at all is an error (exit 1) naming Ansible's reason."""
    from toolkit.fleet import runner
    from toolkit.output import Interrupted
    try:
        out = runner.run(playbook, inventory, folder, extra, limit, forks, stamp, args or (), progress)
    except runner.FleetError as exc:
        progress.clear()
        error(str(exc) + (f" (its output: {os.path.join(folder, runner.LOG)})" if kept else ""))
        if not kept:
            shutil.rmtree(folder, ignore_errors=True)
        raise typer.Exit(1)
    except Interrupted:
        progress.clear()
        error(f"{folder}: {progress.done} host(s) recorded before the stop are kept there "
              f"(mssdiag audit run {folder} stores them)")
        raise
    finally:
        progress.clear()
    if not out.lines:
        why = runner.ansible_error(out.log)
        error(f"{inventory}: no {what} matched" + (f" --limit {limit!r}" if limit else "")
              + (f": {why}" if why else "") + (f" (its output: {out.log})" if kept else ""))
        if not kept:
            shutil.rmtree(folder, ignore_errors=True)
        raise typer.Exit(1)
    return out


def _store(folder: str, store: Optional[str], config: Optional[str], when: Optional[float]):
    """The fleet directory into the audit store, as `mssdiag audit run DIR` would."""
    from toolkit.audit import config as cfgmod, run as audit_run
    from toolkit.cli.audit import _reason
    try:
        cfg = cfgmod.load(config)
    except cfgmod.ConfigError as exc:
        error(str(exc))
        raise typer.Exit(2)
    opts = audit_run.Options(paths=[folder], store=store, now=when, argv=sys.argv[1:])
    try:
        return audit_run.run(opts, cfg, error)
    except Exception as exc:
        error(f"{_reason(exc)}; the collected files stay in {folder}")
        raise typer.Exit(1)


def _finish(status, failed: int, jsonl: bool, prom_file: Optional[str], quiet: bool) -> None:
    """The audit's outputs (summary on a terminal, news only under cron), and the exit status:
    3 when a host failed (its stale event is open), else the audit's."""
    from toolkit.cli.audit import _emit
    try:
        _emit(status, False, False, False, jsonl, prom_file, quiet, [])
        code = 0
    except typer.Exit as exc:
        code = exc.exit_code
    if failed and code in (0, 4):
        code = 3
    if code:
        raise typer.Exit(code)


ANSIBLE_ARGS_HELP = "More ansible-playbook arguments, as one string: --ansible-args '-u audit --private-key ~/.ssh/k'."


def _args(text: Optional[str]) -> List[str]:
    import shlex
    try:
        return shlex.split(text or "")
    except ValueError as exc:
        error(f"--ansible-args {text!r}: {exc}")
        raise typer.Exit(2)


def collect(
    inventory: str = typer.Option(..., "--inventory", "-i", metavar="INVENTORY", help=INVENTORY_HELP),
    limit: Optional[str] = typer.Option(None, "--limit", "-l", metavar="PATTERN", help="Only these hosts (an Ansible "
                                        "host pattern: web*, 'legacy:!vos3')."),
    forks: Optional[int] = typer.Option(None, "--forks", "-f", min=1, max=1000, metavar="N", help="Hosts at once "
                                        "(Ansible's forks; default its own, 5)."),
    store: Optional[str] = typer.Option(None, "--store", metavar="FILE", help="The audit store (default "
                                        "$MSSDIAG_STORE, else $XDG_STATE_HOME/mssdiag/audit.sqlite)."),
    config: Optional[str] = typer.Option(None, "--config", metavar="FILE", help="Audit thresholds (as audit run)."),
    keep: Optional[str] = typer.Option(None, "--dir", metavar="DIR", help="Keep each run's files in `DIR/<UTC time>/` "
                                       "(default: a temporary directory, removed once stored)."),
    timeout: int = typer.Option(120, "--timeout", min=1, metavar="S", help="Seconds each host's command may take."),
    jsonl: bool = typer.Option(False, "--jsonl", help="JSON Lines of what was stored (as audit run --jsonl)."),
    prom_file: Optional[str] = typer.Option(None, "--prom-file", metavar="PATH", help="Write a node_exporter textfile."),
    now: Optional[str] = typer.Option(None, "--now", metavar="TIME", help="Stamp the collection with this ISO 8601 "
                                      "time instead of the clock, and judge as of then (replays, tests)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress and no summary on a terminal."),
    ansible_args: Optional[str] = typer.Option(None, "--ansible-args", metavar="ARGS", help=ANSIBLE_ARGS_HELP),
) -> None:
    """Collect every host's IP statistics with Ansible and store them in the audit.

    Runs the shipped collect.yml (ansible.builtin.raw: SSH or WinRM, no Python on the
    hosts; each host's command comes from its mssdiag_os variable: aix, bsd, ftx, hpux,
    linux, solaris, tcpos, vos, windows), then stores the files as `mssdiag audit run
    DIR` does. A host that fails or cannot be reached gets one stderr line and a stale
    event: silence never passes for health.

    Examples:

    ```
    mssdiag fleet collect -i inventory.yml
    mssdiag fleet collect -i inventory.yml --limit 'legacy:!vos3' --forks 50
    mssdiag fleet collect -i hosts.ini --dir /srv/mssdiag/fleet --ansible-args '-u audit --private-key ~/.ssh/audit'
    */15 * * * * mssdiag fleet collect -i /etc/mssdiag/inventory.yml --forks 50 --prom-file /var/lib/node_exporter/mssdiag.prom
    ```

    Exit status: 0 every host stored and OK; 1 nothing collected (Ansible missing or
    failed, no host matched) or the store failed; 2 bad usage; 3 some hosts failed or
    were unreachable (the others are stored); 4 a host has an open warning or critical event.
    """
    from toolkit.fleet import COLLECT_PLAYBOOK
    when, stamp = _stamp(now)
    more = _args(ansible_args)
    _inventory(inventory)
    if prom_file and not os.path.isdir(os.path.dirname(os.path.abspath(prom_file))):
        error(f"--prom-file {prom_file}: its directory does not exist")
        raise typer.Exit(2)
    folder = _folder(keep, when)
    progress = _Progress("fleet collect", quiet)
    outcome = _play(COLLECT_PLAYBOOK, inventory, folder, bool(keep), {"mssdiag_timeout": timeout}, limit, forks,
                    stamp, more, progress, "host")
    status = _store(folder, store, config, when)
    if not keep:
        shutil.rmtree(folder, ignore_errors=True)
    _finish(status, len(outcome.failed), jsonl, prom_file, quiet)


def probe(
    targets: List[str] = typer.Argument(..., metavar="TARGET...", help="Addresses or names every vantage probes."),
    inventory: str = typer.Option(..., "--inventory", "-i", metavar="INVENTORY", help=INVENTORY_HELP),
    vantage: str = typer.Option(..., "--vantage", metavar="GROUP", help="The vantage hosts: an inventory group or "
                                "host pattern."),
    port: Optional[str] = typer.Option(None, "--port", "-p", metavar="N,...", help="TCP port(s) for the MSS check "
                                       "(as mssdiag probe)."),
    limit: Optional[str] = typer.Option(None, "--limit", "-l", metavar="PATTERN", help="Only these vantage hosts."),
    forks: Optional[int] = typer.Option(None, "--forks", "-f", min=1, max=1000, metavar="N", help="Vantages at once."),
    wheels: Optional[str] = typer.Option(None, "--wheels", metavar="DIR", help="Wheels of mssdiag's dependencies "
                                         "for vantages without a package index (pip download -d DIR ...)."),
    venv: Optional[str] = typer.Option(None, "--venv", metavar="PATH", help="Where mssdiag is installed on the "
                                       "vantages (default /opt/mssdiag, or the mssdiag_venv variable)."),
    no_install: bool = typer.Option(False, "--no-install", help="Use the mssdiag already on the vantages "
                                    "(mssdiag_bin, else `<venv>/bin/mssdiag`)."),
    store: Optional[str] = typer.Option(None, "--store", metavar="FILE", help="The audit store (as audit run)."),
    config: Optional[str] = typer.Option(None, "--config", metavar="FILE", help="Audit thresholds (as audit run)."),
    keep: Optional[str] = typer.Option(None, "--dir", metavar="DIR", help="Keep each run's files in `DIR/<UTC time>/`."),
    timeout: int = typer.Option(600, "--timeout", min=1, metavar="S", help="Seconds each vantage's probe may take."),
    as_json: bool = typer.Option(False, "--json", help="JSON Lines: each result with its vantage."),
    now: Optional[str] = typer.Option(None, "--now", metavar="TIME", help="Stamp the results with this ISO 8601 time."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress and no table on a terminal."),
    ansible_args: Optional[str] = typer.Option(None, "--ansible-args", metavar="ARGS", help=ANSIBLE_ARGS_HELP),
) -> None:
    """Probe targets from several vantage hosts and store each path MTU per vantage -> target.

    Builds a wheel of this mssdiag, installs it on each vantage (Linux with Python 3.9+;
    root for DF probes) with the shipped probe.yml, runs `mssdiag probe --json TARGET...`
    there and stores every result under its target, tagged with its vantage: `mssdiag
    audit report` shows the path MTU of each vantage -> target, so routes that fragment
    and routes that do not are told apart.

    Examples:

    ```
    mssdiag fleet probe -i inventory.yml --vantage probes 10.20.0.5 vos1.example.net
    mssdiag fleet probe -i inventory.yml --vantage 'probes:&dc2' --port 23 10.20.0.5
    mssdiag fleet probe -i inventory.yml --vantage probes --wheels /srv/wheels 10.20.0.5
    ```

    Exit status: 0 every vantage probed and no open warning or critical event; 1 no vantage
    could probe; 2 bad usage; 3 some vantages failed (the others are stored); 4 an open
    warning or critical event (a black hole, a path MTU that changed).
    """
    from toolkit.fleet import PROBE_PLAYBOOK, wheel
    when, stamp = _stamp(now)
    more = _args(ansible_args)
    options: List[str] = []
    if port:
        from toolkit.cli.options import parse_ports
        try:
            parse_ports(port)
        except ValueError as exc:
            error(f"--port {port!r}: {exc}")
            raise typer.Exit(2)
        options = ["--port", port]
    if wheels and not os.path.isdir(wheels):
        error(f"--wheels {wheels}: not a directory")
        raise typer.Exit(2)
    _inventory(inventory)
    extra: Dict = {"mssdiag_vantage": vantage, "mssdiag_targets": list(targets), "mssdiag_probe_options": options,
                   "mssdiag_timeout": timeout}
    if venv:
        extra["mssdiag_venv"] = venv
    folder = _folder(keep, when)
    import tempfile
    build = tempfile.mkdtemp(prefix="mssdiag-wheel-")
    try:
        if not no_install:
            extra["mssdiag_bundle"], extra["mssdiag_bundle_id"] = wheel.bundle(build, wheels)
        progress = _Progress("fleet probe", quiet)
        outcome = _play(PROBE_PLAYBOOK, inventory, folder, bool(keep), extra, limit, forks, stamp, more, progress,
                        f"vantage host ({vantage!r})")
    finally:
        shutil.rmtree(build, ignore_errors=True)
    rows = _results(folder, outcome.lines)
    status = _store(folder, store, config, when)
    if not keep:
        shutil.rmtree(folder, ignore_errors=True)
    _show(rows, as_json, quiet)
    if not rows:
        raise typer.Exit(1)
    _finish(status, len(outcome.failed), False, None, True)


def _results(folder: str, lines: List[Dict]) -> List[Dict]:
    """(vantage, result) of every probe a vantage saved, read as the audit reads them."""
    from toolkit.triage import InputError, load_probes
    out = []
    for line in lines:
        if line.get("status") != "ok" or not line.get("file"):
            continue
        try:
            results = load_probes(os.path.join(folder, line["file"]))
        except InputError as exc:
            error(str(exc))
            continue
        out += [{"vantage": line["host"], "taken_at": line.get("time"), "result": r} for r in results]
    return out


def _show(rows: List[Dict], as_json: bool, quiet: bool) -> None:
    if as_json:
        from toolkit.output import json_lines
        json_lines({"vantage": r["vantage"], "taken_at": r["taken_at"], **r["result"].to_dict()} for r in rows)
        return
    if quiet or not sys.stdout.isatty():
        return
    from toolkit.output import table
    fmt = lambda v: "-" if v is None else v  # noqa: E731
    table([[r["vantage"], r["result"].target, r["result"].address or "-", fmt(r["result"].pmtu),
            fmt(r["result"].pmtu_method), "yes" if r["result"].black_hole else "no",
            fmt((r["result"].mss or {}).get("synack")), fmt((r["result"].mss or {}).get("used"))]
           for r in sorted(rows, key=lambda r: (r["result"].target, r["vantage"]))],
          ["vantage", "target", "address", "path MTU", "method", "black hole", "MSS SYN-ACK", "MSS used"])


def playbook(
    which: str = typer.Argument("collect", metavar="[collect|probe]", help="Which playbook."),
    env: bool = typer.Option(False, "--env", help="Print only the environment, as shell lines (eval-able)."),
    copy_to: Optional[str] = typer.Option(None, "--copy-to", metavar="DIR", help="Copy the playbooks and the "
                                          "callback plugin into DIR (an AWX project, a cron controller)."),
) -> None:
    """Print a shipped playbook and the environment to run it by hand (AWX, Tower, cron).

    The callback plugin (callback_plugins/ beside the playbook) is loaded by Ansible on its
    own and writes `<dir>/<host>--<UTC time>.txt` and index.jsonl into $MSSDIAG_FLEET_DIR;
    `mssdiag audit run DIR` stores the directory.

    Examples:

    ```
    mssdiag fleet playbook > collect.yml
    eval "$(mssdiag fleet playbook --env)"; ansible-playbook -i inventory.yml "$MSSDIAG_PLAYBOOK"
    mssdiag fleet playbook --copy-to ~/awx-project/
    ```
    """
    from toolkit.fleet import CALLBACKS, CONTENT, ENV_DIR
    if which not in ("collect", "probe"):
        raise typer.BadParameter(f"{which!r} is not collect or probe", param_hint="[collect|probe]")
    path = os.path.join(CONTENT, f"{which}.yml")
    if copy_to:
        _copy(copy_to)
        return
    lines = [f"export ANSIBLE_CALLBACK_PLUGINS={_quote(CALLBACKS)}",
             f"export {ENV_DIR}=\"${{{ENV_DIR}:-$PWD/mssdiag-fleet/$(date -u +%Y%m%dT%H%M%SZ)}}\"",
             f"export MSSDIAG_PLAYBOOK={_quote(path)}"]
    if env:
        sys.stdout.write("\n".join(lines) + "\n")
        return
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    run = (f"ansible-playbook -i INVENTORY {_quote(path)}" if which == "collect" else
           f"ansible-playbook -i INVENTORY {_quote(path)} -e '{{\"mssdiag_vantage\": \"GROUP\", "
           "\"mssdiag_targets\": [\"TARGET\"], \"mssdiag_bin\": \"/opt/mssdiag/bin/mssdiag\"}'")
    head = ["# Run by hand (the callback plugin sits beside the playbook; ANSIBLE_CALLBACK_PLUGINS is",
            "# only needed when this file is copied elsewhere without callback_plugins/):",
            *[f"#   {x}" for x in lines],
            f"#   {run}",
            f"#   mssdiag audit run \"${ENV_DIR}\"",
            "#"]
    sys.stdout.write("\n".join(head) + "\n" + text)


def _quote(path: str) -> str:
    import shlex
    return shlex.quote(path)


def _copy(dest: str) -> None:
    from toolkit.fleet import CALLBACKS, CALLBACK, COLLECT_PLAYBOOK, PROBE_PLAYBOOK
    try:
        os.makedirs(os.path.join(dest, "callback_plugins"), exist_ok=True)
        for src in (COLLECT_PLAYBOOK, PROBE_PLAYBOOK):
            shutil.copyfile(src, os.path.join(dest, os.path.basename(src)))
        shutil.copyfile(os.path.join(CALLBACKS, f"{CALLBACK}.py"), os.path.join(dest, "callback_plugins",
                                                                               f"{CALLBACK}.py"))
    except OSError as exc:
        error(f"{safe(exc.filename or dest)}: cannot write: {exc.strerror or exc}")
        raise typer.Exit(1)
    if sys.stdout.isatty():
        print(f"copied collect.yml, probe.yml and callback_plugins/{CALLBACK}.py to {dest}")


app.command("collect")(collect)
app.command("probe")(probe)
app.command("playbook")(playbook)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="fleet")
