"""Host keys of an Ansible YAML inventory: `gpu[01:48]`, `h[a:c]`, `n[1:10:2]`,
`db.example.com:2222`, `10.0.0.[1:3]`, `[::1]:2200`.

Written from the behaviour of ansible-core's `parse_address`
(lib/ansible/parsing/utils/addresses.py) and `expand_hostname_range`
(lib/ansible/plugins/inventory/__init__.py), and checked against them by
tests/inventory/test_hostpattern.py:

- A trailing `:PORT` is split off only when what is left is a valid hostname,
  IPv4 or IPv6 address (each may contain ranges); otherwise the whole key is
  the host name and there is no port.
- Ranges are `[begin:end]` or `[begin:end:step]`, the end inclusive. A begin
  with a leading zero pads every value to its width (begin and end must then
  have the same length); `[8:11]` gives 8 9 10 11. Letter ranges run over
  `a..zA..Z`. Several ranges in one key multiply out, the leftmost varying
  slowest.

One deliberate difference: ansible silently expands a numeric range whose
begin is above its end (`gpu[10:1]`) to no host at all; here that is an
error, like the same mistake in a letter range already is in ansible.
"""

from __future__ import annotations

import functools
import re
import string

__all__ = ["HostPatternError", "parse_host_key", "expand_ranges", "is_ip_address"]


class HostPatternError(ValueError):
    """A host key whose range cannot be expanded; the message says why."""


# Bracketed ranges allowed inside each kind of address (ansible accepts the
# same three shapes: decimal for IPv4, hex for IPv6, letter-or-digit for names).
_NUM_RANGE = r"\[[0-9]+:[0-9]+(?::[0-9]+)?\]"
_HEX_RANGE = r"\[[0-9a-f]+:[0-9a-f]+(?::[0-9]+)?\]"
_ALNUM_RANGE = r"\[(?:[a-z]:[a-z]|[0-9]+:[0-9]+)(?::[0-9]+)?\]"

_V4 = rf"(?:[01]?[0-9]{{1,2}}|2[0-4][0-9]|25[0-5]|{_NUM_RANGE})"
_V6 = rf"(?:[0-9a-f]{{1,4}}|{_HEX_RANGE})"
_LABEL = rf"(?:\w|{_ALNUM_RANGE})(?:[\w-]|{_ALNUM_RANGE})*(?<![_-])"

_IPV4 = re.compile(rf"^(?:{_V4}\.){{3}}{_V4}$", re.I)
# Every IPv6 form has a ':'; compiled only when a name has one (~3 ms, more than
# all the other patterns here together, paid by every start otherwise).
_IPV6_SOURCE = (
    "^(?:"
    + "|".join(
        [
            rf"(?:{_V6}:){{7}}{_V6}",  # 1:2:3:4:5:6:7:8
            rf"(?:{_V6}:){{1,6}}:",  # 1:: .. 1:2:3:4:5:6::
            *(rf"(?:{_V6}:){{{n}}}(?::{_V6}){{1,{7 - n}}}" for n in range(1, 7)),  # a::b forms
            rf":(?::{_V6}){{1,6}}",  # ::1 ..
            rf"{_V6}?::",  # ffff::, ::
            rf"(?:0:){{6}}(?:{_V6}\.){{3}}{_V6}",  # IPv4 inside IPv6
            rf"::(?:ffff:)?(?:{_V6}\.){{3}}{_V6}",
            rf"(?:0:){{5}}ffff:(?:{_V6}\.){{3}}{_V6}",
        ]
    )
    + ")$"
)


@functools.cache
def _ipv6() -> re.Pattern[str]:
    return re.compile(_IPV6_SOURCE, re.I)


def _is_ipv6(name: str) -> bool:
    return ":" in name and _ipv6().match(name) is not None


_HOSTNAME = re.compile(rf"^{_LABEL}(?:\.{_LABEL})*$", re.I)

_BRACKETED_PORT = re.compile(r"^\[(.+)\]:([0-9]+)$")
_TRAILING_PORT = re.compile(r"^((?:[^:\[\]]|\[[^\]]*\])*):([0-9]+)$")


