"""$(( ... )): integer arithmetic on a whitelisted syntax tree (never eval)."""

from __future__ import annotations

import ast
import operator
import re

_BIN = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_CMP = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}


class ArithError(ValueError):
    pass


def evaluate(expr: str, lookup) -> int:
    """`lookup(name) -> str` gives variables; unset or non-numeric ones count as 0."""

    def var(m: re.Match) -> str:
        value = lookup(m.group(1)).strip()
        if re.fullmatch(r"0[xX][0-9a-fA-F]+", value):  # bash reads 0x.. as hexadecimal
            return str(int(value, 16))
        return value if re.fullmatch(r"-?\d+", value) else "0"

    text = re.sub(r"\$?\b([A-Za-z_]\w*)\b", var, expr).replace("/", "//").replace("&&", " and ")
    try:
        tree = ast.parse(text.strip() or "0", mode="eval")
    except SyntaxError:
        raise ArithError(f"{expr}: syntax error in expression") from None
    return int(_eval(tree.body, expr))


def _eval(node: ast.AST, expr: str) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _eval(node.operand, expr)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
        left, right = _eval(node.left, expr), _eval(node.right, expr)
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)) and right == 0:
            raise ArithError(f"{expr}: division by 0")
        return _BIN[type(node.op)](left, right)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _CMP:
        return int(_CMP[type(node.ops[0])](_eval(node.left, expr), _eval(node.comparators[0], expr)))
    raise ArithError(f"{expr}: syntax error in expression")
