"""The HTML report: one self-contained file, everything escaped, and a chart a browser really draws."""
from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import tempfile
import zlib

import pytest

from toolkit import report, triage
from toolkit.hostfile import HostFacts
from toolkit.hosts import Host
from toolkit.probe.result import ProbeResult

CASES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "cases", "demo")
SERIES_BLUE = (0x1F, 0x77, 0xB4)     # toolkit.report.svg.COLORS[0]


def case_hosts(path=CASES):
    hosts, _ = triage.gather([path], {})
    return triage.run(hosts)


def test_self_contained_no_scripts_no_external_resources():
    page = report.render(case_hosts(), "html")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<script" not in page.lower()
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:|//)""", page)
    # counters (as increases per hour) where they grew: VOS and Windows; the MSS chart where the MSS
    # is in question: VOS. The Linux host's counters did not grow: no chart says nothing.
    assert page.count("<svg") == 3
    assert page.count('class="chart counters"') == 2 and page.count('class="chart throughput"') == 1


def test_untrusted_values_are_escaped(tmp_path):
    (tmp_path / "host.toml").write_text('name = "<script>alert(1)</script>\\"&\'"\n'
                                        'os = "vos"\nrelease = "<b>14.6</b>"\npeer = "non-local"\n')
    dump = open(os.path.join(CASES, "vos-host", "netstat-stcp.txt")).read()
    (tmp_path / "dump<img src=x onerror=alert(2)>.txt").write_text(dump)
    hosts = case_hosts(str(tmp_path))
    assert hosts and hosts[0].facts.name.startswith("<script>")
    page = report.render(hosts, "html")
    assert "<script>" not in page and "<img" not in page and "<b>14.6" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&lt;img src=x onerror=alert(2)&gt;" in page
    md = report.render(hosts, "md")
    assert "<script>" not in md and "\\<script\\>" in md


def test_probe_target_text_escaped_in_svg_and_html():
    h = Host(HostFacts("x", os="linux", rtt_s=0.02, loss=1e-4))
    h.probes = [ProbeResult(target='"><svg onload=alert(3)>', pmtu=1400, pmtu_method="icmp", local_mtu=1500,
                            mss={"port": 22, "sent": 1460, "synack": 1360, "used": None})]
    page = report.render(triage.run([h]), "html")
    assert "<svg onload" not in page and "&lt;svg onload=alert(3)&gt;" in page


# --------------------------------------------------------------------------- the browser

def read_png(path):
    """(width, height, rows of RGB tuples) for an 8-bit RGB/RGBA PNG, with the five filters."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, ihdr = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + n
    w, h, depth, ctype = ihdr[:4]
    assert depth == 8 and ctype in (2, 6), ihdr
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def screenshot(html_path, png_path):
    exe = chromium()
    if exe is None:
        pytest.skip("Chromium is not installed (Debian package chromium; make system-deps installs it as root)")
    with tempfile.TemporaryDirectory() as profile:
        cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={profile}", "--hide-scrollbars", "--window-size=1000,1000",
               f"--screenshot={png_path}", "file://" + os.path.abspath(html_path)]
        try:
            subprocess.run(cmd, capture_output=True, timeout=90, check=False)
        except subprocess.TimeoutExpired:
            pytest.skip("Chromium did not finish a screenshot within 90 s")
    if not os.path.exists(png_path):
        pytest.skip("Chromium ran but wrote no screenshot (no usable headless mode here)")


def near(px, color, tol=40):
    return all(abs(a - b) <= tol for a, b in zip(px, color))


def blue_box(png):
    w, h, rows = read_png(png)
    pts = [(x, y) for y, row in enumerate(rows) for x, px in enumerate(row) if near(px, SERIES_BLUE)]
    return w, h, pts


def test_chromium_screenshot_shows_the_chart(tmp_path):
    hosts = [h for h in case_hosts() if h.facts.name == "vos-prod-1"]
    assert hosts
    page = tmp_path / "report.html"
    page.write_text(report.render(hosts, "html"))
    png = tmp_path / "shot.png"
    screenshot(page, png)
    w, h, pts = blue_box(png)
    # The throughput curve and the counter lines are drawn in the series blue: a blank page or
    # one whose SVG failed to render has (almost) none of it.
    assert len(pts) > 400, len(pts)
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    # The curve spans the chart's plot area: wide, and rising (the bound grows with the MSS).
    assert max(xs) - min(xs) > 300 and max(ys) - min(ys) > 100
    left = [y for x, y in pts if x < min(xs) + 30]
    right = [y for x, y in pts if x > max(xs) - 30]
    assert min(left) > min(right), "the first series should rise from left to right"

    # Control: the same page without its charts shows none of that blue, so the check can fail.
    bare = tmp_path / "bare.html"
    bare.write_text(re.sub(r"<svg.*?</svg>", "", page.read_text(), flags=re.S))
    png2 = tmp_path / "bare.png"
    screenshot(bare, png2)
    assert len(blue_box(png2)[2]) < 50


def test_text_report_drops_terminal_control_characters():
    h = Host(HostFacts("evil\x1b[2J\x07host", os="vos", release="14.6", peer="non-local"))
    text = report.render(triage.run([h]), "table")
    assert "\x1b" not in text and "\x07" not in text and "evil?[2J?host" in text


def test_chromium_summary_first_and_a_per_hour_chart_where_growth_is_visible(tmp_path):
    """A cron log whose fragments start, peak and stop: the report's first thing on screen is the
    summary (the red 'problem' cell), and below it the per-hour chart draws a line that rises and
    falls -- a chart of totals since boot would only climb."""
    log = os.path.join(os.path.dirname(__file__), "..", "fixtures", "netstat", "linux", "netns-cron-date-netstat-s.txt")
    hosts = case_hosts(log)
    page = report.render(hosts, "html")
    assert page.index('id="summary"') < page.index('class="host"')
    html = tmp_path / "report.html"
    html.write_text(page)
    png = tmp_path / "shot.png"
    screenshot(html, png)
    w, h, rows = read_png(png)
    red = [(x, y) for y, row in enumerate(rows) for x, px in enumerate(row) if near(px, (0xB0, 0x00, 0x20), 30)]
    blue = [(x, y) for y, row in enumerate(rows) for x, px in enumerate(row) if near(px, SERIES_BLUE)]
    assert red and blue, (len(red), len(blue))
    assert min(y for _, y in red) < 200, "the summary (with its problem cell) opens the page"
    assert min(y for _, y in red) < min(y for _, y in blue), "the summary comes before any chart"
    # the per-hour line: its first point sits on the plot's left edge (svg.LEFT from the chart's
    # left, less the dot's radius); the legend's stroke lies right of the plot (svg.W - svg.RIGHT)
    from toolkit.report import svg
    left = min(x for x, _ in blue)
    plot_right = left + 4 + (svg.W - svg.RIGHT - svg.LEFT)
    pts = [(x, y) for x, y in blue if x <= plot_right + 4]
    assert plot_right - left > 300
    top = min(y for _, y in pts)
    peak_x = [x for x, y in pts if y == top]
    assert left + 20 < min(peak_x) and max(peak_x) < plot_right - 20, "increases rise then fall"
