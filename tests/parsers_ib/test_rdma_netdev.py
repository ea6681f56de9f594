import pytest

from runbook.parsers import ParseError, parse

from ._fixtures import fixture_cases, parsed


def _rdma_link_vf(r):
    assert r["links"] == [
        {
            "dev": "mlx5_4",
            "port": 1,
            "state": "ACTIVE",
            "physical_state": "LINK_UP",
            "lid": 8,
            "sm_lid": 1,
            "lmc": 0,
            "subnet_prefix": "fe80:0000:0000:0000",
            "netdev": None,
        }
    ]


def _eth_renamed(r):
    assert [(p["ibdev"], p["port"], p["netdev"], p["state"]) for p in r["ports"]] == [
        ("mlx5_0", 1, "eth01", "Up"),
        ("mlx5_1", 1, "eth02", "Down"),
        ("mlx5_2", 1, "eth03", "Down"),
        ("mlx5_3", 1, "eth04", "Down"),
    ]


def _h100_column_t_commented(r):
    ports = {p["ibdev"]: p for p in r["ports"]}
    assert len(ports) == 12
    assert ports["mlx5_0"]["netdev"] == "ibp26s0" and ports["mlx5_0"]["state"] == "Down"
    assert ports["mlx5_10"]["netdev"] == "ibp204s0"
    assert ports["mlx5_7"]["netdev"] == "enp157s0f0np0" and ports["mlx5_7"]["state"] == "Up"
    ib = sorted(n for n, p in ports.items() if p["netdev"].startswith("ibp"))
    assert len(ib) == 8 and all(ports[n]["state"] == "Down" for n in ib)
    assert sorted(n for n, p in ports.items() if p["state"] == "Up") == ["mlx5_1", "mlx5_7"]


def _lag(r):
    assert r["ports"][0]["ibdev"] == "mlx5_bond_0" and r["ports"][0]["netdev"] == "bond0"
    assert r["ports"][0]["state"] == "Up" and len(r["ports"]) == 1


CASES = {
    ("rdma-link", "IB-VF-in-pod-mlx5_4-lid8-sm_lid1-ACTIVE-LINK_UP.txt"): _rdma_link_vf,
    ("ibdev2netdev", "4xmlx5-eth-renamed-1-Up-3-Down.txt"): _eth_renamed,
    (
        "ibdev2netdev",
        "H100-8xCX7-IB-ibpNNs0-plus-2xCX6-ETH-column-t-with-author-comments.txt",
    ): _h100_column_t_commented,
    ("ibdev2netdev", "RoCE-LAG-mlx5_bond_0-bond0-Up.txt"): _lag,
}


@fixture_cases(CASES)
def test_fixture(directory, name, check):
    check(parsed(directory, name))


def test_rdma_link_ethernet_and_old_iproute2_forms():
    r = parse(
        "rdma-link",
        "link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ens1f0np0\n"
        "1/1: mlx5_1/1: state DOWN physical_state DISABLED netdev ens1f1np1\n",
    )
    assert [(x["dev"], x["state"], x["netdev"], x["lid"]) for x in r["links"]] == [
        ("mlx5_0", "ACTIVE", "ens1f0np0", None),
        ("mlx5_1", "DOWN", "ens1f1np1", None),
    ]


def test_ibdev2netdev_verbose_form():
    line = (
        "0000:3b:00.0 mlx5_0 (MT4117 - MCX4121A-ACAT) CX4121A - ConnectX-4 LX SFP28 fw 14.30.1004 "
        "port 1 (ACTIVE) ==> ens1f0 (Up)\n"
    )
    (p,) = parse("ibdev2netdev", line)["ports"]
    assert (p["pci"], p["ibdev"], p["fw"], p["port_state"], p["netdev"], p["state"]) == (
        "0000:3b:00.0",
        "mlx5_0",
        "14.30.1004",
        "ACTIVE",
        "ens1f0",
        "Up",
    )


def test_ibdev2netdev_garbage_after_good_lines_names_the_line():
    with pytest.raises(ParseError, match="line 2"):
        parse("ibdev2netdev", "mlx5_0 port 1 ==> ib0 (Up)\nmlx5_1 has no port\n")
