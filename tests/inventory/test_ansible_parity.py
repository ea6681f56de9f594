"""Our reading of each inventory against ansible-core's: the committed output of
`ansible-inventory --list/--host` (regen_expected.py) byte for byte, and the
live tool when it is installed."""

from __future__ import annotations

import json
import shutil

import pytest

from runbook.inventory.load import ansible_host, ansible_list, dumps, load_inventory

from .cases import CASES, SOURCES_DIGESTS, ansible_inventory_cmd, host_fixture, list_fixture, run_concurrently

CASE_HOSTS = [(case, host) for case, (_, hosts) in CASES.items() for host in hosts]
# Live --host runs are slow to start; --list already carries every host's vars.
LIVE_HOSTS = [("precedence", "h2"), ("invdir", "n1"), ("seed", "sm01")]


@pytest.fixture(scope="module")
def inventories():
    return {case: load_inventory(path) for case, (path, _) in CASES.items()}


def current(inventories, case):
    """Fail clearly when an inventory changed after its expected output was generated
    (inventory/seed-cluster.yaml is edited as the runbook grows)."""
    recorded = json.loads(SOURCES_DIGESTS.read_text()).get(case)
    if recorded != inventories[case].sha256:
        pytest.fail(
            f"{CASES[case][0]} changed since its expected output was generated: "
            "run `python tests/inventory/regen_expected.py` and review the diff"
        )
    return inventories[case]


@pytest.mark.parametrize("case", list(CASES))
def test_list_matches_ansible_fixture(inventories, case):
    current(inventories, case)
    expected = list_fixture(case).read_text(encoding="utf-8")
    assert dumps(ansible_list(inventories[case])) + "\n" == expected


@pytest.mark.parametrize(("case", "host"), CASE_HOSTS)
def test_host_matches_ansible_fixture(inventories, case, host):
    current(inventories, case)
    expected = host_fixture(case, host).read_text(encoding="utf-8")
    assert dumps(ansible_host(inventories[case], host)) + "\n" == expected


def test_fixtures_cover_what_the_brief_asks(inventories):
    """Guard against a fixture silently losing its point when edited."""
    nested = json.loads(list_fixture("nested").read_text())
    assert nested["ungrouped"]["hosts"] == ["spare01", "mgmt01"]  # spare02 left it for lab_extra
    assert "switches" in nested["fabric"]["children"] and "switches" not in nested
    assert "monitoring" in nested["all"]["children"]
    ranges = json.loads(list_fixture("ranges").read_text())
    assert ranges["stride"]["hosts"][:8] == [
        "odd1",
        "odd3",
        "odd5",
        "odd7",
        "odd9",
        "even02",
        "even06",
        "even10",
    ]
    assert ranges["_meta"]["hostvars"]["login.example.com"] == {"ansible_port": 2222}
    prec = json.loads(list_fixture("precedence").read_text())["_meta"]["hostvars"]
    assert prec["h1"]["nic"] == {"dev": "mlx5_1"} and prec["h1"]["sibling"] == "aaa_high"
    assert prec["h3"]["level"] == "alpha_child" and prec["h4"]["level"] == "alpha"
    invdir = json.loads(list_fixture("invdir").read_text())["_meta"]["hostvars"]
    assert invdir["n1"]["from_gv_all"] == "group_vars/all.yml" and invdir["n2"]["hv"] == "b.json"


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    if shutil.which("ansible-inventory") is None:
        pytest.skip("ansible-inventory is not installed")
    home = str(tmp_path_factory.mktemp("ansible-home"))
    commands = [ansible_inventory_cmd(path, "--list") for path, _ in CASES.values()]
    commands += [ansible_inventory_cmd(CASES[case][0], "--host", host) for case, host in LIVE_HOSTS]
    outputs = run_concurrently(commands, home)
    lists = dict(zip(CASES, outputs))
    hosts = dict(zip(LIVE_HOSTS, outputs[len(CASES) :]))
    return lists, hosts


@pytest.mark.parametrize("case", list(CASES))
def test_list_matches_live_ansible(inventories, live, case):
    expected = live[0][case]
    ours = ansible_list(inventories[case])
    if '"profile"' not in expected:  # ansible-core < 2.19 prints no _meta.profile
        ours["_meta"].pop("profile")
    assert dumps(ours) + "\n" == expected


@pytest.mark.parametrize(("case", "host"), LIVE_HOSTS)
def test_host_matches_live_ansible(inventories, live, case, host):
    assert dumps(ansible_host(inventories[case], host)) + "\n" == live[1][(case, host)]
