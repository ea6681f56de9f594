from runbook.parsers import parse

from ._fixtures import fixture_cases, parsed


def _dell_8_of_12(r):
    assert [d["hca_id"] for d in r["devices"]] == [
        "mlx5_0",
        "mlx5_3",
        "mlx5_4",
        "mlx5_5",
        "mlx5_6",
        "mlx5_9",
        "mlx5_10",
        "mlx5_11",
    ]
    dev = r["by_name"]["mlx5_0"]
    assert dev["transport"] == "InfiniBand" and dev["fw_ver"] == "28.41.1000"
    assert dev["node_guid"] == "0x58a2e103001a677e" and dev["board_id"] == "DEL0000000036"
    assert dev["vendor_part_id"] == 4129 and dev["phys_port_cnt"] == 1
    port = dev["ports"]["1"]
    assert (port["state"], port["state_num"]) == ("PORT_ACTIVE", 4)
    assert port["max_mtu"] == 4096 and port["active_mtu"] == 4096 and port["active_mtu_code"] == 5
    assert port["sm_lid"] == 5790 and port["port_lid"] == 3697 and port["port_lmc"] == 0
    assert [p["port_lid"] for p in r["ports"]] == [3697, 3705, 3714, 3713, 3719, 3732, 3726, 3735]
    assert {p["sm_lid"] for p in r["ports"]} == {5790}


def _cx6_sm_on_host(r):
    (dev,) = r["devices"]
    assert dev["fw_ver"] == "20.41.1000" and dev["vendor_part_id"] == 4123
    assert dev["board_id"] == "MT_0000000222" and dev["sys_image_guid"] == "0xa088c203009605fc"
    (port,) = r["ports"]
    assert port["hca_id"] == "mlx5_0" and port["sm_lid"] == port["port_lid"] == 35
    assert port["link_layer"] == "InfiniBand"


def _dgx_spark_eth(r):
    names = [d["hca_id"] for d in r["devices"]]
    assert names == ["rocep1s0f0", "rocep1s0f1", "roceP2p1s0f0", "roceP2p1s0f1"]
    assert [p["state"] for p in r["ports"]] == ["PORT_DOWN", "PORT_ACTIVE", "PORT_DOWN", "PORT_ACTIVE"]
    assert [p["active_mtu"] for p in r["ports"]] == [1024, 4096, 1024, 4096]
    assert all(p["link_layer"] == "Ethernet" and p["port_lid"] == 0 for p in r["ports"])
    assert r["by_name"]["roceP2p1s0f1"]["node_guid"] == "0x4cbb4703002d1a1b"
    assert r["by_name"]["rocep1s0f0"]["board_id"] == "NVD0000000087"


CASES = {
    (
        "ibv_devinfo",
        "8xCX7-MT4129-Dell-DEL0000000036-IB-active-sm_lid5790-8-of-12-devices.txt",
    ): _dell_8_of_12,
    ("ibv_devinfo", "ConnectX-6-MT4123-fw20.41-IB-PORT_ACTIVE-sm_lid-eq-port_lid.txt"): _cx6_sm_on_host,
    ("ibv_devinfo", "DGX-Spark-CX7-rocep-netdev-style-names-2-Down-2-Active-ETH.txt"): _dgx_spark_eth,
}


@fixture_cases(CASES)
def test_fixture(directory, name, check):
    check(parsed(directory, name))


def test_verbose_flag_lists_are_kept():
    text = (
        "hca_id:\tmlx5_0\n\ttransport:\t\t\tInfiniBand (0)\n"
        "\tdevice_cap_flags:\t\t0x21361c36\n\t\t\t\t\tBAD_PKEY_CNTR\n\t\t\t\t\tBAD_QKEY_CNTR\n"
        "\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_INIT (2)\n\t\t\tGID[  0]:\t\tfe80:0000:0000:0000:0002:c903:0000:2f79\n"
    )
    r = parse("ibv_devinfo", text)
    assert r["devices"][0]["device_cap_flags"] == ["0x21361c36", "BAD_PKEY_CNTR", "BAD_QKEY_CNTR"]
    assert r["ports"][0]["state"] == "PORT_INIT"
    assert r["ports"][0]["GID[  0]"] == "fe80:0000:0000:0000:0002:c903:0000:2f79"


def test_no_devices_is_a_fact_not_an_error():
    r = parse("ibv_devinfo", "No IB devices found\n")
    assert r["devices"] == [] and r["message"] == "No IB devices found"