def is_ip_address(name: str) -> bool:
    return bool(_IPV4.match(name)) or _is_ipv6(name)


def _split_port(key: str) -> tuple[str, int | None] | None:
    """(host, port) when `key` is a valid host with an optional port, else None."""
    address, port = key, None
    # Both forms are tried in turn, the second on what the first left (as ansible does).
    for pattern in (_BRACKETED_PORT, _TRAILING_PORT):
        m = pattern.match(address)
        if m:
            address, port = m.group(1), int(m.group(2))
    if _IPV4.match(address) or _is_ipv6(address) or _HOSTNAME.match(address):
        return address, port
    return None


# More names than any real site has from one key: beyond it the range is a typo
# (`gpu[0:99999999]`) that would otherwise allocate until memory runs out.
MAX_RANGE_HOSTS = 100_000


def expand_ranges(pattern: str, limit: int = MAX_RANGE_HOSTS) -> list[str]:
    """Every host name a pattern stands for, in ansible's order (at most `limit`)."""
    if "[" not in pattern:
        return [pattern]
    # The first '[' and the first ']' delimit the range (ansible's reading,
    # kept even for odd keys so that both tools agree on every name).
    parts = pattern.replace("[", "|", 1).replace("]", "|", 1).split("|")
    if len(parts) != 3:
        raise HostPatternError(f"malformed host range in {pattern!r}")
    head, body, tail = parts
    bounds = body.split(":")
    if len(bounds) not in (2, 3):
        hint = " (Ansible ranges use ':', e.g. gpu[01:48])" if "-" in body else ""
        raise HostPatternError(f"host range must be begin:end or begin:end:step, found [{body}]{hint}")
    begin, end = bounds[0] or "0", bounds[1]
    step = bounds[2] if len(bounds) == 3 else "1"
    if not end:
        raise HostPatternError(f"host range must specify end value, found [{body}]")
    width = 0
    if begin[0] == "0" and len(begin) > 1:
        width = len(begin)
        if width != len(end):
            raise HostPatternError(
                f"host range must specify equal-length begin and end formats, found [{body}]"
            )
    values = _range_values(begin, end, step, body)
    if len(values) > limit:
        raise HostPatternError(
            f"host range [{body}] makes one key stand for more than {MAX_RANGE_HOSTS} names"
        )
    names: list[str] = []
    for value in values:
        name = head + (value.zfill(width) if width else value) + tail
        names.extend(expand_ranges(name, limit // len(values)) if "[" in name else [name])
    return names


def _range_values(begin: str, end: str, step: str, body: str):
    """The range's values as a sequence (numbers lazily: its length is known
    before anything is allocated)."""
    letters = string.ascii_letters
    try:
        # str.index: ansible looks the bounds up the same way, so a multi-letter
        # bound that happens to be a run of the alphabet ("ab") is accepted too.
        i_begin, i_end = letters.index(begin), letters.index(end)
    except ValueError:
        i_begin = i_end = -1
    values: list[str] = []
    if i_begin >= 0:
        if i_begin > i_end:
            raise HostPatternError(f"host range must have begin <= end, found [{body}]")
        try:
            values = list(letters[i_begin : i_end + 1 : int(step)])
        except ValueError:  # a bad step: ansible then retries as numbers, which fails below
            i_begin = -1
    if i_begin < 0:
        try:
            numbers = range(int(begin), int(end) + 1, int(step))
            values = _Strings(numbers)
        except ValueError:
            raise HostPatternError(
                f"host range bounds must be numbers or letters and the step a non-zero number, found [{body}]"
            ) from None
    if not values:
        raise HostPatternError(f"host range must have begin <= end, found [{body}]")
    return values


class _Strings:
    """A range of numbers read as strings, without building the list."""

    def __init__(self, numbers: range):
        self.numbers = numbers

    def __len__(self) -> int:
        return len(self.numbers)

    def __iter__(self):
        return (str(n) for n in self.numbers)


def parse_host_key(key: str) -> tuple[list[str], int | None]:
    """Host names and optional port for one key under `hosts:`.

    Raises HostPatternError for a range that cannot be expanded."""
    split = _split_port(key)
    pattern, port = split if split is not None else (key, None)
    return expand_ranges(pattern), port
