"""Where a node installs packages from: the yum/dnf repository files, the apt
sources (one-line sources.list and deb822 .sources) and pip's configured index,
as printed by

    for f in /etc/yum.repos.d/*.repo /etc/apt/sources.list /etc/apt/sources.list.d/*; do
        [ -f "$f" ] && grep -H '' "$f"; done
    pip3 config list

i.e. every line prefixed with its file name (`FILE:line`), then pip's
`section.key='value'` lines.

Record:
  repos: [{file, name, kind: yum|apt, enabled: bool, urls: [str]}]
      yum: one per [section]; `enabled` defaults to 1 as in dnf, and takes
      1/0/yes/no/true/false; urls = baseurl (several allowed, also on
      continuation lines), mirrorlist and metalink.
      apt: one per `deb`/`deb-src` line of a .list (a commented line is no
      source at all) or per deb822 stanza of a .sources (`Enabled: no` disables).
  enabled_urls: [str]  the URLs of the enabled repositories only
  pip: {"global.index-url": url, ...}  pip3 config list
"""

from __future__ import annotations

import re

from ._hosttext import fail, lines_of
from .base import ParseError, Parser, Record

_FILE_LINE = re.compile(r"^(?P<file>/[^:]+):(?P<line>.*)$")
_PIP = re.compile(r"^(?P<key>[a-z][\w-]*\.[\w-]+)='(?P<value>[^']*)'\s*$")
_TRUE = {"1", "yes", "true", "on"}
_FALSE = {"0", "no", "false", "off"}


def _bool(value: str, where: str) -> bool:
    v = value.strip().lower()
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    raise ParseError(f"{where}: enabled={value!r} is not a boolean")


def _yum(path: str, lines: list[str]) -> list[dict]:
    repos: list[dict] = []
    cur: dict | None = None
    key = None
    for raw in lines:
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith(("#", ";")):
            key = None
            continue
        if m := re.match(r"^\s*\[(?P<name>[^\]]+)\]\s*$", line):
            cur = {"file": path, "name": m["name"], "kind": "yum", "enabled": True, "urls": []}
            repos.append(cur)
            key = None
            continue
        if cur is None:
            raise ParseError(f"{path}: {line.strip()[:60]!r} before any [repository] section")
        if line[0] in " \t" and key in ("baseurl",):  # continuation of a multi-URL baseurl
            cur["urls"] += [u for u in re.split(r"[\s,]+", line.strip()) if u]
            continue
        k, eq, v = line.partition("=")
        if not eq:
            raise ParseError(f"{path}: {line.strip()[:60]!r} is not 'key=value'")
        key = k.strip().lower()
        if key == "enabled":
            cur["enabled"] = _bool(v, f"{path} [{cur['name']}]")
        elif key in ("baseurl", "mirrorlist", "metalink"):
            cur["urls"] += [u for u in re.split(r"[\s,]+", v.strip()) if u]
    return repos


def _apt_list(path: str, lines: list[str]) -> list[dict]:
    repos = []
    for n, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = re.sub(r"\[[^\]]*\]", " ", line).split()  # drop [arch=... signed-by=...]
        if words[0] not in ("deb", "deb-src") or len(words) < 3:
            raise ParseError(f"{path}:{n}: {raw.strip()[:60]!r} is not a 'deb URI suite [component...]' line")
        repos.append({"file": path, "name": f"line {n}", "kind": "apt", "enabled": True, "urls": [words[1]]})
    return repos


def _apt_deb822(path: str, lines: list[str]) -> list[dict]:
    repos, fields, key = [], {}, None

    def flush():
        if fields:
            if "uris" not in fields:
                raise ParseError(f"{path}: a stanza without URIs: ({', '.join(fields)})")
            enabled = _bool(fields.get("enabled", "yes"), path)
            repos.append(
                {
                    "file": path,
                    "name": f"stanza {len(repos) + 1}",
                    "kind": "apt",
                    "enabled": enabled,
                    "urls": fields["uris"].split(),
                }
            )

    for raw in lines + [""]:
        if raw.startswith("#"):
            continue
        if not raw.strip():
            flush()
            fields, key = {}, None
            continue
        if raw[0] in " \t" and key:
            fields[key] += " " + raw.strip()
            continue
        k, colon, v = raw.partition(":")
        if not colon:
            raise ParseError(f"{path}: {raw.strip()[:60]!r} is not 'Field: value'")
        key = k.strip().lower()
        fields[key] = v.strip()
    return repos


def parse_package_sources(text: str) -> Record:
    files: dict[str, list[str]] = {}
    pip: dict[str, str] = {}
    for line in lines_of(text):
        if not line.strip():
            continue
        if m := _FILE_LINE.match(line):
            files.setdefault(m["file"], []).append(m["line"])
        elif m := _PIP.match(line.strip()):
            pip[m["key"]] = m["value"]
        else:
            fail("'FILE:line' lines of repository files, then `pip3 config list` (section.key='value')", line)
    repos: list[dict] = []
    for path, lines in files.items():
        if path.endswith(".repo"):
            repos += _yum(path, lines)
        elif path.endswith(".sources"):
            repos += _apt_deb822(path, lines)
        elif path.endswith(".list") or path == "/etc/apt/sources.list":
            repos += _apt_list(path, lines)
        else:
            raise ParseError(f"{path}: not a repository file (.repo, .list, .sources)")
    if not repos and not pip:
        fail("repository files or pip configuration", text)
    return {"repos": repos, "enabled_urls": [u for r in repos if r["enabled"] for u in r["urls"]], "pip": pip}


PARSERS = [
    Parser(
        name="package-sources",
        reads="grep -H '' REPO FILES; pip3 config list",
        func=parse_package_sources,
        description="yum/dnf .repo sections, apt sources (one-line and deb822) and pip index: enabled URLs",
    )
]
