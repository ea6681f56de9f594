"""Every parser reads the variants a copy of a real output picks up on its way to us:
CRLF line ends (a Windows paste), trailing spaces (terminal copy), a trailing blank
line or none. Run on every real fixture of every parser (host and IB folders)."""

from __future__ import annotations

import textwrap

import pytest

from runbook.parsers import ParseError, parse

from ..parsers_ib._fixtures import DIRECTORIES, FILE_PARSERS, FRAGMENTS
from .helpers import Fragment, fixtures_root, read
from .test_coverage import COVERED, MODULES, OWN

_HOST_PARSER = {d: p for p, dirs in OWN.items() for d in dirs}
_BY_PREFIX = {
    "nvbandwidth": "nvbandwidth",
    "p2pBandwidthLatencyTest": "p2p-bandwidth",
    "topo-p2p": "nvidia-smi-topo-p2p",
}


def _host_parser(directory: str, name: str) -> str:
    if directory == "nvbandwidth":
        return next(p for prefix, p in _BY_PREFIX.items() if name.startswith(prefix))
    return _HOST_PARSER[directory]


def _cases():
    cases = []
    for module in MODULES:
        for directory, expected in module.COVERS.items():
            for name, want in expected.items():
                if not isinstance(want, Fragment) and not (hasattr(want, "match")):
                    cases.append((_host_parser(directory, name), directory, name))
    root = fixtures_root()
    for directory, parser in DIRECTORIES.items():
        for path in sorted((root / directory).iterdir()):
            if path.is_file() and (directory, path.name) not in FRAGMENTS:
                cases.append((FILE_PARSERS.get((directory, path.name), parser), directory, path.name))
    return sorted(set(cases))


CASES = _cases()


def _variants(text: str) -> dict[str, str]:
    lines = text.splitlines()
    variants = {
        "crlf": "\r\n".join(lines) + "\r\n",
        "trailing-spaces": "\n".join(line + "  " for line in lines) + "\n",
        "no-final-newline": "\n".join(lines),
        "extra-blank-line": "\n".join(lines) + "\n\n",
        "nbsp-from-a-web-page": "\n".join(lines).replace(" ", "\u00a0", 5) + "\n",
    }
    if "\t" in text:
        variants["tabs-expanded"] = text.expandtabs(8)
    return variants


@pytest.mark.parametrize("parser,directory,name", CASES, ids=[f"{d}/{n}" for _, d, n in CASES])
def test_copy_variants_read_the_same(parser, directory, name):
    text = read(directory, name)
    try:
        plain = parse(parser, text)
    except ParseError:
        pytest.skip("a fixture this parser refuses on purpose (stated in its own test)")
    for kind, variant in _variants(text).items():
        assert parse(parser, variant) == plain, f"{parser} reads the {kind} copy of {name} differently"


def test_every_fixture_directory_is_in_the_variant_run():
    """Each host and IB folder with at least one complete (non-fragment) output takes part."""
    directories = {d for _, d, _ in CASES}
    complete = {
        d
        for d, expected in COVERED.items()
        if any(not isinstance(MODULE_EXPECTED[d][n], Fragment) for n in expected)
    }
    assert complete - directories == set()
    only_fragments = {
        d for d in DIRECTORIES if all((d, p.name) in FRAGMENTS for p in (fixtures_root() / d).iterdir())
    }
    assert set(DIRECTORIES) - only_fragments - directories == set()


MODULE_EXPECTED = {d: e for m in MODULES for d, e in m.COVERS.items()}


@pytest.mark.parametrize("parser,directory,name", CASES, ids=[f"{d}/{n}" for _, d, n in CASES])
def test_a_copy_indented_as_a_whole_reads_the_same(parser, directory, name):
    """Outputs pasted into documents arrive indented as a whole (a code block in a list)."""
    text = read(directory, name)
    try:
        plain = parse(parser, text)
    except ParseError:
        pytest.skip("a fixture this parser refuses on purpose (stated in its own test)")
    for margin in ("    ", "\t", "        "):
        assert parse(parser, textwrap.indent(text, margin)) == plain, f"margin {margin!r}"
