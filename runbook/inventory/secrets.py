"""Which inventory values are secrets, and how they are kept out of anything
written for a person (the completion log, its Markdown and HTML report, the
state directory's record of the inventory).

    redact(vars) -> vars        a deep copy with every secret value replaced by REDACTED
    is_secret_name("ipmi_pw")   True

A value is a secret when its name, at any depth (a nested `bmc: {password: x}`
included), looks like one: password, passwd, passphrase, pass, pw, pwd, secret,
token, api key, credential, private key, auth key, a `vault_` name (Ansible's
convention for vaulted variables), or Ansible's connection passwords
(ansible_password, ansible_become_password, ansible_ssh_pass, ...); and when
the value itself is Ansible Vault cipher text (`$ANSIBLE_VAULT;...`),
whatever its name. Matching errs on the side of hiding: a design value named
like a password is hidden too. See docs/security.md.
"""

from __future__ import annotations

import re
from typing import Any

REDACTED = "<redacted>"

# Substrings that make a name secret wherever they appear in it.
_SECRET_PART = re.compile(
    r"pass|secret|token|credential|api[\W_]?key|private[\W_]?key|auth[\W_]?key|"
    r"access[\W_]?key|session[\W_]?key|cookie|^vault[\W_]|[\W_]vault$|^vault$",
    re.IGNORECASE,
)
# Short words that are secret only as a whole word of the name: `ipmi_pw`, `bmcPwd`, `wifi_psk`.
_SECRET_WORDS = {"pw", "pwd", "psk", "otp"}
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
# A key that is not a secret although it ends in "key" (host addressing, design values).
_NOT_SECRET = {"pkey", "pkeys", "host_key", "hostkey", "public_key", "pubkey"}

VAULT_PREFIX = "$ANSIBLE_VAULT;"


def is_secret_name(name: Any) -> bool:
    text = str(name)
    if text.lower() in _NOT_SECRET or text.lower().endswith(("_pkey", "_pkeys", "public_key")):
        return False
    if _SECRET_PART.search(text):
        return True
    return any(w.lower() in _SECRET_WORDS for w in _WORD.findall(text))


def is_secret_value(value: Any) -> bool:
    return isinstance(value, str) and value.lstrip().startswith(VAULT_PREFIX)


def redact(variables: Any) -> Any:
    """A copy of `variables` (dicts and lists at any depth) with secrets replaced
    by REDACTED; the input is not changed."""
    if isinstance(variables, dict):
        return {
            k: (REDACTED if is_secret_name(k) and v not in (None, "") else redact(v))
            for k, v in variables.items()
        }
    if isinstance(variables, (list, tuple)):
        return [redact(v) for v in variables]
    if is_secret_value(variables):
        return REDACTED
    return variables


# How a host is reached: recorded in the log with the design values.
ADDRESSING = (
    "ansible_host",
    "ansible_port",
    "ansible_user",
    "ansible_ssh_host",
    "ansible_ssh_port",
    "ansible_ssh_user",
)


def _strings(value: Any):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def used_roots(runbook: Any) -> set[str]:
    """The top-level variable names the runbook's steps use in a placeholder
    (the store's snapshot adds what their design comparisons read)."""
    from ..definition.template import placeholders

    roots: set[str] = set()
    for step in getattr(runbook, "steps", ()) or ():
        for text in _strings(getattr(step, "definition", {})):
            roots.update(p.split(".")[0] for p in placeholders(text))
    return roots


def run_variables(host_vars: dict, roots: set[str]) -> dict:
    """What the log records of one host: the variables the run used and the
    host's addressing, redacted."""
    keep = set(roots) | set(ADDRESSING)
    return redact({k: v for k, v in host_vars.items() if str(k) in keep})
