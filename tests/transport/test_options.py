"""Connection options from inventory vars and ~/.ssh/config, Ansible's precedence."""

from __future__ import annotations

from pathlib import Path

import pytest

from runbook.transport.options import TargetResolver, jump_from_ansible_args
from runbook.transport.result import ConnectFailed

CONFIG = """\
Host gpu*
  HostName %h.cluster.example
  User alice
  Port 2200
  IdentityFile ~/.ssh/id_cluster
  UserKnownHostsFile /etc/cluster_known_hosts
  ProxyJump jumper@bastion:2022

Host bastion
  HostName 192.0.2.10
  IdentityFile /keys/bastion

Host sm*
  ProxyJump b1,ops@b2:2200

Host legacy
  ProxyCommand nc %h %p
  HostKeyAlias legacy-alias
"""


@pytest.fixture
def resolver(tmp_path) -> TargetResolver:
    cfg = tmp_path / "config"
    cfg.write_text(CONFIG)
    return TargetResolver([cfg], default_keys=["/keys/sim"])


def test_inventory_vars_alone(tmp_path):
    t = TargetResolver([]).for_host(
        "gpu07",
        {
            "ansible_host": "127.0.1.7",
            "ansible_port": 2222,
            "ansible_user": "root",
            "ansible_ssh_private_key_file": "/keys/k",
            "runbook_known_hosts": "/sim/known_hosts",
        },
    )
    assert (t.name, t.host, t.port, t.user) == ("gpu07", "127.0.1.7", 2222, "root")
    assert t.key_files == ("/keys/k",)
    assert t.known_hosts_files == ("/sim/known_hosts",)
    assert t.jump is None and t.proxy_command is None


def test_defaults_without_vars_or_config():
    t = TargetResolver([]).for_host("node1", {})
    assert (t.host, t.port, t.user, t.key_files) == ("node1", 22, None, ())


def test_ssh_config_fills_what_the_inventory_does_not_say(resolver):
    t = resolver.for_host("gpu07", {})
    assert (t.host, t.port, t.user) == ("gpu07.cluster.example", 2200, "alice")
    assert t.key_files == (str(Path("~/.ssh/id_cluster").expanduser()), "/keys/sim")
    assert t.known_hosts_files == ("/etc/cluster_known_hosts",)
    assert (t.jump.name, t.jump.host, t.jump.port, t.jump.user) == (
        "jumper@bastion:2022",
        "192.0.2.10",
        2022,
        "jumper",
    )
    assert t.jump.key_files == ("/keys/bastion", "/keys/sim")


def test_inventory_vars_win_over_ssh_config(resolver):
    # ansible passes these on ssh's command line, which beats ssh_config;
    # the config is matched against ansible_host, as ssh does.
    t = resolver.for_host(
        "gpu07",
        {
            "ansible_host": "gpu07",
            "ansible_port": 22,
            "ansible_user": "root",
            "ansible_ssh_private_key_file": "/keys/k",
        },
    )
    assert (t.host, t.port, t.user) == ("gpu07.cluster.example", 22, "root")
    assert t.key_files[0] == "/keys/k"


def test_jump_chain(resolver):
    t = resolver.for_host("sm01", {})
    assert t.jump.name == "ops@b2:2200" and t.jump.port == 2200 and t.jump.user == "ops"
    assert t.jump.jump.name == "b1" and t.jump.jump.jump is None


def test_proxy_command_and_host_key_alias(resolver):
    t = resolver.for_host("legacy", {})
    assert t.proxy_command == ("nc", "legacy", "22")
    assert t.host_key_alias == "legacy-alias"


@pytest.mark.parametrize(
    "args,expected",
    [
        ("-o ProxyJump=admin@gw", "admin@gw"),
        ("-o 'ProxyJump=gw1,gw2' -o StrictHostKeyChecking=no", "gw1,gw2"),
        ("-J gw:2022", "gw:2022"),
        ("-Jgw", "gw"),
        ("-C -o Compression=yes", None),
    ],
)
def test_jump_given_the_ansible_way(args, expected):
    assert jump_from_ansible_args({"ansible_ssh_common_args": args}) == expected


def test_ansible_jump_beats_ssh_config(resolver):
    t = resolver.for_host("gpu07", {"ansible_ssh_common_args": "-J other"})
    assert t.jump.name == "other"


def test_endpoint_shared_by_hosts_behind_one_bastion(resolver):
    a, b = resolver.for_host("gpu01", {}), resolver.for_host("gpu02", {})
    assert a.jump.endpoint == b.jump.endpoint
    assert a.endpoint != b.endpoint


def test_bad_port_is_a_clear_reason():
    with pytest.raises(ConnectFailed) as e:
        TargetResolver([]).for_host("n1", {"ansible_port": 70000})
    assert e.value.reason == "bad inventory: n1 has port 70000"


def test_proxy_jump_loop_is_reported(tmp_path):
    cfg = tmp_path / "config"
    cfg.write_text("Host *\n  ProxyJump hop\n")
    with pytest.raises(ConnectFailed) as e:
        TargetResolver([cfg]).for_host("n1", {})
    assert "longer than 8 hops (a loop in ssh_config?)" in e.value.reason
