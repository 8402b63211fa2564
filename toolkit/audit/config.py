"""The audit's TOML config: thresholds and event states per host or group, with defaults.

    interval = "15m"              # expected time between snapshots (default: each host's
                                  # median interval); a host is stale after
    stale_intervals = 3           # ... this many intervals without a snapshot

    [thresholds]                  # every host; monitoring-plugins ranges, "" switches one off
    reasm_fails_per_h = { warning = "0", critical = "10" }

    [states]                      # state of the events that have no threshold
    stale = "critical"            # info | warning | critical

    [groups.legacy]               # hosts matching these shell patterns (first group wins)
    hosts = ["vos*", "hpux-*"]
    interval = "1h"
    thresholds.reasm_reqds_per_h = { warning = "100", critical = "1000" }

    [hosts.web1]                  # one host: overrides its group and the defaults
    thresholds.frag_fails_per_h = { warning = "5" }

Unknown keys, metrics, events and bad ranges are errors naming the file and the key: a
typo must never silently keep a default.
"""
from __future__ import annotations

import fnmatch
import os
import tomllib
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from toolkit.audit.model import (DEFAULT_STALE_INTERVALS, DEFAULT_STATES, DEFAULT_THRESHOLDS, METRICS,
                                 SEVERITIES)
from toolkit.audit.ranges import Range, RangeError, duration, parse_range

ENV = "MSSDIAG_AUDIT_CONFIG"


class ConfigError(ValueError):
    """A config file or threshold that cannot be used; the message names it and the key."""


Pair = Tuple[Optional[Range], Optional[Range]]     # (warning, critical)


@dataclass
class Settings:
    """What applies to one host."""
    thresholds: Dict[str, Pair] = field(default_factory=dict)
    states: Dict[str, str] = field(default_factory=lambda: dict(DEFAULT_STATES))
    interval: Optional[float] = None
    stale_intervals: float = DEFAULT_STALE_INTERVALS
    group: Optional[str] = None


@dataclass
class _Layer:
    thresholds: Dict[str, Dict[str, Optional[Range]]] = field(default_factory=dict)
    states: Dict[str, str] = field(default_factory=dict)
    interval: Optional[float] = None
    stale_intervals: Optional[float] = None


@dataclass
class Config:
    source: str = "built-in defaults"
    base: _Layer = field(default_factory=_Layer)
    groups: List[Tuple[str, List[str], _Layer]] = field(default_factory=list)
    hosts: Dict[str, _Layer] = field(default_factory=dict)
    _cache: Dict[str, Settings] = field(default_factory=dict)

    def group_of(self, host: str) -> Optional[Tuple[str, _Layer]]:
        for name, patterns, layer in self.groups:
            if any(fnmatch.fnmatchcase(host.lower(), p.lower()) for p in patterns):
                return name, layer
        return None

    def for_host(self, host: str) -> Settings:
        cached = self._cache.get(host)
        if cached is not None:
            return cached
        s = Settings()
        table: Dict[str, Dict[str, Optional[Range]]] = {
            m: {k: parse_range(v) for k, v in d.items()} for m, d in DEFAULT_THRESHOLDS.items()}
        layers = [self.base]
        g = self.group_of(host)
        if g:
            s.group = g[0]
            layers.append(g[1])
        own = self.hosts.get(host)         # the host's own table, spelt as it is, else without case
        if own is None:
            own = next((layer for name, layer in self.hosts.items() if name.lower() == host.lower()), None)
        if own is not None:
            layers.append(own)
        for layer in layers:
            for metric, levels in layer.thresholds.items():
                table.setdefault(metric, {}).update(levels)
            s.states.update(layer.states)
            if layer.interval is not None:
                s.interval = layer.interval
            if layer.stale_intervals is not None:
                s.stale_intervals = layer.stale_intervals
        s.thresholds = {m: (d.get("warning"), d.get("critical")) for m, d in table.items()}
        self._cache[host] = s
        return s


