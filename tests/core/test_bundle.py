"""`runbook bundle`: the target platform tags handed to pip, and what it says
where there is no checkout to build from. (The bundle itself is built,
installed with no index and run by .ci/bundle-check.)"""

import pytest

from runbook.cli import cmd_bundle
from runbook.errors import UsageError


def test_a_manylinux_target_takes_wheels_for_every_older_glibc():
    tags = cmd_bundle.expand_platforms(["manylinux_2_28_x86_64"])
    assert tags[0] == "manylinux_2_28_x86_64"
    # cffi and PyYAML publish manylinux2014 / manylinux_2_17 wheels only
    assert "manylinux_2_17_x86_64" in tags and "manylinux2014_x86_64" in tags and "manylinux1_x86_64" in tags
    assert "manylinux_2_29_x86_64" not in tags and not any("aarch64" in t for t in tags)
    assert cmd_bundle.expand_platforms(["manylinux2014_aarch64"])[:2] == [
        "manylinux_2_17_aarch64",
        "manylinux2014_aarch64",
    ]
    assert cmd_bundle.expand_platforms(["macosx_11_0_arm64"]) == ["macosx_11_0_arm64"]


def test_an_installed_runbook_asks_for_the_wheel(tmp_path, monkeypatch):
    monkeypatch.setattr(cmd_bundle, "CHECKOUT", tmp_path)  # no pyproject.toml, no steps/: not a checkout
    with pytest.raises(UsageError, match="--wheel FILE"):
        cmd_bundle.build_wheel(tmp_path)
