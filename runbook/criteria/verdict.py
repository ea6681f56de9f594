"""A verdict: a status and one readable line saying expected vs found."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..definition.model import Status


@dataclass
class Verdict:
    """A status with its one-line reason and the failures behind it."""

    status: Status
    reason: str = ""
    failures: list[str] = field(default_factory=list)

    @classmethod
    def from_failures(cls, failures: list[str], unknowns: list[str] | None = None) -> Verdict:
        if unknowns:
            return cls(Status.UNKNOWN, "; ".join(unknowns), list(unknowns))
        if failures:
            return cls(Status.FAIL, "; ".join(failures), list(failures))
        return cls(Status.PASS, "")


def short(value, limit: int = 80) -> str:
    text = repr(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
