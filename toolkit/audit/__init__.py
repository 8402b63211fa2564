"""Periodic audits: every host's counters, probes and findings over time in one SQLite store,
change events, and the formats monitoring systems read (Nagios/Icinga, Checkmk, Prometheus
textfile, JSON Lines). docs/audit.md is the user's guide.

    ingest.py   sources (dump files, directories with a fleet index.jsonl, --local, probes)
                -> the host model (toolkit/hosts.py) -> store
    store.py    SQLite: schema and migrations, compressed raw text, deltas, queries
    events.py   per-hour increases against thresholds -> events opened, updated, cleared
    status.py   the one data model every output reads
    nagios.py, checkmk.py, prom.py, jsonl.py   the outputs
    report.py   `mssdiag audit report`
    run.py      one cron-safe run: lock, gather, store, evaluate, emit
"""
