"""hca.of_part answers from its cache what a scan of the models answers."""

from __future__ import annotations

from runbook.sim import hca


def scanned(part: str) -> hca.HcaModel:
    for m in hca.MODELS.values():
        if any(p == part for p, _, _ in m.parts.values()):
            return m
    return hca.CONNECTX6


def test_every_part_number_and_an_unknown_one_map_as_a_scan_does():
    parts = [p for m in hca.MODELS.values() for p, _, _ in m.parts.values()] + ["MCX-UNKNOWN", ""]
    for _ in range(2):  # the second time from the cache
        for part in parts:
            assert hca.of_part(part) is scanned(part), part
