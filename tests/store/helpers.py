"""Small builders shared by the store tests."""

from __future__ import annotations

from pathlib import Path

from runbook.run.events import HostFinished, HostStarted, StepStarted
from runbook.store import Store

INV = "a" * 64
BOOK = "b" * 64


def new_store(state: Path, run_id: str | None = "run-1", **kw) -> Store:
    args = dict(
        site="seed-dc", operator="alice", tool_version="0.1.0", inventory_sha256=INV, runbook_sha256=BOOK
    )
    args.update(kw)
    return Store.create(state, run_id, **args)


def verify_on(
    store: Store,
    step: str,
    hosts: list[str],
    status: str = "pass",
    *,
    action: str = "verify",
    sha: str = "1" * 64,
    stdout: str = "ok\n",
    reason: str = "",
    before: dict | None = None,
) -> None:
    """StepStarted + HostStarted/HostFinished for every host, as the engine emits them."""
    batch = [StepStarted(step, action, tuple(hosts), sha)]
    batch += [HostStarted(step, action, h, f"check {step}") for h in hosts]
    store.append_many(batch)
    store.append_many(
        [
            HostFinished(
                step,
                action,
                h,
                status,
                reason,
                f"check {step}",
                0 if status == "pass" else 1,
                stdout,
                "",
                1.0,
                2.0,
                before=before,
            )
            for h in hosts
        ]
    )


def start_only(store: Store, step: str, hosts: list[str], action: str = "verify") -> None:
    store.append_many(
        [StepStarted(step, action, tuple(hosts), "1" * 64)]
        + [HostStarted(step, action, h, f"check {step}") for h in hosts]
    )


def pack_records(blobs_dir: Path) -> dict[str, tuple[int, int]]:
    """sha256 -> (offset, length) of each blob in `blobs_dir/pack`, read the way the
    format is documented (store/blobs.py), apart from the product's own reader."""
    data = (blobs_dir / "pack").read_bytes()
    out, at = {}, 0
    while at < len(data):
        head, _, _ = data[at:].partition(b"\n")
        sha, length = head.decode().split(" ")
        start = at + len(head) + 1
        out[sha] = (start, int(length))
        assert data[start + int(length) : start + int(length) + 1] == b"\n"
        at = start + int(length) + 1
    return out


def change_blob(blobs_dir: Path, old: bytes, new: bytes) -> None:
    """Replace bytes inside the pack's records (same length: the others stay where they are)."""
    assert len(old) == len(new)
    pack = blobs_dir / "pack"
    data = pack.read_bytes()
    assert old in data
    pack.write_bytes(data.replace(old, new))
