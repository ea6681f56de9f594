"""The journal form of HostFinished outputs (store/journal.py stored_event): a
long output shared by many hosts (a `run_on: one` step) is encoded and hashed
once, and every event still says exactly what it holds."""

from __future__ import annotations

import hashlib

from runbook.run.events import HostFinished
from runbook.store.journal import INLINE_MAX, stored_event


def _finished(host: str, stdout: str, stderr: str = "") -> HostFinished:
    return HostFinished("rail-cabling", "verify", host, "pass", "", stdout=stdout, stderr=stderr)


def _expected(text: str) -> tuple[str, bytes]:
    raw = text.encode("utf-8")
    return hashlib.sha256(raw).hexdigest(), raw


def test_one_output_shared_by_hosts_is_stored_alike_for_each():
    sweep = "CA: gpu01 mlx5_0 ==> leaf01 port 1\n" * (INLINE_MAX // 10)
    sha, raw = _expected(sweep)
    for host in ("gpu01", "gpu02", "gpu03"):
        d, blobs = stored_event(_finished(host, sweep))
        assert d["host"] == host and "stdout" not in d
        assert d["stdout_sha256"] == sha and blobs == [(sha, raw)]


def test_outputs_in_turn_each_get_their_own_hash():
    a = "a" * (INLINE_MAX + 1)
    b = "b" * (INLINE_MAX + 1)
    for text in (a, b, a, "".join(["a"] * (INLINE_MAX + 1)), "short", a):
        d, blobs = stored_event(_finished("gpu01", text, stderr=text[:10]))
        sha, raw = _expected(text)
        assert d["stdout_sha256"] == sha
        assert blobs == ([(sha, raw)] if len(raw) > INLINE_MAX else [])
        assert d["stderr_sha256"] == _expected(text[:10])[0] and d["stderr"] == text[:10]


def test_a_long_output_with_a_lone_surrogate_is_cleaned_each_time():
    text = "x" * INLINE_MAX + "\udcff tail"
    for _ in range(2):
        d, blobs = stored_event(_finished("gpu01", text))
        ((sha, raw),) = blobs
        assert raw.decode("utf-8").endswith("\ufffd tail") and sha == hashlib.sha256(raw).hexdigest()
        assert d["stdout_sha256"] == sha
