"""mlxconfig [-d DEV] [-y] [-e] q|query [PARAM...] | set PARAM=VALUE... | reset

Layout copied from fixtures/real-outputs/mlxconfig (query: "Next Boot" column;
-e: Default/Current/Next Boot; set: Next Boot/New table and the apply prompt).
LINK_TYPE changes are stored for the next boot; `reboot` makes them current.
Like the real tool with MFT's kernel modules, it needs `mst start` first.
"""

from __future__ import annotations

from .. import hca
from ..hardware import ETH, IB, Card, NodeState
from .base import Ctx
from .mst import mst_device

LINK_NAMES = {IB: "IB(1)", ETH: "ETH(2)", 3: "VPI(3)"}
STATIC = [  # (name, value) shown by a full query, after LINK_TYPE
    ("MEMIC_BAR_SIZE", "0"),
    ("MEMIC_SIZE_LIMIT", "_256KB(1)"),
    ("FLEX_PARSER_PROFILE_ENABLE", "0"),
    ("ROCE_NEXT_PROTOCOL", "254"),
    ("NON_PREFETCHABLE_PF_BAR", "False(0)"),
    ("VF_VPD_ENABLE", "False(0)"),
    ("NUM_OF_VFS", "0"),
    ("NUM_OF_PF", "1"),
    ("SRIOV_EN", "False(0)"),
    ("PF_LOG_BAR_SIZE", "5"),
    ("VF_LOG_BAR_SIZE", "1"),
    ("NUM_PF_MSIX", "63"),
    ("NUM_VF_MSIX", "11"),
    ("INT_LOG_MAX_PAYLOAD_SIZE", "AUTOMATIC(0)"),
    ("PCI_ATOMIC_MODE", "PCI_ATOMIC_DISABLED_EXT_ATOMIC_ENABLED(0)"),
    ("CQE_COMPRESSION", "BALANCED(0)"),
    ("IP_OVER_VXLAN_EN", "False(0)"),
    ("UCTX_EN", "True(1)"),
    ("ADVANCED_PCI_SETTINGS", "False(0)"),
    ("SAFE_MODE_THRESHOLD", "10"),
    ("SAFE_MODE_ENABLE", "True(1)"),
]
PORT_STATIC = [
    ("KEEP_ETH_LINK_UP_P{p}", "True(1)"),
    ("KEEP_IB_LINK_UP_P{p}", "False(0)"),
    ("NUM_OF_VL_P{p}", "_4_VLs(3)"),
    ("NUM_OF_TC_P{p}", "_8_TCs(0)"),
    ("SRIOV_IB_ROUTING_MODE_P{p}", "LID(1)"),
    ("IB_ROUTING_MODE_P{p}", "LID(1)"),
]


def _resolve(node: NodeState, dev: str) -> Card | None:
    for nic in node.nics:
        names = {nic.dev, mst_device(node, nic), nic.bus, "0000:" + nic.bus}
        if dev in names:
            return node.cards[nic.card]
    return None


def _params(card: Card, which: str) -> list[tuple[str, str, str, str]]:
    """(name, default, current, next) of every parameter of the card."""
    out = []
    for p in range(1, card.ports + 1):
        out.append(
            (
                f"LINK_TYPE_P{p}",
                "IB(1)",
                LINK_NAMES[card.link_type[p - 1]],
                LINK_NAMES[card.link_type_next[p - 1]],
            )
        )
    out += [(n, v, v, v) for n, v in STATIC]
    for p in range(1, card.ports + 1):
        out += [(n.format(p=p), v, v, v) for n, v in PORT_STATIC]
    return out


def _header(card: Card, index: int, dev: str) -> str:
    model = hca.of_part(card.part)
    return (
        "\nDevice #%d:\n----------\n\n" % index
        + f"Device type:        {model.mst_type}\n"
        + f"Name:               {card.part[:-1]}_Ax\n"
        + f"Description:        {model.parts[card.ports][2].replace(', ', '; ')}; tall bracket; ROHS R6\n"
        + f"Device:             {dev}\n\n"
    )


def _parse_value(value: str) -> int | None:
    v = value.strip().upper()
    return {"1": IB, "IB": IB, "IB(1)": IB, "2": ETH, "ETH": ETH, "ETH(2)": ETH}.get(v)


