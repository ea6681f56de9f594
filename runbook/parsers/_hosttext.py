"""Small text helpers shared by the host-side parsers (nvidia-smi, lspci,
dmidecode, numactl, sysfs, ...). Not a parser module itself: the leading
underscore keeps the registry from scanning it."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NoReturn

from .base import ParseError

# Compiled once (parsers run on every output of every host).
_CPU_RANGE = re.compile(r"(\d+)(?:-(\d+))?")
_NOT_SNAKE = re.compile(r"[^0-9a-z]+")
_INT = re.compile(r"-?\d+")


@lru_cache(maxsize=64)
def _with_unit(unit: str) -> re.Pattern[str]:
    return re.compile(r"\s*(-?\d+(?:\.\d+)?)\s*" + re.escape(unit) + r"\s*")


def lines_of(text: str) -> list[str]:
    """Lines without their line ends (CRLF pastes included), trailing spaces kept."""
    return [line.rstrip("\r") for line in text.splitlines()]


def preview(text: str, limit: int = 80) -> str:
    """The first non-blank line, shortened, for 'found ...' in error messages."""
    for line in lines_of(text):
        if line.strip():
            line = line.strip()
            return repr(line if len(line) <= limit else line[:limit] + "...")
    return "empty output"


def fail(expected: str, text: str) -> NoReturn:
    raise ParseError(f"expected {expected}; found {preview(text)}")


def cpulist(text: str) -> list[int]:
    """Kernel cpulist syntax ('0-31', '48-95,144-191', '0,2,4') -> sorted CPU ids."""
    cpus: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        m = _CPU_RANGE.fullmatch(part)
        if not m:
            raise ParseError(f"expected a CPU list like '0-31,64-95'; found {text!r}")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        cpus.update(range(lo, hi + 1))
    return sorted(cpus)


@lru_cache(maxsize=4096)  # the same few hundred keys, in every output of every host
def snake(key: str) -> str:
    """'Product Name' -> 'product_name', 'GPU T.Limit Temp' -> 'gpu_t_limit_temp'."""
    return _NOT_SNAKE.sub("_", key.strip().lower()).strip("_")


def int_or_none(value: str | None) -> int | None:
    if value is None:
        return None
    value = value.strip()
    return int(value) if _INT.fullmatch(value) else None


def float_or_none(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return float(value.strip())
    except ValueError:
        return None


def number_with_unit(value: str | None, unit: str) -> float | None:
    """'46068 MiB' / '33.44 W' / '30 C' -> the number, None for 'N/A' and friends."""
    if value is None:
        return None
    m = _with_unit(unit).fullmatch(value)
    return float(m.group(1)) if m else None


# Launcher labels in front of every line of a multi-rank job: `srun -l` ("0: ",
# " 12: ") and Open MPI `mpirun --tag-output` ("[1,0]<stdout>:").
_SRUN_LABEL = re.compile(r"^\s*(?P<id>\d+):\s")
_MPI_LABEL = re.compile(r"^\[(?P<id>\d+,\d+)\]<(?:stdout|stderr|stddiag)>:\s?")


def strip_rank_label(line: str) -> tuple[str, str | None]:
    """(line without its launcher label, "srun" | "mpirun" | None)."""
    line, kind, _ = split_rank_label(line)
    return line, kind


def split_rank_label(line: str) -> tuple[str, str | None, str | None]:
    """(line without its label, "srun" | "mpirun" | None, the rank it names: "0", "1,0")."""
    m = _MPI_LABEL.match(line)
    if m:
        return line[m.end() :], "mpirun", m["id"]
    m = _SRUN_LABEL.match(line)
    if m:
        return line[m.end() :], "srun", m["id"]
    return line, None, None
