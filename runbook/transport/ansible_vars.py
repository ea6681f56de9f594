"""The inventory variables the transport reads, Ansible's names in its order of
preference, and the lookup: one place for options.py (the connect targets) and
predial.py (the addresses dialled before asyncssh is imported), which must agree.
Standard library only, for predial.py."""

from __future__ import annotations

from typing import Any

ADDRESS = ("ansible_host", "ansible_ssh_host")
PORT = ("ansible_port", "ansible_ssh_port")
USER = ("ansible_user", "ansible_ssh_user")
KEY_FILE = ("ansible_ssh_private_key_file", "ansible_private_key_file")
SSH_ARGS = ("ansible_ssh_common_args", "ansible_ssh_extra_args")  # where a jump host is given


def first(vars_: dict[str, Any], names: tuple[str, ...]) -> Any:
    """The first of `names` set to something other than nothing or ''."""
    for n in names:
        if vars_.get(n) not in (None, ""):
            return vars_[n]
    return None
