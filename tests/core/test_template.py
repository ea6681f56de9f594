import subprocess

import pytest

from runbook.definition.template import TemplateError, placeholders, render_command, render_value


def test_injection_stays_one_argument(tmp_path):
    target = tmp_path / "pwned"
    variables = {"dev": f"x; touch {target}"}
    cmd = render_command("printf '%s\\n' {{ dev }}", variables)
    out = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, check=True)
    assert out.stdout == f"x; touch {target}\n"
    assert not target.exists()


def test_list_becomes_quoted_words():
    cmd = render_command("for d in {{ devs }}; do echo $d; done", {"devs": ["mlx5_0", "a b"]})
    assert cmd == "for d in mlx5_0 'a b'; do echo $d; done"
    out = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["mlx5_0", "a b"]


def test_dotted_paths_before_and_int_keys():
    v = {"before": {"LINK_TYPE_P1": "ETH(2)"}, "rail_leaves": {1: "leaf01"}, "nics": [{"dev": "mlx5_3"}]}
    assert (
        render_command("{{ before.LINK_TYPE_P1 }} {{ rail_leaves.1 }} {{ nics.0.dev }}", v)
        == "'ETH(2)' leaf01 mlx5_3"
    )


def test_undefined_is_an_error_and_default_fills_it():
    with pytest.raises(TemplateError, match="nope"):
        render_command("echo {{ nope }}", {})
    assert render_command("echo {{ nope | default('x y') }}", {}) == "echo 'x y'"


def test_render_value_keeps_type_for_lone_placeholder():
    assert render_value("{{ n }}", {"n": 7}) == 7
    assert render_value("v{{ n }}", {"n": 7}) == "v7"
    assert render_value(["{{ a }}", 1], {"a": [1, 2]}) == [[1, 2], 1]
    assert placeholders("{{ a.b }} x {{c}}") == ["a.b", "c"]
