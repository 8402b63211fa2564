"""What triage produces: findings (what is wrong, how sure) and recommendations (what to do).

The field names are an interface (docs/triage.md, `mssdiag triage --json`): add, never rename.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from typing import Any, Dict, List, Optional

CONFIDENCES = ("high", "medium", "low")   # rules and the prober both use these words
SEVERITIES = ("problem", "warning", "info")


@dataclass
class Recommendation:
    code: str                       # stable, e.g. "vos-min-mss-14.7"
    title: str
    commands: List[str]             # exact lines to run or paste, in order
    applies_to: str = ""            # OS / release / device it is for
    where: str = ""                 # where the lines go (a file, a console, a router)
    caveats: List[str] = field(default_factory=list)
    impact: Optional[Dict[str, Any]] = None
    scope: str = "host"             # host | network

    def to_dict(self) -> dict:
        # by hand: dataclasses.asdict deep-copies every value, most of triage --json's time
        return {"code": self.code, "title": self.title, "commands": list(self.commands),
                "applies_to": self.applies_to, "where": self.where, "caveats": list(self.caveats),
                "impact": None if self.impact is None else dict(self.impact), "scope": self.scope}


@dataclass
class Finding:
    code: str                       # stable, see docs/triage.md
    title: str
    evidence: List[str]
    confidence: str = "high"
    severity: str = "problem"
    recommendations: List[Recommendation] = field(default_factory=list)
    data: Dict[str, Any] = field(default_factory=dict)   # numbers behind the evidence

    def __post_init__(self) -> None:
        if self.confidence not in CONFIDENCES:
            raise ValueError(f"bad confidence {self.confidence!r}")
        if self.severity not in SEVERITIES:
            raise ValueError(f"bad severity {self.severity!r}")

    def to_dict(self) -> dict:
        return {"code": self.code, "title": self.title, "evidence": list(self.evidence),
                "confidence": self.confidence, "severity": self.severity,
                "recommendations": [r.to_dict() for r in self.recommendations], "data": dict(self.data)}
