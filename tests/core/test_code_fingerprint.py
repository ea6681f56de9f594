"""runbook/code_fingerprint.py: what the caches key on for "the code that computed
this entry". An edit (even one that keeps the size), a new module, a reinstall (new
inodes) or another version is another fingerprint; bytecode caches are not the code."""

from __future__ import annotations

import os

import pytest

from runbook import code_fingerprint as cf


@pytest.fixture
def package(tmp_path, monkeypatch):
    root = tmp_path / "pkg"
    (root / "parsers").mkdir(parents=True)
    (root / "top.py").write_text("A = 1\n")
    (root / "parsers" / "a.py").write_text("X = 1\n")
    monkeypatch.setattr(cf, "PACKAGE", root)
    cf.fingerprint.cache_clear()
    yield root
    cf.fingerprint.cache_clear()


def fresh(parts):
    cf.fingerprint.cache_clear()
    return cf.fingerprint(parts)


def test_an_edit_a_new_module_or_another_version_is_another_fingerprint(package, monkeypatch):
    parts = ("*.py", "parsers")
    first = fresh(parts)
    assert first is not None and fresh(parts) == first  # the same files, the same fingerprint
    st = os.stat(package / "parsers" / "a.py")
    (package / "parsers" / "a.py").write_text("X = 2\n")  # the same size
    os.utime(package / "parsers" / "a.py", ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    edited = fresh(parts)
    assert edited != first
    (package / "parsers" / "b.py").write_text("")
    added = fresh(parts)
    assert added != edited
    (package / "parsers" / "__pycache__").mkdir()
    (package / "parsers" / "__pycache__" / "a.cpython-311.py").write_text("")
    (package / "parsers" / "notes.txt").write_text("")
    assert fresh(parts) == added  # neither bytecode nor other files are the code
    (package / "second.py").write_text("")
    assert fresh(parts) != added  # a new top-level module
    now = fresh(parts)
    monkeypatch.setattr(cf, "__version__", "0.0.0-other")
    assert fresh(parts) != now


def test_a_reinstalled_copy_is_another_fingerprint(package, monkeypatch, tmp_path):
    first = fresh(("top.py",))
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "top.py").write_bytes((package / "top.py").read_bytes())
    st = os.stat(package / "top.py")
    os.utime(copy / "top.py", ns=(st.st_atime_ns, st.st_mtime_ns))  # even with the same times
    monkeypatch.setattr(cf, "PACKAGE", copy)
    assert fresh(("top.py",)) != first


def test_code_that_cannot_be_read_gives_no_fingerprint(package):
    assert fresh(("missing.py",)) is None
    assert fresh(("parsers", "gone")) is None
