"""Package sources against the site mirror (repo_mirror): every URL of every
ENABLED yum/dnf repository and apt source, and pip's index, must start with the
mirror. Disabled sections (the distribution's stock repository files, kept with
enabled=0) are not sources and are ignored. A plain prefix comparison: the
inventory value is never used as a regular expression."""

from __future__ import annotations

from typing import Any

from ..design import Comparator
from ._util import examples


def mirror_only(record: Any, v: dict) -> list[str]:
    mirror = str(v["repo_mirror"])
    out = []
    enabled = [r for r in record["repos"] if r["enabled"]]
    if not enabled:
        out.append("no enabled package repository at all (expected the site mirror's)")
    for r in enabled:
        outside = [u for u in r["urls"] if not u.startswith(mirror)]
        if outside:
            out.append(f"{r['file']} [{r['name']}] enabled, points outside {mirror}: {examples(outside, 2)}")
        elif not r["urls"]:
            out.append(f"{r['file']} [{r['name']}] enabled without any baseurl/mirrorlist/URIs")
    pip = record["pip"]
    index = pip.get("global.index-url")
    if index is None:
        out.append(f"pip: no global.index-url (pip would use pypi.org, expected {mirror}…)")
    for key, url in sorted(pip.items()):
        if key.endswith(("index-url",)) and not url.startswith(mirror):
            out.append(f"pip: {key}='{url}' is outside {mirror}")
    return out


COMPARATORS = [
    Comparator(
        "mirror-only",
        "host",
        mirror_only,
        "every enabled repository, apt source and pip index on repo_mirror",
    )
]
