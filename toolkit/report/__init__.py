"""Rendering triage results: table (terminal), json (documented schema), md (tickets), html (one file).

Every value that came from a dump, a probe file or a host file is untrusted: the
Markdown escapes what would break a ticket's layout and the HTML escapes everything.
"""
from __future__ import annotations

from typing import List

FORMATS = ("table", "json", "md", "html")


def render(hosts: List, fmt: str) -> str:
    from toolkit import triage
    if fmt == "json":
        from toolkit.output import dumps
        return dumps(triage.document(hosts), indent=2) + "\n"
    if fmt == "md":
        from toolkit.report import markdown
        return markdown.render(hosts)
    if fmt == "html":
        from toolkit.report import html
        return html.render(hosts)
    from toolkit.report import text
    return text.render(hosts)
