"""The journal: every event of a run, in order, each entry chained to the one
before it.

    entry = {"seq": N, "prev": <hash of entry N-1, or 64 zeros>, "hash": H, "event": {...}}
    H     = sha256(canonical JSON of {"seq", "prev", "event"})   (runbook.store.canonical)

seq starts at 1. The event is stored as `Event.to_dict()` (its `type` names
the class), with one change for HostFinished: `stdout_sha256` and
`stderr_sha256` are added, and an output longer than INLINE_MAX bytes is
moved out of the event into a content-addressed blob (blobs.py) -- the event
then has no `stdout` (or `stderr`) key, only its SHA-256, which the hash chain
covers. Outputs up to INLINE_MAX bytes stay inline as well.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any

from ..definition.model import Status
from ..inventory.hostsel import unfold
from ..run.events import Event
from .canonical import GENESIS, CanonicalError, journal_entry_hash
from .errors import StoreCorrupt

INLINE_MAX = 1024  # bytes of stdout/stderr kept inside the event; longer goes to a blob
OUTPUTS = ("stdout", "stderr")
ENTRY_KEYS = ("seq", "prev", "hash", "event")
_STATUSES = frozenset(s.value for s in Status)


def clean_text(s: str) -> str:
    """Valid Unicode (an output decoded with surrogateescape may hold lone surrogates)."""
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        # bytes smuggled as U+DC80..U+DCFF come back as those bytes, then one U+FFFD each
        escaped = all(not 0xD800 <= ord(c) <= 0xDFFF or 0xDC80 <= ord(c) <= 0xDCFF for c in s)
        raw = s.encode("utf-8", "surrogateescape" if escaped else "surrogatepass")
        return raw.decode("utf-8", "replace")


def _utf8(s: str) -> tuple[str, bytes]:
    """(clean_text(s), its UTF-8 bytes), encoding an output once (not once to
    check it and once more to store it)."""
    try:
        return s, s.encode("utf-8")
    except UnicodeEncodeError:
        text = clean_text(s)
        return text, text.encode("utf-8")


def _sanitize(value: Any) -> Any:
    """The nearest JSON value: keys as strings, NaN/inf and unknown objects as text."""
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {str(k): _sanitize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_sanitize(v) for v in value]
    return str(value)


class OutputMemo:
    """Each output string of a batch encoded and hashed once. A launch step's
    job output is one string that every host of the job finishes with: at 1,000
    hosts, encoding it per host held ~1.7 GB of copies at once (one 2 MB
    output x 845 events). Keyed by the string object, which the batch's events
    keep alive while the memo is in use."""

    def __init__(self) -> None:
        self._seen: dict[int, tuple[str, str, bytes, str]] = {}

    def encode(self, s: str) -> tuple[str, bytes, str]:
        """(clean text, its UTF-8 bytes, their SHA-256)."""
        hit = self._seen.get(id(s))
        if hit is not None and hit[0] is s:
            return hit[1], hit[2], hit[3]
        text, raw = _utf8(s)
        sha = hashlib.sha256(raw).hexdigest()
        if len(raw) > INLINE_MAX:  # small outputs are cheaper to encode again than to keep
            self._seen[id(s)] = (s, text, raw, sha)
        return text, raw, sha


def stored_event(
    event: Event, memo: OutputMemo | None = None
) -> tuple[dict[str, Any], list[tuple[str, bytes]]]:
    """The journal form of an event, and the (sha256, bytes) outputs it moves to blobs.
    `memo`: shared by the events of one batch, so an output they share is encoded once."""
    d = event.to_dict()
    blobs: list[tuple[str, bytes]] = []
    if d["type"] == "HostFinished":
        # A parsed record is derivable from the output it was parsed from (the
        # engine re-parses on resume); journaling it would multiply the size.
        d.pop("record", None)
        memo = memo or OutputMemo()
        for name in OUTPUTS:
            text, raw, sha = memo.encode(d.get(name) or "")
            d[f"{name}_sha256"] = sha
            if len(raw) > INLINE_MAX:
                del d[name]
                blobs.append((sha, raw))
            else:
                d[name] = text
    return d, blobs


def check_event(d: dict[str, Any]) -> None:
    """Refuse, before anything is written, an event that could not be replayed
    (a journal must always reopen). ValueError saying what is wrong."""
    kind = d.get("type")
    if kind == "HostFinished":
        if str(d.get("status")) not in _STATUSES:
            raise ValueError(f"status {d.get('status')!r} is not one of {', '.join(sorted(_STATUSES))}")
    if kind == "OperatorDecision":
        if d.get("hosts"):
            try:
                unfold(d["hosts"])
            except Exception as exc:  # NodeSetParseError is not a ValueError
                raise ValueError(f"hosts {d['hosts']!r} is not a NodeSet: {exc}") from None
        if d.get("expires") is not None and not isinstance(d["expires"], (int, float)):
            raise ValueError(f"expires {d['expires']!r} is not a time")


def make_entry(seq: int, prev: str, event: dict[str, Any]) -> dict[str, Any]:
    try:
        digest = journal_entry_hash(seq, prev, event)
    except CanonicalError:  # no JSON form (NaN, non-string keys, objects...):
        event = _sanitize(event)  # store the nearest JSON rather than lose the event
        digest = journal_entry_hash(seq, prev, event)
    return {"seq": seq, "prev": prev, "hash": digest, "event": event}


def blob_refs(event: dict[str, Any]) -> list[tuple[str, str]]:
    """(output name, sha256) of the outputs an event keeps in blobs."""
    if event.get("type") != "HostFinished":
        return []
    return [
        (name, event[f"{name}_sha256"])
        for name in OUTPUTS
        if name not in event and isinstance(event.get(f"{name}_sha256"), str)
    ]


class Chain:
    """Checks entries one by one as they are read: continuous seq, each `prev`
    the hash before it, and (when `recompute`) each hash recomputed."""

    def __init__(self, path: str | Path, recompute: bool = False, genesis: str = GENESIS):
        self.path = path
        self.recompute = recompute
        self.seq = 0
        self.head = genesis

    def add(self, entry: Any, line: int) -> None:
        if (
            not isinstance(entry, dict)
            or any(k not in entry for k in ENTRY_KEYS)
            or not isinstance(entry["event"], dict)
            or not isinstance(entry["seq"], int)
        ):
            raise StoreCorrupt(
                self.path,
                f"entry after seq {self.seq} is not a journal entry (needs seq, prev, hash, event)",
                line,
            )
        seq = entry["seq"]
        if seq != self.seq + 1:
            what = "events are missing" if seq > self.seq + 1 else "events are repeated or out of order"
            raise StoreCorrupt(
                self.path,
                f"event {seq} follows event {self.seq}: {what} (the journal was cut or spliced)",
                line,
            )
        if entry["prev"] != self.head:
            what = f"hash of event {self.seq}" if self.seq else "hash of the journal's header line"
            raise StoreCorrupt(self.path, f"event {seq}: hash chain broken: its prev is not the {what}", line)
        if self.recompute:
            try:
                ok = journal_entry_hash(seq, entry["prev"], entry["event"]) == entry["hash"]
            except CanonicalError as exc:
                raise StoreCorrupt(self.path, f"event {seq}: {exc}", line) from None
            if not ok:
                raise StoreCorrupt(
                    self.path,
                    f"event {seq}: hash does not match its content "
                    "(the event was changed after it was written)",
                    line,
                )
        self.seq, self.head = seq, entry["hash"]
