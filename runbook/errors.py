"""Errors and exit codes: the exit codes are a documented contract (docs/architecture.md, "Exit codes")."""

from __future__ import annotations

from dataclasses import dataclass

EXIT_OK = 0  # all targeted hosts pass
EXIT_FAIL = 1  # some hosts fail
EXIT_USAGE = 2  # usage or input error
EXIT_UNKNOWN = 3  # some unknown and none fail
EXIT_LOCKED = 4  # state lock held by another process
EXIT_UNTRUSTED = 5  # verify-log: the log and signature are intact, but no trusted signer was given


@dataclass(frozen=True)
class Problem:
    """One problem found in an input file, printed as `FILE:LINE: message`."""

    file: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}"


class RunbookError(Exception):
    """Base of every error the CLI turns into a message and an exit code."""

    exit_code = EXIT_USAGE


class InputError(RunbookError):
    """One or more problems in user-written files (steps, inventory, scenario)."""

    def __init__(self, problems: list[Problem] | Problem):
        if isinstance(problems, Problem):
            problems = [problems]
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class UsageError(RunbookError):
    """A bad command-line argument."""


class LockHeld(RunbookError):
    exit_code = EXIT_LOCKED


def os_error(exc: OSError) -> str:
    """`FILE: Permission denied` (the one line an OSError is shown as)."""
    what = exc.strerror or str(exc)
    return f"{exc.filename}: {what}" if exc.filename else what
