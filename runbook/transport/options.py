"""Where and how to connect to one inventory host.

Sources, with Ansible's meaning (inventory values act like ssh command-line
options, so they win over ~/.ssh/config, which still supplies the rest):
  ansible_host / ansible_port / ansible_user / ansible_ssh_private_key_file
  (and their ansible_ssh_* aliases), a ProxyJump given the Ansible way in
  ansible_ssh_common_args / ansible_ssh_extra_args (`-J B` or `-o ProxyJump=B`),
  our own `runbook_known_hosts` (a known_hosts path, e.g. the simulator's),
  and ~/.ssh/config for the host: HostName, Port, User, IdentityFile,
  ProxyJump (chains included), ProxyCommand, HostKeyAlias, UserKnownHostsFile.
Other ssh_config settings (Ciphers, ConnectTimeout, ...) are not applied: the
transport sets those itself. The config is parsed once per host, never per
connection."""

from __future__ import annotations

import getpass
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asyncssh.config import SSHClientConfig

from runbook.transport import ansible_vars
from runbook.transport.result import ConnectFailed

_MAX_JUMPS = 8  # a ProxyJump chain longer than this is a loop in ~/.ssh/config


@dataclass(frozen=True)
class ConnectTarget:
    """Where and how to connect to one host, ~/.ssh/config applied."""

    name: str  # what messages call it: the inventory name, or the jump spec
    host: str  # address or DNS name actually connected to
    port: int
    user: str | None  # None: the local user (as ssh does)
    key_files: tuple[str, ...]
    known_hosts_files: tuple[str, ...] = ()
    host_key_alias: str | None = None
    proxy_command: tuple[str, ...] | None = None
    jump: ConnectTarget | None = None

    @property
    def endpoint(self) -> tuple:
        """Identity of the SSH session: two targets with the same endpoint can share one connection."""
        return (
            self.user,
            self.host,
            self.port,
            self.proxy_command,
            self.jump.endpoint if self.jump else None,
        )


def _as_list(value: Any) -> list[str]:
    if value in (None, ""):
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return [str(value)]


def jump_from_ansible_args(vars_: dict[str, Any]) -> str | None:
    """`-J bastion` or `-o ProxyJump=bastion` in ansible_ssh_common_args/extra_args."""
    for var in ansible_vars.SSH_ARGS:
        raw = vars_.get(var)
        if not raw:
            continue
        try:
            words = shlex.split(str(raw))
        except ValueError:
            continue
        for i, w in enumerate(words):
            nxt = words[i + 1] if i + 1 < len(words) else ""
            if w == "-J" and nxt:
                return nxt
            if w.startswith("-J") and len(w) > 2:
                return w[2:]
            opt = nxt if w == "-o" else (w[2:] if w.startswith("-o") else "")
            key, _, val = opt.partition("=")
            if key.strip().lower() == "proxyjump" and val.strip():
                return val.strip()
    return None


def _parse_port(value: Any, name: str) -> int:
    try:
        port = int(value)
    except (TypeError, ValueError):
        port = -1
    if not 0 < port < 65536:
        raise ConnectFailed(f"bad inventory: {name} has port {value!r}")
    return port


def _split_hop(hop: str) -> tuple[str | None, str, int | None]:
    """`user@host:port` (or `ssh://user@host:port`) -> (user, host, port)."""
    hop = hop.removeprefix("ssh://")
    user, _, rest = hop.rpartition("@")
    host, port = rest, None
    if rest.startswith("["):  # [v6addr]:port
        host, _, tail = rest[1:].partition("]")
        if tail.startswith(":"):
            port = int(tail[1:])
    elif rest.count(":") == 1:
        host, p = rest.split(":")
        port = int(p)
    return (user or None), host, port


class TargetResolver:
    """Builds ConnectTargets, caching one per host (config parsing is not free)."""

    def __init__(self, config_paths: Sequence[Path], default_keys: Sequence[str] = ()):
        self.config_paths = [Path(p).expanduser() for p in config_paths]
        self.default_keys = [str(Path(k).expanduser()) for k in default_keys]
        self._local_user = getpass.getuser()
        self._cache: dict[str, ConnectTarget] = {}

    def for_host(self, name: str, vars_: dict[str, Any]) -> ConnectTarget:
        t = self._cache.get(name)
        if t is None:
            t = self._cache[name] = self._resolve(name, vars_)
        return t

    def _config(self, host: str, user: str | None, port: int | None) -> SSHClientConfig:
        return SSHClientConfig.load(
            None,
            self.config_paths,
            False,
            False,
            False,
            self._local_user,
            user if user else (),
            host,
            port if port else (),
        )

    def _resolve(self, name: str, vars_: dict[str, Any]) -> ConnectTarget:
        target = str(ansible_vars.first(vars_, ansible_vars.ADDRESS) or name)
        port_var = ansible_vars.first(vars_, ansible_vars.PORT)
        port = _parse_port(port_var, name) if port_var is not None else None
        user_var = ansible_vars.first(vars_, ansible_vars.USER)
        user = str(user_var) if user_var is not None else None
        keys = _as_list(ansible_vars.first(vars_, ansible_vars.KEY_FILE))
        known = _as_list(vars_.get("runbook_known_hosts"))
        return self._build(name, target, user, port, keys, known, jump_from_ansible_args(vars_), depth=0)

    def _build(
        self,
        name: str,
        target: str,
        user: str | None,
        port: int | None,
        keys: list[str],
        known: list[str],
        jump_spec: str | None,
        depth: int,
        jump: ConnectTarget | None = None,
        config_jump: bool = True,
    ) -> ConnectTarget:
        if depth > _MAX_JUMPS:
            raise ConnectFailed(
                f"unreachable: ProxyJump chain for {name} is longer than "
                f"{_MAX_JUMPS} hops (a loop in ssh_config?)"
            )
        cfg = self._config(target, user, port)
        key_files = [
            str(Path(k).expanduser()) for k in [*keys, *_as_list(cfg.get("IdentityFile")), *self.default_keys]
        ]
        known_files = [*known, *(f for f in _as_list(cfg.get("UserKnownHostsFile")) if f.lower() != "none")]
        proxy_cmd = cfg.get("ProxyCommand")
        spec = jump_spec or (cfg.get("ProxyJump") if config_jump else None)
        if spec:
            jump = self._jump_chain(str(spec), depth)
        return ConnectTarget(
            name=name,
            host=str(cfg.get("Hostname") or target),
            port=int(cfg.get("Port") or 22),
            user=cfg.get("User"),
            key_files=tuple(dict.fromkeys(key_files)),
            known_hosts_files=tuple(str(Path(f).expanduser()) for f in dict.fromkeys(known_files)),
            host_key_alias=cfg.get("HostKeyAlias"),
            proxy_command=tuple(shlex.split(proxy_cmd)) if proxy_cmd and not jump else None,
            jump=jump,
        )

    def _jump_chain(self, spec: str, depth: int) -> ConnectTarget:
        """`a,b,c`: connect to a, then b through a, then c through b."""
        prev: ConnectTarget | None = None
        for hop in [h.strip() for h in spec.split(",") if h.strip()]:
            try:
                u, h, p = _split_hop(hop)
            except ValueError:
                raise ConnectFailed(f"unreachable: bad ProxyJump {spec!r}") from None
            # Only the first hop may take its own ProxyJump from ssh_config.
            prev = self._build(hop, h, u, p, [], [], None, depth + 1, jump=prev, config_jump=prev is None)
        assert prev is not None
        return prev
