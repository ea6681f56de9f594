import pytest

from runbook.parsers import ParseError, parse

from ._fixtures import fixture_cases, parsed


def _plain_two_cx6_one_bf2(r):
    assert r["started"] is True
    assert r["modules"] == {"pci": False, "pci_configuration": True}
    assert r["verbose"] is False
    assert [d["device"] for d in r["devices"]] == [
        "/dev/mst/mt4123_pciconf0",
        "/dev/mst/mt4123_pciconf1",
        "/dev/mst/mt41686_pciconf0",
    ]
    assert [d["pci"] for d in r["devices"]] == ["0000:0f:00.0", "0000:92:00.0", "0000:e1:00.0"]
    assert [d["chip_revision"] for d in r["devices"]] == ["00", "00", "01"]
    assert r["devices"][0]["access"] == "PCI configuration cycles access"
    assert r["devices"][0]["rdma"] is None  # plain `mst status` does not say


def _h100_six_cx7(r):
    assert r["started"] is True and r["verbose"] is True
    assert r["count"] == 6
    first, last = r["devices"][0], r["devices"][-1]
    assert first == {
        "device_type": "ConnectX7(rev:0)",
        "device": "/dev/mst/mt4129_pciconf5",
        "pci": "e5:00.0",
        "rdma": "mlx5_5",
        "net": "ibp229s0",
        "numa": 1,
        "access": None,
        "chip_revision": None,
    }
    assert last["device"] == "/dev/mst/mt4129_pciconf0" and last["rdma"] == "mlx5_0"
    assert last["net"] == "ibp65s0" and last["numa"] == 0
    assert [d["numa"] for d in r["devices"]] == [1, 1, 1, 1, 0, 0]


def _sriov_vfs_in_pod(r):
    assert r["started"] is False  # neither MST module loaded inside the pod
    assert r["modules"] == {"pci": False, "pci_configuration": False}
    assert r["count"] == 9
    assert [d["rdma"] for d in r["devices"]][:3] == ["mlx5_5", "mlx5_3", "mlx5_1"]
    by_rdma = {d["rdma"]: d for d in r["devices"]}
    assert by_rdma["mlx5_1"]["device_type"] == "ConnectX7(rev:0)" and by_rdma["mlx5_1"]["pci"] == "37:00.0"
    assert by_rdma["mlx5_0"]["pci"] == "0d:00.0"
    assert by_rdma["mlx5_3"]["net"] == "net1"  # the only row with a NET value
    assert by_rdma["mlx5_5"]["net"] is None and by_rdma["mlx5_5"]["device_type"] is None
    assert all(d["device"] is None and d["numa"] == 0 for d in r["devices"])


CASES = {
    ("mst-status", "mft-4.30.1-2xCX6-mt4123-1xBF2-mt41686-pciconf-only-no-v.txt"): _plain_two_cx6_one_bf2,
    (
        "mst-status-v",
        "H100-node-6xCX7-IB-MST-modules-header-net-ibpNNs0-NUMA-trailing-spaces.txt",
    ): _h100_six_cx7,
    (
        "mst-status-v",
        "mft-CX7-MCX715105AS-2cards-SRIOV-VFs-in-container-new-table-format.txt",
    ): _sriov_vfs_in_pod,
}


@fixture_cases(CASES)
def test_fixture(directory, name, check):
    check(parsed(directory, name))


def test_not_started():
    text = (
        "MST modules:\n------------\n    MST PCI module is not loaded\n"
        "    MST PCI configuration module is not loaded\n\n"
        "MST devices:\n------------\nNo MST devices were found nor MST modules were loaded.\n"
        "You may need to run 'mst start' to load MST modules.\n"
    )
    r = parse("mst-status", text)
    assert r["started"] is False and r["devices"] == []


def test_unknown_line_is_refused_with_its_number():
    with pytest.raises(ParseError, match="line 4"):
        parse("mst-status", "MST modules:\n------------\n    MST PCI module loaded\nsomething else\n")
