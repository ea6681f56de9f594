"""ProxyJump: hosts behind a bastion share one bastion connection, and the
bastion's host key is checked like any other."""

from __future__ import annotations

import asyncio

import pytest

from runbook.definition.model import Host
from runbook.transport import HostKeyPolicy
from tests.transport.conftest import known_hosts
from tests.transport.loopback_ssh import LoopbackServer


@pytest.fixture
async def bastion(keys):
    srv = await LoopbackServer(keys.host2, keys.client).start()
    yield srv
    await srv.stop()


def _ssh_config(tmp_path, bastion, target):
    cfg = tmp_path / "ssh_config"
    cfg.write_text(f"""\
Host bastion
  HostName 127.0.0.1
  Port {bastion.port}
  User root
Host node*
  HostName 127.0.0.1
  Port {target.port}
  User root
  ProxyJump bastion
""")
    return cfg


async def test_hosts_behind_a_bastion_share_one_bastion_connection(server, bastion, make_transport, tmp_path):
    hosts = {f"node{i}": Host(f"node{i}") for i in range(3)}
    t = make_transport(
        hosts,
        HostKeyPolicy([known_hosts(tmp_path, server, bastion)]),
        ssh_config=[_ssh_config(tmp_path, bastion, server)],
    )
    results = await asyncio.gather(*(t.run(h, f"echo {h}", timeout=5) for h in hosts))
    assert [r.stdout for r in results] == [f"{h}\n" for h in hosts]
    assert bastion.stats.connections == 1
    assert bastion.stats.forwards == [("127.0.0.1", server.port)] * 3
    assert bastion.stats.execs == []  # the bastion only forwards
    assert server.stats.connections == 3
    assert t.connected() == set(hosts)


async def test_proxy_jump_given_in_ansible_ssh_common_args(server, bastion, make_transport, tmp_path):
    hosts = {
        "n1": Host(
            "n1",
            {
                "ansible_host": "127.0.0.1",
                "ansible_port": server.port,
                "ansible_user": "root",
                "ansible_ssh_common_args": f"-o ProxyJump=root@127.0.0.1:{bastion.port}",
            },
        )
    }
    t = make_transport(hosts, HostKeyPolicy([known_hosts(tmp_path, server, bastion)]))
    assert (await t.run("n1", "echo via", timeout=5)).stdout == "via\n"
    assert bastion.stats.forwards == [("127.0.0.1", server.port)]


async def test_unknown_bastion_key_is_refused(server, bastion, make_transport, tmp_path):
    hosts = {"node1": Host("node1")}
    t = make_transport(
        hosts,
        HostKeyPolicy([known_hosts(tmp_path, server)]),  # bastion unknown
        ssh_config=[_ssh_config(tmp_path, bastion, server)],
    )
    r = await t.run("node1", "true", timeout=5)
    assert r.unknown_reason == "host key refused: no known key for bastion (use --trust-new-hosts to pin it)"
    assert server.stats.connections == 0 and bastion.stats.forwards == []


async def test_target_unreachable_behind_the_bastion(server, bastion, make_transport, tmp_path):
    await server.stop()  # nothing listens on the target port any more
    hosts = {"node1": Host("node1")}
    t = make_transport(
        hosts,
        HostKeyPolicy([known_hosts(tmp_path, server, bastion)]),
        ssh_config=[_ssh_config(tmp_path, bastion, server)],
    )
    r = await t.run("node1", "true", timeout=5)
    assert r.unknown_reason.startswith("unreachable")
    assert "via bastion" in r.unknown_reason
    assert r.started_remote is False
