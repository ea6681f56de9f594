"""Privileges: run a host's commands through `sudo -n` when its inventory says
so, with Ansible's own variables (docs/site-workflow.md, "Privileges"):

    ansible_become: true           # on a host or a group
    ansible_become_user: root      # default root
    ansible_become_method: sudo    # the only method supported

The whole rendered command (already shell-quoted value by value) becomes one
quoted argument of `/bin/sh -c`, so pipes, loops and redirections run as the
become user, and nothing of the command can reach sudo's own options.
`-n` (non-interactive): a sudo that wants a password fails at once with
"sudo: a password is required" instead of hanging until the timeout."""

from __future__ import annotations

import shlex
from typing import Any

from ..definition.template import TemplateError

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0", ""}


def _flag(value: Any) -> bool:
    """Ansible's booleans: true/yes/on/1 and their opposites, any case."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise TemplateError(f"ansible_become: {value!r} is not a boolean (true/false, yes/no)")


def becomes(variables: dict[str, Any]) -> bool:
    return _flag(variables.get("ansible_become", False))


def wrap(command: str, variables: dict[str, Any]) -> str:
    """The command as it runs on the host: unchanged, or through `sudo -n`."""
    if not becomes(variables):
        return command
    method = str(variables.get("ansible_become_method") or "sudo")
    if method != "sudo":
        raise TemplateError(f"ansible_become_method {method!r}: runbook supports sudo only")
    user = str(variables.get("ansible_become_user") or "root")
    return f"sudo -n -u {shlex.quote(user)} -- /bin/sh -c {shlex.quote(command)}"