def mlxconfig(ctx: Ctx, args, io) -> int:
    node = ctx.node
    dev, yes, extended, rest = None, False, False, []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-d", "--dev") and i + 1 < len(args):
            dev, i = args[i + 1], i + 2
            continue
        if a in ("-y", "--yes"):
            yes = True
        elif a in ("-e", "--enable_verbosity"):
            extended = True
        else:
            rest.append(a)
        i += 1
    if not rest:
        io.err.write("-E- No command given. See 'mlxconfig -h' for usage.\n")
        return 1
    if not node.mst_started:
        io.err.write("-E- Failed to open the device\n" if dev else "-E- No devices found.\n")
        return 1
    targets = []
    if dev is None:
        targets = [(c, mst_device(node, next(n for n in node.nics if n.card == c.index))) for c in node.cards]
    else:
        card = _resolve(node, dev)
        if card is None:
            io.err.write("-E- Failed to open the device\n")
            return 1
        targets = [(card, dev)]
    verb, params = rest[0], rest[1:]
    if verb in ("q", "query"):
        return _query(targets, params, extended, io)
    if verb == "set":
        return _set(ctx, targets, params, yes, io)
    if verb in ("r", "reset"):
        return _reset(ctx, targets, yes, io)
    io.err.write(f'-E- Unknown command "{verb}"\n')
    return 1


def _query(targets, params: list[str], extended: bool, io) -> int:
    out = []
    for n, (card, dev) in enumerate(targets, 1):
        table = _params(card, "q")
        known = {t[0]: t for t in table}
        for p in params:
            if p not in known:
                io.err.write(f"-E- The Device doesn't support {p} parameter\n")
                return 1
        rows = [known[p] for p in params] if params else table
        out.append(_header(card, n, dev))
        if extended:
            out.append(f"{'Configurations:':<45}{'Default':<16}{'Current':<16}Next Boot\n")
            for name, default, current, nxt in rows:
                mark = "*" if nxt != default else " "
                out.append(f"{mark}        {name:<36}{default:<16}{current:<16}{nxt:<16}\n")
        else:
            out.append(f"{'Configurations:':<57}Next Boot\n")
            for name, _, _, nxt in rows:
                out.append(f"        {name:<44}{nxt}\n")
    io.out.write("".join(out))
    return 0


def _confirm(question: str, yes: bool, io) -> bool:
    if yes:
        io.out.write(f"\n {question} (y/n) [n] : y\n")
        return True
    answer = (io.stdin.readline() or "").strip().lower()
    io.out.write(f"\n {question} (y/n) [n] : {answer}\n")
    if answer not in ("y", "yes"):
        io.out.write("Aborted by user\n")
        return False
    return True


def _set(ctx: Ctx, targets, assigns: list[str], yes: bool, io) -> int:
    changes = []
    for a in assigns:
        name, eq, value = a.partition("=")
        if not eq:
            io.err.write(f'-E- Bad configuration format "{a}", expected PARAM=VALUE\n')
            return 1
        changes.append((name, value))
    if not changes:
        io.err.write("-E- No configurations to set\n")
        return 1
    for n, (card, dev) in enumerate(targets, 1):
        plan = []
        for name, value in changes:
            if not name.startswith("LINK_TYPE_P") or not name[11:].isdigit() or int(name[11:]) > card.ports:
                io.err.write(f"-E- The Device doesn't support {name} parameter\n")
                return 1
            new = _parse_value(value)
            if new is None:
                io.err.write(f'-E- Invalid configuration value "{value}" for parameter {name}\n')
                return 1
            plan.append((int(name[11:]) - 1, name, new))
        io.out.write(_header(card, n, dev))
        io.out.write(f"{'Configurations:':<57}{'Next Boot':<16}New\n")
        for port, name, new in plan:
            io.out.write(f"        {name:<44}{LINK_NAMES[card.link_type_next[port]]:<21}{LINK_NAMES[new]}\n")
        if not _confirm("Apply new Configuration?", yes, io):
            return 1
        for port, _, new in plan:
            card.link_type_next[port] = new
        io.out.write("Applying... Done!\n-I- Please reboot machine to load new configurations.\n")
    ctx.machine.changed()
    return 0


def _reset(ctx: Ctx, targets, yes: bool, io) -> int:
    for n, (card, dev) in enumerate(targets, 1):
        io.out.write(_header(card, n, dev))
        if not _confirm("Reset configuration for device " + dev + "?", yes, io):
            return 1
        card.link_type_next = [IB] * card.ports
        io.out.write("Applying... Done!\n-I- Please reboot machine to load new configurations.\n")
    ctx.machine.changed()
    return 0


COMMANDS = {"mlxconfig": mlxconfig}
