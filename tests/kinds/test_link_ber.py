"""mlxlink-per-device on every real mlxlink output, and the link-ber design
comparator on it (the simulator's layout is checked in test_sim_kinds)."""

from __future__ import annotations

import pytest

from runbook import parsers
from runbook.criteria.designs.linkber import link_ber
from runbook.parsers.base import ParseError
from tests.steps.helpers import FIXTURES, seed_vars

FILES = sorted((FIXTURES / "mlxlink").glob("*"))


def test_there_are_real_mlxlink_outputs():
    assert len(FILES) >= 3


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[:40])
def test_every_real_output_reads_as_one_device(path):
    text = path.read_text()
    rec = parsers.parse("mlxlink-per-device", f"### mlxlink -d mlx5_0\n{text}")
    [port] = rec["ports"]
    assert port["device"] == "mlx5_0" and port["error"] is None
    assert port["state"] == "Active" and port["fec"]
    # the same output twice, under two devices, gives two entries
    rec = parsers.parse("mlxlink-per-device", f"### mlxlink -d mlx5_0\n{text}### mlxlink -d mlx5_1\n{text}")
    assert list(rec["by_device"]) == ["mlx5_0", "mlx5_1"]


def test_ber_values_of_the_output_with_counters():
    [path] = [p for p in FILES if "-m-c-" in p.name]
    port = parsers.parse("mlxlink-per-device", "### mlxlink -d mlx5_0\n" + path.read_text())["ports"][0]
    assert port["effective_ber"] == pytest.approx(1.5e-254) and port["effective_errors"] == 0


def test_no_marker_is_refused_and_a_foreign_block_is_named():
    with pytest.raises(ParseError):
        parsers.parse("mlxlink-per-device", FILES[0].read_text())
    rec = parsers.parse("mlxlink-per-device", '### mlxlink -d mlx5_3\n-E- Failed to open device: "mlx5_3"\n')
    assert rec["ports"][0]["error"]


def _port(dev, **over):
    base = {
        "device": dev,
        "error": None,
        "state": "Active",
        "fec": "RS-FEC - (544,514) + PLR",
        "effective_ber": 1.5e-254,
        "raw_ber": 1e-12,
        "symbol_errors": 0,
    }
    return {**base, **over}


def test_link_ber_names_the_bad_port_only():
    v = seed_vars("gpu01")
    devs = [n["dev"] for n in v["compute_nics"]]
    ports = {d: _port(d) for d in devs}
    assert link_ber({"by_device": ports}, v) == []
    ports["mlx5_2"] = _port("mlx5_2", effective_ber=2e-12, raw_ber=3e-5, symbol_errors=12)
    assert link_ber({"by_device": ports}, v) == [
        "mlx5_2 (rail 3): effective BER 2E-12, designed ≤ 1E-12",
        "mlx5_2 (rail 3): raw BER 3E-05, designed ≤ 1E-08",
        "mlx5_2 (rail 3): 12 symbol errors",
    ]
    ports["mlx5_1"] = _port("mlx5_1", fec="No FEC")
    assert "mlx5_1 (rail 2): FEC 'No FEC', designed RS-FEC" in link_ber({"by_device": ports}, v)
    del ports["mlx5_0"]
    assert "mlx5_0 (rail 1): no mlxlink output for it" in link_ber({"by_device": ports}, v)


def test_without_ber_it_cannot_judge():
    v = seed_vars("gpu01")
    ports = {n["dev"]: _port(n["dev"], effective_ber=None) for n in v["compute_nics"]}
    with pytest.raises(ValueError):  # judged unknown by the engine, never passed
        link_ber({"by_device": ports}, v)