def _layer(where: str, data: dict, allowed: Tuple[str, ...]) -> _Layer:
    layer = _Layer()
    for key in data:
        if key not in allowed:
            raise ConfigError(f"{where}: unknown key {key!r} (known: {', '.join(allowed)})")
    try:
        if "interval" in data:
            layer.interval = duration(data["interval"])
        if "stale_intervals" in data:
            v = data["stale_intervals"]
            if not isinstance(v, (int, float)) or isinstance(v, bool) or v <= 0:
                raise ConfigError(f"{where}.stale_intervals: {v!r} is not a number above zero")
            layer.stale_intervals = float(v)
    except RangeError as exc:
        raise ConfigError(f"{where}.interval: {exc}") from None
    thresholds = data.get("thresholds", {})
    if not isinstance(thresholds, dict):
        raise ConfigError(f"{where}.thresholds: must be a table")
    for metric, levels in thresholds.items():
        if metric not in METRICS:
            raise ConfigError(f"{where}.thresholds.{metric}: unknown metric (known: {', '.join(METRICS)})")
        if isinstance(levels, str):
            levels = {"warning": levels}
        if not isinstance(levels, dict):
            raise ConfigError(f"{where}.thresholds.{metric}: give {{ warning = \"RANGE\", critical = \"RANGE\" }}")
        out: Dict[str, Optional[Range]] = {}
        for level, text in levels.items():
            if level not in ("warning", "critical"):
                raise ConfigError(f"{where}.thresholds.{metric}.{level}: unknown level (warning, critical)")
            try:
                out[level] = parse_range(text) if str(text).strip() else None
            except RangeError as exc:
                raise ConfigError(f"{where}.thresholds.{metric}.{level}: {exc}") from None
        layer.thresholds[metric] = out
    states = data.get("states", {})
    if not isinstance(states, dict):
        raise ConfigError(f"{where}.states: must be a table")
    for event, state in states.items():
        if event not in DEFAULT_STATES:
            raise ConfigError(f"{where}.states.{event}: not an event with a fixed state "
                              f"({', '.join(DEFAULT_STATES)}; the others follow their thresholds)")
        if state not in SEVERITIES:
            raise ConfigError(f"{where}.states.{event}: {state!r} is not one of {', '.join(SEVERITIES)}")
        layer.states[event] = state
    return layer


def parse(text: str, source: str) -> Config:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not TOML: {exc}") from None
    cfg = Config(source=source)
    cfg.base = _layer(source, {k: v for k, v in data.items() if k not in ("groups", "hosts")},
                      ("interval", "stale_intervals", "thresholds", "states"))
    for name, body in (data.get("groups") or {}).items():
        if not isinstance(body, dict):
            raise ConfigError(f"{source}: groups.{name}: must be a table")
        patterns = body.get("hosts")
        if not isinstance(patterns, list) or not patterns or not all(isinstance(p, str) for p in patterns):
            raise ConfigError(f"{source}: groups.{name}.hosts: give a list of host name patterns, e.g. [\"vos*\"]")
        layer = _layer(f"{source}: groups.{name}", {k: v for k, v in body.items() if k != "hosts"},
                       ("interval", "stale_intervals", "thresholds", "states"))
        cfg.groups.append((name, patterns, layer))
    for name, body in (data.get("hosts") or {}).items():
        if not isinstance(body, dict):
            raise ConfigError(f"{source}: hosts.{name}: must be a table")
        cfg.hosts[name] = _layer(f"{source}: hosts.{name}", body,
                                 ("interval", "stale_intervals", "thresholds", "states"))
    return cfg


def default_path() -> str:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "mssdiag", "audit.toml")


def load(path: Optional[str]) -> Config:
    """The config from `path`, else $MSSDIAG_AUDIT_CONFIG, else the user's audit.toml when it
    exists, else the built-in defaults."""
    explicit = path or os.environ.get(ENV)
    path = explicit or default_path()
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        if explicit:
            raise ConfigError(f"{path}: no such file or directory") from None
        return Config()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    return parse(text, path)


def override(cfg: Config, levels: Dict[str, Dict[str, str]]) -> Config:
    """Thresholds given on the command line (-w/-c METRIC=RANGE) win over every file layer."""
    if not levels:
        return cfg
    extra = _layer("command line", {"thresholds": levels}, ("thresholds",))
    for name in list(cfg.hosts):
        for metric, d in extra.thresholds.items():
            cfg.hosts[name].thresholds.setdefault(metric, {}).update(d)
    for _, _, layer in cfg.groups:
        for metric, d in extra.thresholds.items():
            layer.thresholds.setdefault(metric, {}).update(d)
    for metric, d in extra.thresholds.items():
        cfg.base.thresholds.setdefault(metric, {}).update(d)
    cfg._cache.clear()
    return cfg
