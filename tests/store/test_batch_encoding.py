"""store/storage.py encode_batch: orjson writes the journal's batch lines when it is
installed (it is a dependency); the standard library's encoder where orjson cannot
(integers beyond 64 bits). Either way a line reads back to the same entries."""

from __future__ import annotations

import pytest

from runbook.store import storage
from runbook.store.journal import make_entry
from runbook.store.storage import decode_batch, encode_batch


def _entries() -> list[dict]:
    events = [
        {"type": "HostFinished", "host": "gpu01", "stdout": "naïve ✔\n\t\x01", "started": 1.5e-7, "at": 1e16},
        {"type": "Note", "text": 'quote " backslash \\ and \u2028', "guid": 0xF452140300FFA0B1},
        {"type": "Big", "value": 2**70, "negative": -(2**64)},  # beyond orjson's 64 bits
    ]
    out, prev = [], "0" * 64
    for seq, event in enumerate(events, 1):
        entry = make_entry(seq, prev, event)
        out.append(entry)
        prev = entry["hash"]
    return out


@pytest.mark.parametrize("batch", [slice(0, 2), slice(0, 3)], ids=["orjson", "beyond-64-bits"])
def test_a_batch_line_reads_back_to_its_entries(batch):
    entries = _entries()[batch]
    assert decode_batch(encode_batch(entries)) == entries


def test_the_fast_encoder_writes_what_the_standard_library_writes_for_ordinary_entries():
    pytest.importorskip("orjson")
    entries = [
        make_entry(i, "0" * 64, {"type": "HostFinished", "host": f"gpu{i:02d}", "stdout": "é\n"})
        for i in range(50)
    ]
    assert storage._payload(entries) == storage._json(entries)
    assert storage._payload is not storage._json  # the fast one is in use
