"""What an approval records: the commands as they were shown and will run,
rendered with each host's values (never the step's `{{ }}` template), folded
by NodeSet when hosts got different commands. The reason keeps its
"apply confirmed: " / "rollback confirmed: " prefix, which the completion log
reads (runbook/export/completion_log.py)."""

from __future__ import annotations

from ..inventory.load import fold


def approval_reason(action: str, commands: dict[str, str]) -> str:
    by_command: dict[str, list[str]] = {}
    for host, command in commands.items():
        by_command.setdefault(command, []).append(host)
    if len(by_command) == 1:
        return f"{action} confirmed: {next(iter(by_command))}"
    parts = [f"on {fold(hosts)}: {command}" for command, hosts in by_command.items()]
    return f"{action} confirmed:\n" + "\n".join(parts)
