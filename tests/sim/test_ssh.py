"""The lab over real SSH: OpenSSH with the written ssh_config and known_hosts, and
asyncssh with verified host keys."""

import asyncio
import shutil
import subprocess

import asyncssh
import pytest

from tests.sim.conftest import connect_node

SSH = shutil.which("ssh")


async def _ssh(lab, host: str, command: str, *extra: str):
    proc = await asyncio.create_subprocess_exec(
        SSH,
        "-F",
        str(lab.ssh_config),
        "-o",
        "StrictHostKeyChecking=yes",
        "-o",
        "BatchMode=yes",
        *extra,
        host,
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = await proc.communicate()
    return out.decode(), err.decode(), proc.returncode


@pytest.mark.skipif(SSH is None, reason="no OpenSSH client (ssh) on this machine")
async def test_openssh_client_with_written_config(make_lab):
    lab = await make_lab(8, {"gpu07": ["link_type_eth"], "gpu03": ["unreachable"]})
    out, err, code = await _ssh(lab, "gpu07", "ibstat mlx5_0 | grep 'Link layer'")
    assert (out, code) == ("\t\tLink layer: Ethernet\n", 0), err
    out, err, code = await _ssh(lab, "sm01", "cat /etc/opensm/partitions.conf | grep -c =full")
    assert code == 0 and int(out) > 8
    out, err, code = await _ssh(lab, "gpu05", "lspci -d 15b3: | wc -l; nosuchtool")
    assert (out, code) == ("7\n", 127) and "bash: nosuchtool: command not found" in err
    out, err, code = await _ssh(lab, "gpu03", "hostname")
    assert code == 255 and "Connection refused" in err
    out, err, code = await _ssh(lab, "gpu02", "tty >/dev/null; echo ok", "-tt")  # a PTY is accepted
    assert "ok" in out and code == 0, err


@pytest.mark.skipif(SSH is None, reason="no OpenSSH client (ssh) on this machine")
async def test_openssh_refuses_a_changed_host_key(make_lab):
    lab = await make_lab(2, {"gpu02": ["host_key_changed"]})
    out, err, code = await _ssh(lab, "gpu02", "hostname")
    assert code == 255 and "Host key verification failed" in err, err
    out, _, code = await _ssh(lab, "gpu01", "hostname")
    assert (out, code) == ("gpu01\n", 0)


async def test_asyncssh_many_concurrent_sessions(make_lab):
    lab = await make_lab(16)

    async def one(name):
        async with connect_node(lab, name) as conn:
            results = await asyncio.gather(*(conn.run(f"echo {k}; hostname") for k in range(4)))
            return [r.stdout for r in results]

    names = lab.names()
    outputs = await asyncio.gather(*(one(n) for n in names))
    for name, outs in zip(names, outputs):
        assert outs == [f"{k}\n{name}\n" for k in range(4)]


async def test_only_the_generated_client_key_is_accepted(make_lab, tmp_path):
    lab = await make_lab(1)
    node = lab.node("gpu01")
    other = asyncssh.generate_private_key("ssh-ed25519")
    with pytest.raises(asyncssh.PermissionDenied):
        await asyncssh.connect(
            node.address, node.port, username="root", client_keys=[other], known_hosts=str(lab.known_hosts)
        )


async def test_reboot_drops_the_connection_and_comes_back(make_lab):
    lab = await make_lab(1, reboot_seconds=0.3)
    node = lab.node("gpu01")
    kw = dict(username="root", client_keys=[str(lab.client_key)], known_hosts=str(lab.known_hosts))
    conn = await asyncssh.connect(node.address, node.port, **kw)
    result = await conn.run("reboot")
    assert result.exit_status == 0
    await asyncio.wait_for(conn.wait_closed(), 2)  # dropped by the "reboot"
    with pytest.raises(OSError):
        await asyncssh.connect(node.address, node.port, **kw)
    await node.wait_up(5)
    async with asyncssh.connect(node.address, node.port, **kw) as conn:
        assert (await conn.run("cat /proc/uptime | cut -d. -f1")).stdout == "0\n"
    assert node.state.boot_count == 2


async def test_stdin_over_ssh_feeds_cat_into_a_file(make_lab):
    lab = await make_lab(1)
    node = lab.node("sm01")
    async with asyncssh.connect(
        node.address,
        node.port,
        username="root",
        client_keys=[str(lab.client_key)],
        known_hosts=str(lab.known_hosts),
    ) as conn:
        result = await conn.run("cat > /tmp/p.conf && wc -l < /tmp/p.conf", input="a\nb\n")
        assert result.stdout == "2\n"
        result = await conn.run("hostname")  # no stdin needed: answers without waiting for EOF
        assert result.stdout == "sm01\n"


async def test_a_loop_stops_once_its_channel_is_closed(make_lab):
    """sim/session.py: the shell asks the channel before every command (hung_up)."""
    lab = await make_lab(1)
    node = lab.node("gpu01")
    kw = dict(username="root", client_keys=[str(lab.client_key)], known_hosts=str(lab.known_hosts))
    async with asyncssh.connect(node.address, node.port, **kw) as conn:
        process = await conn.create_process("while true; do echo tick >> /tmp/t; sleep 0.05; done")
        await asyncio.sleep(0.3)
        process.close()
        await asyncio.sleep(0.2)
        before, _, _ = await node.run("wc -l < /tmp/t")
        await asyncio.sleep(0.3)
        after, _, _ = await node.run("wc -l < /tmp/t")
    assert int(before) > 0 and after == before


async def test_a_connection_costs_the_node_no_host_name_lookup(make_lab, monkeypatch):
    # asyncssh's server options look up the machine's FQDN for GSS unless told there is
    # none (sim/lab.py gss_host=None): a lookup per accepted connection, for nothing
    import socket

    lab = await make_lab(1)
    looked_up = []
    monkeypatch.setattr(socket, "getfqdn", lambda *a: looked_up.append(a) or "x.example")
    monkeypatch.setattr(socket, "gethostname", lambda: "x")  # no '.': asyncssh would ask getfqdn
    name = lab.names()[0]
    async with connect_node(lab, name) as conn:
        assert (await conn.run("hostname")).stdout == f"{name}\n"
    assert looked_up == []


async def _read_until(process, text: str, timeout: float = 10.0) -> str:
    seen = ""
    async with asyncio.timeout(timeout):
        while text not in seen:
            chunk = await process.stdout.read(4096)
            if not chunk:
                break
            seen += chunk
    return seen


async def test_an_interactive_shell_with_a_terminal_echoes_and_runs_lines(make_lab):
    """A terminal session (an engineer's `ssh node`) gets asyncssh's line editor:
    what is typed is echoed, Enter (CR) ends the line, output lines end in CRLF.
    The lab's connections have the editor off for plain exec (sim/exec_session.py)."""
    lab = await make_lab(1)
    async with connect_node(lab, "gpu01") as conn:
        process = await conn.create_process(term_type="xterm", term_size=(80, 24))
        banner = await _read_until(process, "]# ")
        assert banner.startswith("Last login") and banner.endswith("[root@gpu01 ~]# ")
        process.stdin.write("hostname\r")
        seen = await _read_until(process, "gpu01\r\n[root@gpu01 ~]# ")
        assert seen.startswith("hostname")  # the echo of what was typed
        process.stdin.write("exit\r")
        result = await asyncio.wait_for(process.wait(), 10)
        assert result.exit_status == 0


async def test_a_command_with_a_terminal_ends_its_lines_with_crlf(make_lab):
    lab = await make_lab(1)
    async with connect_node(lab, "gpu01") as conn:
        result = await conn.run("echo one; echo two", term_type="xterm")
    assert (result.stdout, result.exit_status) == ("one\r\ntwo\r\n", 0)


async def test_an_exec_without_a_terminal_sends_its_bytes_as_they_are(make_lab):
    lab = await make_lab(1)
    async with connect_node(lab, "gpu01") as conn:
        result = await conn.run("echo one; echo two >&2; exit 3")
    assert (result.stdout, result.stderr, result.exit_status) == ("one\n", "two\n", 3)


async def test_a_subsystem_is_refused(make_lab):
    lab = await make_lab(1)
    async with connect_node(lab, "gpu01") as conn:
        with pytest.raises(asyncssh.ChannelOpenError):
            await conn.start_sftp_client()
        assert (await conn.run("hostname")).stdout == "gpu01\n"  # the connection goes on
