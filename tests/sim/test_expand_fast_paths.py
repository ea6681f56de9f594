"""Word expansion's short paths (sim/shell/interp.py expansion_plan: literal
words' fields kept, a word quoted throughout, text and $x joined, the glob flag
kept per field)
give the general path's answer on every word of the shipped steps' commands
and of the detached and launch wrappers the engine sends."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from runbook.definition.loader import load_runbook
from runbook.engine import detached
from runbook.engine.kinds import launchjob
from runbook.sim.shell.interp import FIELD_SEPARATORS, GLOB_CHARS, GLOB_ESCAPE, Shell
from runbook.sim.shell.lexer import ShellSyntaxError
from runbook.sim.shell.nodes import Word
from runbook.sim.shell.parser import parse

STEPS = Path(__file__).resolve().parents[2] / "steps"


async def expand_generally(shell: Shell, word: Word) -> list[str]:
    """expand_fields as it was before its short paths (the general case only)."""
    fields: list[list[tuple[str, bool]]] = [[]]
    keep = [False]
    for kind, value, quoted in word.parts:
        if kind == "lit":
            fields[-1].append((value, quoted))
            keep[-1] = keep[-1] or quoted or bool(value)
            continue
        text = await shell.expand_part(kind, value)
        if quoted or kind == "tilde":
            fields[-1].append((text, True))
            keep[-1] = True
            continue
        for n, chunk in enumerate(FIELD_SEPARATORS.split(text)):
            if n:
                fields.append([])
                keep.append(False)
            if chunk:
                fields[-1].append((chunk, False))
                keep[-1] = True
    out: list[str] = []
    for segs, wanted in zip(fields, keep):
        if not wanted:
            continue
        text = "".join(t for t, _ in segs)
        if any(not q and GLOB_CHARS.search(t) for t, q in segs):
            pattern = "".join(t if not q else GLOB_ESCAPE.sub(r"[\1]", t) for t, q in segs)
            matches = shell.machine.fs.glob(pattern, shell.cwd)
            if matches:
                out.extend(matches)
                continue
        out.append(text)
    return out


def words_of(node) -> list[Word]:
    """Every Word in a parsed tree (commands, redirection targets, loop lists)."""
    if isinstance(node, Word):
        return [node]
    if dataclasses.is_dataclass(node):
        return [w for f in dataclasses.fields(node) for w in words_of(getattr(node, f.name))]
    if isinstance(node, (list, tuple)):
        return [w for item in node for w in words_of(item)]
    return []


def scripts() -> list[str]:
    texts = []
    for step in load_runbook(STEPS).steps:
        for action in (step.verify, step.apply, step.rollback):
            if action is not None and action.run:
                texts.append(re.sub(r"\{\{.*?\}\}", "mlx5_0", action.run))
    texts.append(detached.wrap("dcgmi diag -r 1", "20261201-1", "dcgm-diag", "verify"))
    texts.append(detached.stop_command("20261201-1", "dcgm-diag", "verify"))
    texts.append(launchjob.wrap("mpirun -np 2 hostname", "/var/tmp/runbook-launch/r.s.x", ["gpu01", "gpu02"]))
    texts.append(launchjob.stop_step_command("20261201-1", "nccl"))
    texts.append(
        'x="a b"; e=; s="*"; echo "$x" $x "$e" $e $s "$s" a"$x"b ${x:-z} "${e:-d}" ~ ~/x "$@" $@ '
        '"$(echo "p q")" $(echo "p  q") /etc/*.d "/etc/"*.d /etc/$s.d "$(ls /etc | head -1)" $((1+2)) "$((3))"'
        " [ a[b a[c /root/[ /root//[ ./[ [/ .[ ]["
        # text and $x (JOINED): one field, or the general path when a $x splits or globs
        ' /proc/irq/$i/smp_affinity_list $e$e "$e"$e $e"" pre$x x$s/ $s.d "/r$s"$i a$n/$e/b ${e:-z}/$i'
        ' /var/$i/[ab] "$x"$i ${x:=q}.$x'
    )
    return texts


async def test_every_word_expands_as_the_general_path_does(machine_of, sh):
    gpu01 = machine_of(2)("gpu01")
    await sh(gpu01, "mkdir -p /var/tmp/runbook-jobs/r.s; echo 1 > /var/tmp/runbook-jobs/r.s/pid")
    await sh(gpu01, "touch '/root/[' '/root/a[b'")  # names a literal pattern finds
    variables = {
        "d": "/var/tmp/runbook-jobs/r.s",
        "x": "a b",
        "e": "",
        "s": "*",
        "delay": "0.1",
        "unit": "runbook-r-s",
        "p": "runbook: progress",
        "i": "3",
        "n": "0",
    }
    checked = 0
    for text in scripts():
        try:
            tree = parse(text)
        except ShellSyntaxError:
            continue
        for word in words_of(tree):
            fast, general = Shell(gpu01), Shell(gpu01)
            fast.vars.update(variables)
            general.vars.update(variables)
            got = await fast.expand_fields(word)
            want = await expand_generally(general, word)
            assert (got, fast.status) == (want, general.status), word
            again = Shell(gpu01)
            again.vars.update(variables)
            assert await again.expand_words([word, word]) == want + want, word  # with its plan now known
            checked += 1
    assert checked > 1500
