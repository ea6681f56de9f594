"""package-sources (repository files as FILE:line, pip config) and
systemctl-show (Property=value). No real capture of these in the fixtures:
the inputs below follow the files as Rocky/Ubuntu ship them and systemd's
`show` layout, and the parsers must refuse every real output of another tool."""

from __future__ import annotations

import pytest

from runbook.parsers import ParseError, parse

from .helpers import fixtures_root, read

ROCKY = """/etc/yum.repos.d/rocky.repo:# rocky.repo
/etc/yum.repos.d/rocky.repo:[baseos]
/etc/yum.repos.d/rocky.repo:name=Rocky Linux $releasever - BaseOS
/etc/yum.repos.d/rocky.repo:mirrorlist=https://mirrors.rockylinux.org/mirrorlist?arch=$basearch&repo=BaseOS-$releasever$rltype
/etc/yum.repos.d/rocky.repo:#baseurl=http://dl.rockylinux.org/$contentdir/$releasever/BaseOS/$basearch/os/
/etc/yum.repos.d/rocky.repo:gpgcheck=1
/etc/yum.repos.d/rocky.repo:enabled=0
/etc/yum.repos.d/rocky.repo:
/etc/yum.repos.d/rocky.repo:[crb]
/etc/yum.repos.d/rocky.repo:name=Rocky Linux $releasever - CRB
/etc/yum.repos.d/rocky.repo:baseurl=http://a.example/crb/
/etc/yum.repos.d/rocky.repo:        http://b.example/crb/
/etc/yum.repos.d/rocky.repo:enabled = True
/etc/yum.repos.d/site.repo:[site]
/etc/yum.repos.d/site.repo:baseurl=http://mirror.example/rocky/
global.index-url='http://mirror.example/pypi/simple'
"""


def test_yum_sections_enabled_default_and_continuation():
    record = parse("package-sources", ROCKY)
    repos = {r["name"]: r for r in record["repos"]}
    assert repos["baseos"]["enabled"] is False and repos["baseos"]["urls"][0].startswith(
        "https://mirrors.rocky"
    )
    assert repos["crb"]["enabled"] is True and repos["crb"]["urls"] == [
        "http://a.example/crb/",
        "http://b.example/crb/",
    ]
    assert repos["site"]["enabled"] is True  # no enabled= line: dnf's default
    assert record["enabled_urls"] == [
        "http://a.example/crb/",
        "http://b.example/crb/",
        "http://mirror.example/rocky/",
    ]
    assert record["pip"] == {"global.index-url": "http://mirror.example/pypi/simple"}


def test_apt_one_line_and_deb822():
    text = (
        "/etc/apt/sources.list:deb [arch=amd64 signed-by=/usr/share/keyrings/k.gpg] http://m.example/ubuntu jammy main\n"
        "/etc/apt/sources.list:# deb http://archive.ubuntu.com/ubuntu jammy universe\n"
        "/etc/apt/sources.list:deb-src http://m.example/ubuntu jammy main\n"
        "/etc/apt/sources.list.d/ubuntu.sources:Types: deb\n"
        "/etc/apt/sources.list.d/ubuntu.sources:URIs: http://archive.ubuntu.com/ubuntu/\n"
        "/etc/apt/sources.list.d/ubuntu.sources:Suites: noble noble-updates\n"
        "/etc/apt/sources.list.d/ubuntu.sources:Signed-By: /usr/share/keyrings/ubuntu-archive-keyring.gpg\n"
        "/etc/apt/sources.list.d/ubuntu.sources:Enabled: no\n"
        "/etc/apt/sources.list.d/ubuntu.sources:\n"
        "/etc/apt/sources.list.d/ubuntu.sources:Types: deb\n"
        "/etc/apt/sources.list.d/ubuntu.sources:URIs: http://security.ubuntu.com/ubuntu/\n"
        "/etc/apt/sources.list.d/ubuntu.sources:Suites: noble-security\n"
    )
    record = parse("package-sources", text)
    assert [(r["kind"], r["enabled"], r["urls"]) for r in record["repos"]] == [
        ("apt", True, ["http://m.example/ubuntu"]),
        ("apt", True, ["http://m.example/ubuntu"]),
        ("apt", False, ["http://archive.ubuntu.com/ubuntu/"]),
        ("apt", True, ["http://security.ubuntu.com/ubuntu/"]),
    ]


def test_package_sources_refuse_damaged_input():
    with pytest.raises(ParseError, match="before any"):
        parse("package-sources", "/etc/yum.repos.d/x.repo:baseurl=http://a/\n")
    with pytest.raises(ParseError, match="not a boolean"):
        parse("package-sources", "/etc/yum.repos.d/x.repo:[a]\n/etc/yum.repos.d/x.repo:enabled=maybe\n")
    with pytest.raises(ParseError, match="not a 'deb URI suite"):
        parse("package-sources", "/etc/apt/sources.list:http://a/ jammy main\n")


SHOW = "LoadState=loaded\nActiveState=active\nSubState=running\nUnitFileState=enabled\n"


def test_systemctl_show_states():
    record = parse("systemctl-show", SHOW)
    assert (record["load_state"], record["active_state"], record["unit_file_state"]) == (
        "loaded",
        "active",
        "enabled",
    )
    assert record["enabled"] is True and record["active"] is True
    missing = parse("systemctl-show", "LoadState=not-found\nActiveState=inactive\nUnitFileState=\n")
    assert missing["unit_file_state"] == "" and missing["enabled"] is False and missing["active"] is False
    static = parse("systemctl-show", "UnitFileState=static\nActiveState=inactive\n")
    assert static["enabled"] is False  # static: started only as a dependency, not at boot


def test_systemctl_show_refuses_other_text():
    with pytest.raises(ParseError):
        parse("systemctl-show", "enabled\nactive\n")


@pytest.mark.parametrize("parser", ["package-sources", "systemctl-show"])
def test_other_tools_real_outputs_are_refused(parser):
    root = fixtures_root()
    accepted = []
    for d in sorted(p for p in root.iterdir() if p.is_dir()):
        for f in sorted(d.iterdir()):
            if f.is_file():
                try:
                    parse(parser, read(d.name, f.name))
                except ParseError:
                    continue
                accepted.append(f"{d.name}/{f.name}")
    assert accepted == []
