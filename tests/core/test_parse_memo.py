"""parse_output keeps each parser's last few distinct outputs: an output seen
again reads the same without parsing it again (criteria/host.py)."""

from __future__ import annotations

import pytest

from runbook import parsers
from runbook.criteria import host
from runbook.criteria.host import MEMO_PER_PARSER, parse_output
from tests.parsers_host.helpers import read

VV_TEXT = read("lspci-vv", "ConnectX-7-MCX755106AS-HEAT-LnkSta32GTx16.txt")


@pytest.fixture
def counted(monkeypatch):
    """Counts the real parser's calls; the memo starts empty."""
    calls: list[str] = []
    real = parsers.parse

    def parse(name: str, text: str):
        calls.append(name)
        return real(name, text)

    monkeypatch.setattr(host, "_memo", {})
    monkeypatch.setattr(parsers, "parse", parse)
    return calls


def test_an_equal_output_reads_the_same_without_parsing_again(counted):
    first = parse_output("lspci-vv", VV_TEXT)
    again = parse_output("lspci-vv", "".join(list(VV_TEXT)))  # equal text, another object
    assert counted == ["lspci-vv"]
    assert again == first and again[0]["devices"][0]["model"] == "ConnectX-7"
    assert first[0] == parsers.parse("lspci-vv", VV_TEXT)  # what parsing afresh gives


def test_an_unreadable_output_gives_the_same_problem_again(counted):
    first = parse_output("lspci-vv", "no such device here\n")
    again = parse_output("lspci-vv", "no such device here\n")
    assert first[0] is None and first[1].startswith("could not read lspci-vv output: ")
    assert again == first and counted == ["lspci-vv"]


def test_each_parser_keeps_only_its_last_few_outputs(counted):
    texts = [f"{VV_TEXT}\n" + "\n" * i for i in range(MEMO_PER_PARSER + 2)]
    for t in texts:
        parse_output("lspci-vv", t)
    assert len(host._memo["lspci-vv"]) == MEMO_PER_PARSER
    parse_output("lspci-vv", texts[-1])  # still kept
    parse_output("lspci-vv", texts[0])  # the oldest went: parsed again
    assert len(counted) == len(texts) + 1
    # another parser's reading of the same text is its own
    parse_output("lspci", VV_TEXT)
    assert counted[-1] == "lspci"
