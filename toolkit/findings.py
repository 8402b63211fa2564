"""What triage produces: findings (what is wrong, how sure) and recommendations (what to do).

The field names are an interface (docs/triage.md, `mssdiag triage --json`): add, never rename.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
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
        return asdict(self)


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
        d = asdict(self)
        d["recommendations"] = [r.to_dict() for r in self.recommendations]
        return d
