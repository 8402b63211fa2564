"""Small inline SVG line charts: no JavaScript, no external files, every label escaped."""
from __future__ import annotations

import math
from html import escape as _escape
from typing import List, Optional, Sequence, Tuple

from toolkit.output import safe

W, H = 720, 300
LEFT, RIGHT, TOP, BOTTOM = 78, 190, 28, 46
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf")

Series = Tuple[str, Sequence[Tuple[float, float]]]


def escape(value) -> str:
    return _escape(safe(value))


def _ticks(lo: float, hi: float, n: int = 5) -> List[float]:
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.ceil(lo / step) * step
    out, v = [], start
    while v <= hi + 1e-9 * step:
        out.append(round(v, 10))
        v += step
    return out


def _fmt(v: float, unit: str) -> str:
    if unit == "bit/s":
        for suffix, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
            if abs(v) >= scale:
                return f"{v / scale:g}{suffix}"
        return f"{v:g}"
    return f"{v:g}"


def line_chart(title: str, series: List[Series], x_label: str, y_label: str, y_unit: str = "",
               markers: Optional[List[Tuple[float, str]]] = None, x_labels: Optional[List[str]] = None,
               css_class: str = "chart") -> str:
    """An SVG line chart. `markers` are vertical lines at x with a label; `x_labels`
    replaces numeric x ticks by category names at x = 0, 1, 2..."""
    points = [p for _, pts in series for p in pts]
    if not points:
        return ""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x0, x1 = min(xs), max(xs)
    if markers:
        x0, x1 = min([x0] + [m[0] for m in markers]), max([x1] + [m[0] for m in markers])
    if x1 == x0:
        x0, x1 = x0 - 1, x1 + 1
    y0, y1 = 0.0, max(ys) * 1.08 or 1.0
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def sx(x):
        return LEFT + (x - x0) / (x1 - x0) * pw

    def sy(y):
        return TOP + ph - (y - y0) / (y1 - y0) * ph

    parts = [f'<svg class="{escape(css_class)}" xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
             f'viewBox="0 0 {W} {H}" role="img" aria-label="{escape(title)}">',
             f'<rect x="0" y="0" width="{W}" height="{H}" fill="#ffffff"/>',
             f'<text x="{LEFT}" y="18" font-size="13" font-weight="bold">{escape(title)}</text>',
             f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="#fafafa" stroke="#999"/>']
    for t in _ticks(y0, y1):
        y = sy(t)
        parts.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + pw}" y2="{y:.1f}" stroke="#e3e3e3"/>')
        parts.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">{escape(_fmt(t, y_unit))}</text>')
    if x_labels:
        for i, label in enumerate(x_labels):
            parts.append(f'<text x="{sx(i):.1f}" y="{TOP + ph + 16}" font-size="10" text-anchor="middle">{escape(label)}</text>')
    else:
        for t in _ticks(x0, x1):
            parts.append(f'<text x="{sx(t):.1f}" y="{TOP + ph + 16}" font-size="11" text-anchor="middle">{escape(_fmt(t, ""))}</text>')
    parts.append(f'<text x="{LEFT + pw / 2:.1f}" y="{H - 8}" font-size="12" text-anchor="middle">{escape(x_label)}</text>')
    parts.append(f'<text x="14" y="{TOP + ph / 2:.1f}" font-size="12" text-anchor="middle" '
                 f'transform="rotate(-90 14 {TOP + ph / 2:.1f})">{escape(y_label)}</text>')
    dx, dy = x1 - x0, y1 - y0
    for i, (label, pts) in enumerate(series):
        color = COLORS[i % len(COLORS)]
        # sx and sy written out: a month of hourly points is millions of them
        path = " ".join(["%.1f,%.1f" % (LEFT + (x - x0) / dx * pw, TOP + ph - (y - y0) / dy * ph) for x, y in pts])
        parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="3" points="{path}"/>')
        for x, y in pts if len(pts) <= 12 else []:
            parts.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="4" fill="{color}"/>')
        ly = TOP + 14 + 18 * i
        parts.append(f'<line x1="{LEFT + pw + 10}" y1="{ly - 4}" x2="{LEFT + pw + 30}" y2="{ly - 4}" stroke="{color}" stroke-width="3"/>')
        parts.append(f'<text x="{LEFT + pw + 34}" y="{ly}" font-size="11">{escape(label)}</text>')
    for j, (x, label) in enumerate(markers or []):
        X = sx(x)
        parts.append(f'<line x1="{X:.1f}" y1="{TOP}" x2="{X:.1f}" y2="{TOP + ph}" stroke="#555" stroke-dasharray="4 3"/>')
        parts.append(f'<text x="{X + 3:.1f}" y="{TOP + 12 + 13 * j}" font-size="11" fill="#333">{escape(label)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)
