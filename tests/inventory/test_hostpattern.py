"""Host keys (`gpu[01:48]`, `h:2222`, ...) expanded by us and by ansible-core's
own parse_address + expand_hostname_range, run in a subprocess."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

from runbook.inventory.hostpattern import HostPatternError, is_ip_address, parse_host_key

from .cases import ansible_env

KEYS = [
    "gpu[01:48]",
    "h[a:c]",
    "n[1:10:2]",
    "x[0:3]",
    "x[00:03]",
    "x[1:03]",
    "x[:3]",
    "x[09:11]",
    "x[9:11]",
    "x[08:10:2]",
    "x[098:101]",
    "x[a:c:2]",
    "x[x:B]",
    "x[A:z]",
    "x[z:A]",
    "x[ab:cd]",
    "x[a:k:5]",
    "x[1:3]y[a:b]z",
    "r[1:2]n[01:03]",
    "UPPER[A:C]",
    "t[0:20:7]x",
    "h:22",
    "h[1:2]:22",
    "10.0.0.[1:3]",
    "10.0.0.[1:3]:22",
    "[10.0.0.1]:22",
    "[::1]:22",
    "fe80::1",
    "::",
    "fe80::[a:c]",
    "[fe80::[a:c]]:22",
    "2001:db8::1",
    "1.2.3.4:5",
    "256.1.1.1:22",
    "host_name",
    "bad_:22",
    "bad-:22",
    "a..b:22",
    "a b:22",
    ":22",
    "h:0",
    "h.example.com:2222",
    "ünïcode:22",
    "[h[1:2]]:22",
    "x[a:c]:22",
    "[host:22]:33",
    # malformed ranges: errors in both
    "x[1-3]",
    "x[1:3",
    "x[1:]",
    "x[1:2:3:4]",
    "x[01:3]",
    "x[1:5:0]",
    "x[a:e:0]",
    "x[1:3]]",
    "x[[1:3]]",
    "x]1:3[",
    # begin above end: ansible yields no host for numbers (we refuse), refuses letters
    "x[5:1]",
    "x[c:a]",
]

ANSIBLE_SCRIPT = r"""
import json, sys
from ansible.parsing.utils.addresses import parse_address
from ansible.plugins.inventory import expand_hostname_range
out = {}
for key in json.load(sys.stdin):
    try:
        try:
            pattern, port = parse_address(key, allow_ranges=True)
        except Exception:
            pattern, port = key, None
        names = expand_hostname_range(pattern) if "[" in pattern else [pattern]
        out[key] = [names, port]
    except Exception as exc:
        out[key] = "error: " + str(exc)
json.dump(out, sys.stdout)
"""


@pytest.fixture(scope="module")
def ansible_results(tmp_path_factory):
    if importlib.util.find_spec("ansible") is None:
        pytest.skip("ansible-core is not importable")
    home = str(tmp_path_factory.mktemp("ansible-home"))
    proc = subprocess.run(
        [sys.executable, "-c", ANSIBLE_SCRIPT],
        input=json.dumps(KEYS),
        text=True,
        capture_output=True,
        env=ansible_env(home),
        cwd=home,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("key", KEYS)
def test_same_names_and_port_as_ansible(ansible_results, key):
    theirs = ansible_results[key]
    try:
        ours = parse_host_key(key)
    except HostPatternError as exc:
        # the one deliberate difference: an empty numeric range is an error here
        assert isinstance(theirs, str) or theirs[0] == [], (
            f"ansible accepts {key!r} as {theirs}, we say {exc}"
        )
        return
    assert not isinstance(theirs, str), f"ansible refuses {key!r} ({theirs}); we give {ours}"
    assert [ours[0], ours[1]] == theirs


def test_common_cases_without_ansible():
    assert parse_host_key("gpu[01:03]") == (["gpu01", "gpu02", "gpu03"], None)
    assert parse_host_key("cn[8:11]") == (["cn8", "cn9", "cn10", "cn11"], None)
    assert parse_host_key("n[1:9:4]") == (["n1", "n5", "n9"], None)
    assert parse_host_key("db.example.com:2222") == (["db.example.com"], 2222)
    assert parse_host_key("bad_:22") == (["bad_:22"], None)  # not a host name: the whole key is the name


@pytest.mark.parametrize(
    ("key", "message"),
    [
        (
            "gpu[01-48]",
            "host range must be begin:end or begin:end:step, found [01-48] (Ansible ranges use ':'",
        ),
        ("gpu[10:1]", "host range must have begin <= end, found [10:1]"),
        ("gpu[01:100]", "host range must specify equal-length begin and end formats, found [01:100]"),
        ("gpu[1:]", "host range must specify end value"),
        ("gpu[1:4:0]", "the step a non-zero number, found [1:4:0]"),
        ("gpu[1:3", "malformed host range in 'gpu[1:3'"),
    ],
)
def test_bad_ranges_say_why(key, message):
    with pytest.raises(HostPatternError) as info:
        parse_host_key(key)
    assert message in str(info.value)


def test_is_ip_address():
    assert is_ip_address("10.0.0.1") and is_ip_address("fe80::1") and is_ip_address("::1")
    assert not is_ip_address("gpu01.example.com") and not is_ip_address("10.0.0")
