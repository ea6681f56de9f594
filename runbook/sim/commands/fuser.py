"""`fuser [-k] [-n tcp] PORT[/tcp]`: which simulated process listens on a TCP
port (an ib_write_bw server waiting for its client), and `-k` kills it. As
psmisc prints it: the name ("18515/tcp:") on stderr, the PIDs on stdout;
exit status 0 when something was found, 1 when not."""

from __future__ import annotations

from .base import Ctx


def _listeners(ctx: Ctx, port: int) -> list:
    return [
        f
        for f in ctx.machine.rendezvous.get("ib_write_bw") or []
        if not f.done() and getattr(f, "port", None) == port
    ]


def fuser(ctx: Ctx, args, io) -> int:
    kill, space, names = False, "", []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-k":
            kill = True
        elif a == "-n" and i + 1 < len(args):
            space, i = args[i + 1], i + 1
        elif a.startswith("-") and a not in ("-9", "-KILL", "-TERM", "-s", "-v", "-u", "-m"):
            io.err.write(f"fuser: Invalid option {a}\n")
            return 1
        elif not a.startswith("-"):
            names.append(a)
        i += 1
    if not names:
        io.err.write("No process specification given\n")
        return 1
    found_any = False
    for name in names:
        port_text, _, proto = name.partition("/")
        proto = proto or space
        if proto != "tcp" or not port_text.isdigit():
            io.err.write(f"Cannot stat file {name}: No such file or directory\n")
            continue
        found = _listeners(ctx, int(port_text))
        if not found:
            continue
        found_any = True
        io.err.write(f"{port_text}/tcp:           ")
        io.out.write("".join(f" {4242 + int(port_text) % 1000 + k}" for k in range(len(found))))
        io.err.write("\n")
        if kill:
            for f in found:
                f.set_result(None)
    return 0 if found_any else 1


COMMANDS = {"fuser": fuser}
