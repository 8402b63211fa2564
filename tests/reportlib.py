"""A small audit store built by the real `mssdiag audit run` for the report tests: several
OSes from fixtures/netstat/, a host with fragmentation, reassembly failures and a reboot over
three hours, a host whose name needs escaping in every format, a host with only one
snapshot, and saved probe results with a path MTU change."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from auditlib import ROOT, STEP, T0, cron_log, iso, mssdiag

FIX = ROOT / "fixtures" / "netstat"
NOW = T0 + 12 * STEP + STEP / 3


def build(folder: Path) -> Path:
    store = folder / "report.sqlite"
    dumps = folder / "dumps"
    dumps.mkdir()
    shutil.copy(FIX / "linux/netns-cron-date-netstat-s.txt", dumps / "web1-2026-11-22.log")
    shutil.copy(FIX / "vos/seed_fig6a.txt", dumps / "vos1-before.txt")
    shutil.copy(FIX / "hpux/seed_fig6f.txt", dumps / "hpux1-0900.txt")
    for f in dumps.iterdir():                       # an undated dump is as old as its file
        os.utime(f, (NOW.timestamp() - 60, NOW.timestamp() - 60))
    _run(str(dumps), "--store", str(store), "--now", iso(NOW))
    steps, v, fails = [], 0, 0
    for i in range(12):
        v += (i % 4) * 30
        fails += 15 if i in (5, 6) else 0
        if i == 8:                                      # rebooted: every counter lower
            v, fails = 4, 0
        steps.append(dict(ReasmReqds=v, ReasmOKs=v // 2, ReasmFails=fails, InReceives=1000 * (i + 1) + v))
    log = folder / "web2.log"
    log.write_text(cron_log(steps))
    _run(str(log), "--host", "web2", "--store", str(store), "--now", iso(NOW))
    odd = folder / "odd.log"
    odd.write_text(cron_log([dict(ReasmReqds=40 * i, ReasmOKs=20 * i, InReceives=1000 * (i + 1)) for i in range(6)],
                            step=STEP * 2))
    _run(str(odd), "--host", "app<1>|`x`", "--store", str(store), "--now", iso(NOW))
    one = folder / "lone.log"
    one.write_text(cron_log([dict(ReasmReqds=5, ReasmOKs=2)], start=T0 + 3 * STEP))
    _run(str(one), "--host", "lone", "--store", str(store), "--now", iso(NOW))
    probe = json.loads((ROOT / "fixtures/cases/demo/linux-host/probe-dtn-peer.json").read_text())[0]
    for k, pmtu in enumerate(((probe["pmtu"] or 1500), (probe["pmtu"] or 1500) - 100)):
        p = folder / f"p{k}.json"
        p.write_text(json.dumps(dict(probe, pmtu=pmtu)))
        when = (T0 + (4 + 6 * k) * STEP).timestamp()          # a saved result is as old as its file
        os.utime(p, (when, when))
        _run(str(p), "--host", "web2", "--store", str(store), "--now", iso(NOW + k * STEP))
    return store


def _run(*args: str) -> None:
    done = mssdiag("audit", "run", *args)
    assert done.returncode in (0, 1, 4), done.stderr


SINCES = {"cut": iso(T0 + 3 * STEP), "all": "2000-01-01T00:00:00Z"}
