"""Every simulated tool output against a real output of the same tool.

The simulator is a rehearsal, real hardware is the oracle: whatever a simulated
node prints must have the real tool's header lines, field names and layout
(values differ). One row per (simulated command, real fixture) in FORMATS; the
check names what must be equal. To add a tool: add a row (and, if no existing
check fits, a small check function below). The fixtures are the real outputs in
shared/fixtures/real-outputs, found through tests/parsers_ib/_fixtures.root()
(RUNBOOK_FIXTURES overrides it).

Checks (each receives our output and the real one, both as text):
  keys(block=0)      the "key:" field names, in order, of the first block
  shapes(pick, n)    the lines chosen by `pick` with their values blanked
                     (runs of letters/digits -> 'w', spacing kept) are equal
  columns(pick)      the lines chosen by `pick` start their fields at the same
                     columns (fixed-width tables)
  lines(regexes)     every line of ours and of the real one matches the regex
                     of its line kind (for free-form layouts)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from tests.parsers_ib._fixtures import root

Check = Callable[[str, str], None]


def real(glob: str) -> str:
    folder, pattern = glob.split("/", 1)
    found = sorted((root() / folder).glob(pattern))
    if not found:
        pytest.skip(f"no real fixture {glob} under {root()}")
    return found[0].read_text(encoding="utf-8")


def shape(line: str) -> str:
    """The layout of a line: each run of value characters becomes 'w'."""
    return re.sub(r"[\w.:;/()+,\-]+", "w", line.expandtabs())


def starts(line: str) -> list[int]:
    return [m.start() for m in re.finditer(r"\S+", line.expandtabs())]


# ---- checks --------------------------------------------------------------------------------
def keys(separator: str = ":", block: str = "\n\n", header: str | None = None) -> Check:
    """Field names of the first block: up to the first blank line (or `block`),
    or up to the second line matching `header` (blocks printed back to back)."""

    def names(text: str) -> list[str]:
        first = text.strip("\n").split(block)[0]
        if header:
            heads = [m.start() for m in re.finditer(header, first, re.M)]
            first = first[: heads[1]] if len(heads) > 1 else first
        return [x.split(separator)[0].strip() for x in first.splitlines() if separator in x]

    def check(ours: str, theirs: str) -> None:
        assert names(ours) == names(theirs)

    return check


def shapes(pick: Callable[[list[str]], list[str]]) -> Check:
    def check(ours: str, theirs: str) -> None:
        mine, real_lines = pick(ours.splitlines()), pick(theirs.splitlines())
        assert mine and real_lines, "no line of the kind compared"
        assert [shape(x) for x in mine] == [shape(x) for x in real_lines]

    return check


def columns(pick: Callable[[list[str]], list[str]]) -> Check:
    def check(ours: str, theirs: str) -> None:
        mine, real_lines = pick(ours.splitlines()), pick(theirs.splitlines())
        assert mine and real_lines
        assert [starts(x) for x in mine] == [starts(x) for x in real_lines]

    return check


def lines(kinds: dict[str, str], required: tuple[str, ...] = ()) -> Check:
    """Every line (blank ones aside) matches one of the regexes; the `required`
    kinds appear in both outputs."""
    compiled = {k: re.compile(v) for k, v in kinds.items()}

    def kinds_of(text: str) -> set[str]:
        seen = set()
        for line in text.splitlines():
            if not line.strip():
                continue
            kind = next((k for k, rx in compiled.items() if rx.fullmatch(line)), None)
            assert kind is not None, f"a line of no known kind: {line!r}"
            seen.add(kind)
        return seen

    def check(ours: str, theirs: str) -> None:
        mine, real_kinds = kinds_of(ours), kinds_of(theirs)
        for kind in required:
            assert kind in mine and kind in real_kinds, kind

    return check


def both(*checks: Check) -> Check:
    def check(ours: str, theirs: str) -> None:
        for c in checks:
            c(ours, theirs)

    return check


def first(n: int, where: Callable[[str], bool] = lambda x: True) -> Callable[[list[str]], list[str]]:
    return lambda ls: [x for x in ls if where(x)][:n]


# ---- the table -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Format:
    id: str
    command: str  # run on the simulated gpu01 (or `host`)
    fixture: str  # folder/glob under real-outputs
    check: Check
    host: str = "gpu01"
    faults: dict | None = None  # a scenario for the simulated cluster


IBLINK_LINE = r" +\d+ +\d+\[  \] ==\( *(4X +[\d.]+ Gbps +Active/ +LinkUp|Down/ Polling)\)==> .*"
NETDISC = {
    "comment": r"#.*",
    "vendid": r"vendid=0x[0-9a-f]+",
    "devid": r"devid=0x[0-9a-f]+",
    "sysimgguid": r"sysimgguid=0x[0-9a-f]+",
    "switchguid": r"switchguid=0x[0-9a-f]+\([0-9a-f]+\)",
    "caguid": r"caguid=0x[0-9a-f]+",
    "chassis": r"Non-Chassis Nodes",
    "switch": r'Switch\s+\d+ "S-[0-9a-f]{16}"\s+# ".*" (base|enhanced) port 0 lid \d+ lmc \d+',
    "ca": r'Ca\s+\d+ "H-[0-9a-f]{16}"\s+# ".*"',
    "switch_port": r'\[\d+\]\s+"[SH]-[0-9a-f]{16}"\[\d+\](\([0-9a-f]+\))?\s+# ".*" lid \d+ \d+x[A-Z]+',
    "ca_port": r'\[\d+\]\([0-9a-f]+\)\s+"S-[0-9a-f]{16}"\[\d+\]\s+# lid \d+ lmc \d+ ".*" lid \d+ \d+x[A-Z]+',
}
IP_LINK = {
    "header": r"\d+: [\w.]+(@[\w.]+)?: <[A-Z_,]+> mtu \d+ qdisc \w+ state [A-Z]+ mode DEFAULT group default qlen \d+",
    "link": r"    link/infiniband ([0-9a-f]{2}:){19}[0-9a-f]{2} brd ([0-9a-f]{2}:){19}[0-9a-f]{2} promiscuity 0 "
    r"minmtu 68 maxmtu 65520",
    "ipoib": r"    ipoib pkey  0x[0-9a-f]{4} mode  (datagram|connected) umcast  000[01] addrgenmode \w+ "
    r"numtxqueues \d+ numrxqueues \d+ gso_max_size \d+ gso_max_segs \d+",
}


def MST_ROWS(ls: list[str]) -> list[str]:
    return [x for x in ls if re.match(r"(DEVICE_TYPE|ConnectX\d\(rev)", x)][:2]


QUERYERRORS = {
    "switch": r'Errors for 0x[0-9a-f]+ ".*"',
    "ca": r'Errors for ".*"',
    "port": r"   GUID 0x[0-9a-f]+ port (ALL|\d+):( \[\w+ == \d+\])+",
    "link_info": r"       Link info: +\d+ +\d+\[  \] ==\( *4X +[\d.]+ Gbps Active/  LinkUp\)==>  "
    r'0x[0-9a-f]{16} +\d+ +\d+\[  \] ".*" \( \)',
    "summary": r"## Summary: \d+ nodes checked, \d+ bad nodes found",
    "summary2": r"##          \d+ ports checked, \d+ ports have errors beyond threshold",
}
IBDIAGNET_SUMMARY = {
    "fabric": r"(Total Nodes|IB Switches|IB Channel Adapters|IB Aggregation Nodes|IB Routers) +: \d+",
    "dashes": r"-{45}",
    "title": r"[A-Z][\w /]+",
    "info": r"-[IEW]- .*",
}


def _after(marker: str) -> Callable[[list[str]], list[str]]:
    """The lines from `marker` on (the part of a run both outputs show)."""
    return lambda ls: ls[next(i for i, x in enumerate(ls) if x.startswith(marker)) :]


def dotted_names(ours: str, theirs: str) -> None:
    """The dotted field names in order (saquery: the fixture lost its leading TABs)."""

    def names(text: str) -> list[str]:
        return re.findall(r"^\s*(\w+)\.{2,}", text.split("dump:")[1] if "dump:" in text else text, re.M)

    assert names(ours) == names(theirs) != []
    assert ours.splitlines()[0] == theirs.splitlines()[0] == "NodeRecord dump:"


def _summary_rows(ls: list[str]) -> list[str]:
    return [x for x in ls if re.match(r"-I- (Stage|Discovery|Virtualization) +(Warnings|\d+)", x)]


FORMATS = [
    Format("saquery-noderecord", "saquery 14", "saquery/*", dotted_names),
    Format("perfquery", "perfquery | head -7", "perfquery/*", keys()),
    Format("perfquery-switch", "perfquery 7 1 | head -7", "perfquery/*", both(keys(), shapes(first(1)))),
    # a marginal cable on gpu01 mlx5_2 (both ends counted), -r adds each port's Link info line
    Format(
        "ibqueryerrors",
        "ibqueryerrors -r",
        "ibqueryerrors/*",
        lines(QUERYERRORS, ("switch", "port", "summary")),
        faults={"gpu01": ["cable_ber"]},
    ),
    Format(
        "ibdiagnet-summary",
        "ibdiagnet | grep -v -e '^Fabric Summary' -e 'detailed errors'",
        "ibdiagnet/ibdiagnet2-routing*",
        both(lines(IBDIAGNET_SUMMARY, ("fabric", "dashes", "info")), columns(_summary_rows)),
    ),
    Format("ibstat", "ibstat mlx5_0", "ibstat/H20-node-CX7*", keys(header="^CA '")),
    Format("ibstat-cx6", "ibstat mlx5_4", "ibstat/ConnectX-3*", keys(header="^CA '")),
    Format(
        "ibstatus",
        "ibstatus mlx5_0",
        "ibstatus/gpud-testdata*",
        both(keys(), shapes(first(7, lambda x: x.startswith("\t") or x.startswith("   ")))),
    ),
    Format("ibv_devinfo", "ibv_devinfo -d mlx5_0", "ibv_devinfo/8xCX7*", keys()),
    Format("sminfo", "sminfo", "sminfo/ibsim*", shapes(first(1))),
    Format("sminfo-C-P", "sminfo -C mlx5_0 -P 1", "sminfo/ibsim*", shapes(first(1))),
    Format(
        "smpquery-pkeys",
        "smpquery -C mlx5_0 pkeys | head -1",
        "smpquery-pkeys/*",
        shapes(first(1, lambda x: x.startswith("   0:"))),
    ),
    Format(
        "sysfs-pkeys",
        "cat /sys/class/infiniband/mlx5_0/ports/1/pkeys/0",
        "sysfs-infiniband-pkeys/*",
        shapes(first(1, lambda x: x.startswith("0x"))),
    ),
    Format(
        "iblinkinfo-link",
        "iblinkinfo",
        "iblinkinfo/MQM8700*",
        lines(
            {
                "switch": r"Switch: 0x[0-9a-f]{16} .*:",
                "ca": r"CA: .*:",
                "ca_link": r"      0x[0-9a-f]{16} " + IBLINK_LINE[1:],
                "port": IBLINK_LINE,
                "elided": r" *\.\.\.",
            },  # the fixture's own elision lines
            required=("ca", "ca_link", "switch", "port"),
        ),
    ),
    Format(
        "iblinkinfo-fattree",
        "iblinkinfo",
        "ibnetdiscover-fattree/*",
        lines(
            {
                "switch": r"Switch: 0x[0-9a-f]{16} .*:",
                "ca": r"CA: .*:",
                "ca_link": r"      0x[0-9a-f]{16} " + IBLINK_LINE[1:],
                "port": IBLINK_LINE,
            },
            required=("switch", "port"),
        ),
    ),
    Format(
        "ibnetdiscover",
        "ibnetdiscover",
        "ibnetdiscover/rdma-core-manpage*",
        lines(NETDISC, required=("vendid", "devid", "switch", "switch_port", "ca", "ca_port")),
    ),
    Format(
        "mlxconfig",
        "mst start >/dev/null; mlxconfig -d mlx5_0 q LINK_TYPE_P1",
        "mlxconfig/CX5-MCX555A*",
        both(keys(block="Configurations"), shapes(first(1, lambda x: "LINK_TYPE_P1" in x))),
    ),
    Format(
        "mst-status-v",
        "mst start >/dev/null; mst status -v",
        "mst-status-v/H100*",
        both(shapes(first(5)), columns(MST_ROWS)),
    ),
    Format("ibdev2netdev", "ibdev2netdev", "ibdev2netdev/4xmlx5*", shapes(first(2))),
    Format(
        "ip-d-link-child",
        "ip -d link show dev ib4.8200",
        "ip-link-ipoib/ip-d-link-show-mlx5_ib0.8001*",
        lines(IP_LINK, required=("header", "link", "ipoib")),
    ),
    Format(
        "ip-d-link-parent",
        "ip -d link show dev ib4",
        "ip-link-ipoib/ip-d-link-show-mlx5_ib0-parent*",
        lines(IP_LINK, required=("header", "link", "ipoib")),
    ),
    Format("ibv_devinfo-cx6", "ibv_devinfo -d mlx5_4", "ibv_devinfo/ConnectX-6*", keys()),
    Format(
        "ibnetdiscover-p",
        "ibnetdiscover -p | grep ^CA",
        "ibnetdiscover/ibsim-lab-ibnetdiscover-p*",
        lines(
            {"ca": r"CA +\d+ +\d+ 0x[0-9a-f]{16} \dx [A-Z]+ - SW +\d+ +\d+ 0x[0-9a-f]{16} \( '.+' - '.+' \)"},
            required=("ca",),
        ),
    ),
    Format(
        "ibswitches",
        "ibswitches",
        "ibswitches/*",
        lines(
            {"switch": r'Switch\t: 0x[0-9a-f]{16} ports \d+ ".+" (base|enhanced) port 0 lid \d+ lmc \d+'},
            required=("switch",),
        ),
    ),
    Format(
        "lspci-grep-mellanox",
        "lspci | grep -i mellanox",
        "lspci-grep-mellanox/2xCX7-dualport*",
        shapes(first(1)),
    ),
    Format(
        "ip-addr-child",
        "ip addr show dev ib4.8200",
        "ip-link-ipoib/ip-addr-show-ib0-RHEL*",
        lines(
            {
                "header": r"\d+: [\w.]+(@[\w.]+)?: <[A-Z_,]+> mtu \d+ qdisc \w+ state [A-Z]+ group default qlen \d+",
                "link": r"    link/infiniband ([0-9a-f]{2}:){19}[0-9a-f]{2} brd ([0-9a-f]{2}:){19}[0-9a-f]{2}",
                "altname": r"    altname \S+",
                "inet": r"    inet [\d.]+/\d+ brd [\d.]+ scope global( dynamic)?( noprefixroute)? [\w.]+",
                "inet6": r"    inet6 \S+ scope link( noprefixroute)?",
                "lft": r"       valid_lft \w+ preferred_lft \w+",
            },
            required=("header", "link", "inet", "lft"),
        ),
    ),
    Format(
        "lspci-vv-cx7",
        "lspci -vv -s 18:00.0",
        "lspci-vv/ConnectX-7*",
        both(shapes(first(1, lambda x: x.strip().startswith("LnkCap:"))), shapes(first(1))),
    ),
]


@pytest.mark.parametrize("fmt", FORMATS, ids=[f.id for f in FORMATS])
async def test_simulated_output_has_the_real_layout(fmt: Format, machine_of, sh):
    theirs = real(fmt.fixture)
    node = machine_of(2, fmt.faults)(fmt.host)
    ours, err, code = await sh(node, fmt.command)
    assert code == 0 and ours, (fmt.command, err)
    fmt.check(ours, theirs)


def test_the_checks_can_fail():
    """A check is only worth its row if it rejects another layout."""
    with pytest.raises(AssertionError):
        keys()("CA 'x'\n\tCA type: y\n\tPorts: 1\n", "CA 'x'\n\tCA type: y\n\tNumber of ports: 1\n")
    with pytest.raises(AssertionError):
        shapes(first(1))(
            "sminfo: sm lid 1 sm guid 0x1, activity count 2 priority 3\n",
            "sminfo: sm lid 1 sm guid 0x1, activity count 2 priority 3 state 3 SMINFO_MASTER\n",
        )
    with pytest.raises(AssertionError):
        columns(first(1))("a    b\n", "a   b\n")
    with pytest.raises(AssertionError):
        lines(IP_LINK, required=("ipoib",))(
            "28: ib4: <BROADCAST,MULTICAST> mtu 4092 qdisc noop state DOWN mode DEFAULT group default qlen 256\n",
            real("ip-link-ipoib/ip-d-link-show-mlx5_ib0.8001*"),
        )
