"""The read side of a Store: what the CLI, TUI and exporter ask of a run.
Mixed into Store (store.py), which owns opening, appending and closing and
the attributes used here: state, index (the result details, built from the
journal on first use when the run was opened from its progress database),
directory, path, _blobs, _seq, _head. Everything `status` and the TUI need
reads the state only."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from ..definition.model import Status
from ..run import rules
from . import resume
from .canonical import genesis_of
from .errors import StoreCorrupt
from .index import RESULT_FIELDS
from .journal import OUTPUTS, Chain, blob_refs
from .storage import JournalReader, JournalStorage


def _seq_of(entry: Any) -> int:
    seq = entry.get("seq") if isinstance(entry, dict) else None
    return seq if isinstance(seq, int) else 0


class StoreQueries:
    @property
    def run_id(self) -> str:
        return str(self.state.run.get("run_id") or self.header.get("run_id") or self.directory.name)

    def run_info(self) -> dict[str, Any]:
        run, fin = self.state.run, self.state.finished
        return {
            "run_id": self.run_id,
            "site": run.get("site", ""),
            "operator": run.get("operator", ""),
            "tool_version": run.get("tool_version", ""),
            "inventory_sha256": run.get("inventory_sha256", ""),
            "runbook_sha256": run.get("runbook_sha256", ""),
            "started": run.get("time"),
            "ended": fin.get("time") if fin else None,
            "status": fin.get("status") if fin else None,
            "events": self._seq,
            "head": self._head,
            "directory": str(self.directory),
            "journal": str(self.path),
            "interruptions": len(self.state.interruptions),
            "read_only": self.read_only,
            "recovered": self.recovered,
            "lock_taken_over": self.lock.taken_over if self.lock else None,
        }

    def head(self) -> str:
        return self._head

    def output(self, sha256: str) -> str:
        """One output by its SHA-256 (from a blob, checked against its name)."""
        return self._blobs.get(sha256)

    def _outputs(self, r: dict[str, Any]) -> dict[str, str]:
        inline = self.index.inline.get((r["step_id"], r["action"], r["host"]), {})
        out = {}
        for name in OUTPUTS:
            sha = r.get("output_sha256" if name == "stdout" else "stderr_sha256")
            if name in inline:
                out[name] = inline[name]
            elif sha:
                out[name] = self._blobs.get(
                    sha, f"{name} of {r['action']} of step {r['step_id']} on {r['host']}"
                )
            else:
                out[name] = ""
        return out

    def result_view(self, r: dict[str, Any], outputs: bool = True) -> dict[str, Any]:
        view = {k: r[k] for k in RESULT_FIELDS if k in r}
        if outputs:
            view.update(self._outputs(r))
        key = (r["step_id"], r["host"])
        view["stale"] = self._stale.get(r["step_id"]) if key in self._stale_pairs else None
        return view

    def results(self, *, outputs: bool = True) -> dict[tuple[str, str], dict[str, Any]]:
        """(step_id, host) -> the latest verify/apply/rollback record, with its
        outputs read from the journal or from blobs now (outputs=False skips that)."""
        return {key: self.result_view(r, outputs) for key, r in self.index.latest.items()}

    def latest_result(self, step_id: str, host: str) -> dict[str, Any] | None:
        """The latest finished result of (step, host) with its outputs, or None
        (never run, or a command still in flight)."""
        r = self.index.latest.get((step_id, host))
        if r is None or r.get("status") == "running":
            return None
        return self.result_view(r)

    def verify_output(self, step_id: str, host: str) -> str | None:
        """stdout of the latest verify of (step, host), or None if it never ran."""
        r = self.index.by_action.get((step_id, "verify", host))
        if r is None or r.get("status") in ("running", "interrupted"):
            return None
        return self._outputs(r)["stdout"]

    def host_status(self, step_id: str, host: str) -> Status:
        return self.state.status(step_id, host)

    def step_hosts(self, step_id: str) -> dict[str, Status]:
        """Every host the run knows for the step (targeted, with a result, or named
        by a decision) -> its effective status."""
        now = time.time()
        return {h: self.state.status(step_id, h, now) for h in self.state.step_hosts(step_id)}

    def step_statuses(self) -> dict[str, Status]:
        """Every step the run knows -> its status derived from its hosts' statuses."""
        return {s: rules.step_status(self.step_hosts(s).values()) for s in self.state.step_ids()}

    def before(self, step_id: str, host: str) -> dict | None:
        return self.state.before(step_id, host)

    def pending_actions(self) -> list[dict[str, Any]]:
        """Open pending actions (owed, or failed and so still owed: rules.still_owed),
        in the order they were opened."""
        return [dict(p) for p in self.state.pending.values()]

    def decisions(self, now: float | None = None) -> list[dict[str, Any]]:
        """Every skip, waiver, note and confirmation, in order; `expired` says
        whether a waiver's (or skip's) expiry has passed."""
        now = time.time() if now is None else now
        return [{**d.as_record(), "expired": not rules.active(d, now)} for d in self.state.decisions]

    def host_keys(self) -> dict[str, dict[str, Any]]:
        return {h: dict(key) for h, key in self.state.host_keys.items()}

    def interrupted(self) -> dict[str, list[str]]:
        """step -> hosts that are interrupted now: they came back so when the run was
        reopened (this time or before) and have not been run again since."""
        return self.state.interrupted()

    def stale_steps(
        self, current_step_hashes: dict[str, str], inventory_sha256: str | None
    ) -> dict[str, str]:
        """step_id -> why its results are stale. Remembered: from then on results()
        and snapshot() mark each stale result with that reason."""
        self._stale = resume.stale_steps(self.state, current_step_hashes, inventory_sha256)
        self._stale_pairs = resume.stale_hosts(self.state, current_step_hashes, inventory_sha256)
        return dict(self._stale)

    def stale_pairs(self) -> set[tuple[str, str]]:
        """(step, host) whose results the last stale_steps() call found stale."""
        return set(self._stale_pairs)

    def iter_journal(self, upto: int | None = None) -> Iterator[dict[str, Any]]:
        """The journal entries as written, read from disk, up to head() (or `upto`)."""
        last = self._seq if upto is None else upto
        for _line, batch in JournalReader(self.path).batches():
            for entry in batch:
                if _seq_of(entry) > last:
                    return  # appended by a live writer after this store was opened
                yield entry

    def journal(self) -> list[dict[str, Any]]:
        return list(self.iter_journal())

    def check_outputs(self) -> int:
        """Read every output kept in a blob and check it against its SHA-256, as
        export does; the number checked, or StoreCorrupt naming the blob."""
        for sha, _seq, what in self._blob_refs:
            self._blobs.get(sha, what)
        return len(self._blob_refs)

    def verify_chain(self) -> str:
        """Re-read the journal, recompute every hash, check every blob; the head, or
        StoreCorrupt naming the file, line and what is wrong."""
        chain = Chain(self.path, recompute=True, genesis=genesis_of(self.header))
        for line, batch in JournalReader(self.path).batches():
            for entry in batch:
                if _seq_of(entry) > self._seq:
                    break
                chain.add(entry, line)
                for name, sha in blob_refs(entry["event"]):
                    self._blobs.get(sha, f"{name} of event {entry['seq']}")
        if chain.seq != self._seq:
            raise StoreCorrupt(
                self.path,
                f"the journal ends at event {chain.seq}, but {self._seq} were recorded (it was cut)",
            )
        if chain.head != self._head:
            raise StoreCorrupt(
                self.path,
                f"event {chain.seq} is not the one recorded when the "
                "run was opened (the journal was rewritten since)",
            )
        return chain.head

    def snapshot(self, runbook: Any = None, inventory: Any = None) -> dict[str, Any]:
        """Everything above as one JSON-able dict (keys: snapshot.py), with the
        run's own definitions when it recorded them (definition_history.py)."""
        from .definition_history import snapshot as with_definitions

        return with_definitions(self, runbook, inventory)

    def tinydb(self):
        """A read-only tinydb over the journal (table "journal", doc_id = seq)."""
        from tinydb import TinyDB

        return TinyDB(self.path, storage=JournalStorage)
