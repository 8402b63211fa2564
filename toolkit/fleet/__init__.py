"""Fleet scale on Ansible (docs/fleet.md): collect every host's IP statistics and probe from
several vantage points, straight into the audit store.

The Ansible content ships as package data in `ansible/`: `collect.yml` (ansible.builtin.raw,
no Python on the hosts; the per-OS commands come from toolkit/platforms), `probe.yml`
(`mssdiag probe --json` on vantage hosts) and the `mssdiag_fleet` callback plugin that
writes `<dir>/<host>--<UTC time>.txt|json` and `index.jsonl`, the directory `mssdiag audit
run` reads. Nothing here imports Ansible: ansible-playbook runs as a subprocess.
"""
from __future__ import annotations

import os

CONTENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ansible")
COLLECT_PLAYBOOK = os.path.join(CONTENT, "collect.yml")
PROBE_PLAYBOOK = os.path.join(CONTENT, "probe.yml")
CALLBACKS = os.path.join(CONTENT, "callback_plugins")
CALLBACK = "mssdiag_fleet"
ENV_DIR = "MSSDIAG_FLEET_DIR"        # where the callback writes
ENV_TIME = "MSSDIAG_FLEET_TIME"      # stamp every file with this UTC time instead of the clock
INDEX = "index.jsonl"                # the callback's line per host and run, beside the dumps
