"""chronyc-tracking and os-release. There is no fixture directory for either; the
inputs below are real published outputs (cited), or say plainly that they are built
from the documented format."""

from __future__ import annotations

import pytest

from runbook.parsers import ParseError, parse

# `chronyc tracking` on server2, socallinuxexpo/scale-network pull request #121 (2018-12-06).
FAST = """\
Reference ID    : B280042C (ntp1.bytestacker.com)
Stratum         : 3
Ref time (UTC)  : Thu Dec 06 06:04:02 2018
System time     : 0.000260112 seconds fast of NTP time
Last offset     : +0.000085454 seconds
RMS offset      : 0.000458358 seconds
Frequency       : 35.646 ppm fast
Residual freq   : +0.015 ppm
Skew            : 0.554 ppm
Root delay      : 0.031140074 seconds
Root dispersion : 0.018798923 seconds
Update interval : 259.2 seconds
Leap status     : Normal
"""

# `chronyc tracking`, rockstor/rockstor-core issue #2098 (2019-12-13): a clock running slow.
SLOW = """\
Reference ID    : 55C7D664 (85.199.214.100)
Stratum         : 2
Ref time (UTC)  : Fri Dec 13 19:38:44 2019
System time     : 0.000052616 seconds slow of NTP time
Last offset     : -0.000193872 seconds
RMS offset      : 0.000803415 seconds
Frequency       : 18.484 ppm slow
Residual freq   : -0.085 ppm
Skew            : 1.881 ppm
Root delay      : 0.011188857 seconds
Root dispersion : 0.001274664 seconds
Update interval : 129.2 seconds
Leap status     : Normal
"""

# `chronyc tracking`, omniosorg/omnios-build issue #2576 (2021-12-04): 7.8 s behind.
FAR_OFF = """\
Reference ID    : D9723B42 (ns0.luns.net.uk)
Stratum         : 3
Ref time (UTC)  : Sat Dec 04 15:37:15 2021
System time     : 7.810536861 seconds slow of NTP time
Last offset     : -0.243152961 seconds
RMS offset      : 0.166965380 seconds
Frequency       : 31244.098 ppm slow
Residual freq   : -3413.686 ppm
Skew            : 122.627 ppm
Root delay      : 0.016745072 seconds
Root dispersion : 0.182286546 seconds
Update interval : 64.8 seconds
Leap status     : Normal
"""

# BUILT, not captured: chronyd with no usable source yet. Reference ID 00000000 means
# "no reference" and the leap status reads "Not synchronised" (chronyc(1)).
UNSYNCED = """\
Reference ID    : 00000000 ()
Stratum         : 0
Ref time (UTC)  : Thu Jan 01 00:00:00 1970
System time     : 0.000000000 seconds fast of NTP time
Last offset     : +0.000000000 seconds
RMS offset      : 0.000000000 seconds
Frequency       : 0.000 ppm slow
Residual freq   : +0.000 ppm
Skew            : 0.000 ppm
Root delay      : 1.000000000 seconds
Root dispersion : 1.000000000 seconds
Update interval : 0.0 seconds
Leap status     : Not synchronised
"""


def test_fast_clock_is_a_positive_offset():
    r = parse("chronyc-tracking", FAST)
    assert (r["reference_id"], r["reference_name"], r["stratum"]) == ("B280042C", "ntp1.bytestacker.com", 3)
    assert r["system_time_offset_s"] == pytest.approx(0.000260112)
    assert r["system_time_abs_ms"] == pytest.approx(0.260112)
    assert r["frequency_ppm"] == pytest.approx(35.646)
    assert r["last_offset_s"] == pytest.approx(0.000085454)
    assert r["update_interval_s"] == 259.2
    assert (r["leap_status"], r["synchronised"]) == ("Normal", True)
    assert r["fields"]["ref_time_utc"] == "Thu Dec 06 06:04:02 2018"


def test_slow_clock_is_a_negative_offset():
    r = parse("chronyc-tracking", SLOW)
    assert r["system_time_offset_s"] == pytest.approx(-0.000052616)
    assert r["system_time_offset_ms"] == pytest.approx(-0.052616)
    assert r["frequency_ppm"] == pytest.approx(-18.484)
    assert r["residual_freq_ppm"] == pytest.approx(-0.085)
    assert r["root_dispersion_s"] == pytest.approx(0.001274664)


def test_seconds_off_reads_as_thousands_of_ms():
    r = parse("chronyc-tracking", FAR_OFF)
    assert r["system_time_abs_ms"] == pytest.approx(7810.536861)
    assert r["synchronised"] is True  # chrony thinks so: the offset check is what catches it


def test_not_synchronised():
    r = parse("chronyc-tracking", UNSYNCED)
    assert (r["reference_id"], r["reference_name"], r["synchronised"]) == ("00000000", "", False)


def test_chronyc_errors_are_parse_errors():
    with pytest.raises(ParseError, match="could not reach chronyd"):
        parse("chronyc-tracking", "506 Cannot talk to daemon\n")
    with pytest.raises(ParseError, match="Reference ID"):
        parse("chronyc-tracking", "Stratum         : 3\n")


# `cat /etc/os-release` on Rocky Linux 8.10, https://pastebin.com/83FVtspH (2024-11-22).
ROCKY = """\
NAME="Rocky Linux"
VERSION="8.10 (Green Obsidian)"
ID="rocky"
ID_LIKE="rhel centos fedora"
VERSION_ID="8.10"
PLATFORM_ID="platform:el8"
PRETTY_NAME="Rocky Linux 8.10 (Green Obsidian)"
ANSI_COLOR="0;32"
LOGO="fedora-logo-icon"
CPE_NAME="cpe:/o:rocky:rocky:8:GA"
HOME_URL="https://rockylinux.org/"
BUG_REPORT_URL="https://bugs.rockylinux.org/"
SUPPORT_END="2029-05-31"
ROCKY_SUPPORT_PRODUCT="Rocky-Linux-8"
ROCKY_SUPPORT_PRODUCT_VERSION="8.10"
REDHAT_SUPPORT_PRODUCT="Rocky Linux"
REDHAT_SUPPORT_PRODUCT_VERSION="8.10"
"""


def test_os_release_rocky():
    r = parse("os-release", ROCKY)
    assert r["PRETTY_NAME"] == "Rocky Linux 8.10 (Green Obsidian)"
    assert (r["ID"], r["VERSION_ID"], r["ID_LIKE"]) == ("rocky", "8.10", "rhel centos fedora")
    assert r["ANSI_COLOR"] == "0;32" and len(r) == 17


def test_os_release_unquoted_values_and_comments():
    # the unquoted style of os-release(5)'s own examples (ID=fedora, VERSION_ID=17)
    r = parse("os-release", "# comment\nNAME=Fedora\nID=fedora\nVERSION_ID=17\n")
    assert r == {"NAME": "Fedora", "ID": "fedora", "VERSION_ID": "17"}


def test_cat_etc_star_release_is_refused():
    # `cat /etc/*elease` mixes rocky-release into the assignments, as pasted in
    # gitlab.com/xen-project/xen-guest-agent issue #16
    with pytest.raises(ParseError, match="Rocky Linux release 8.9"):
        parse("os-release", "Rocky Linux release 8.9 (Green Obsidian)\n" + ROCKY)
