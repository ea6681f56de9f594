"""The report's "Pass when" fills in what the engine fills in at run time:
the host's own name and, for a `launch:` step, the job's ranks (issue 17:
criteria rendered with the host's values, never `{{ }}`)."""

from runbook.export.report_data import step_criteria

HOSTS = {
    "gpu01": {"gpus_per_node": 8, "nccl_inter_busbw_gbps": 38.0},
    "gpu02": {"gpus_per_node": 8, "nccl_inter_busbw_gbps": 38.0},
    "gpu03": {"gpus_per_node": 4, "nccl_inter_busbw_gbps": 38.0},
}


def test_the_hosts_own_name_is_filled_in():
    step = {
        "definition": {"verify": {"run": "hostname", "expect": [{"matches": "^{{ inventory_hostname }}$"}]}}
    }
    [text] = step_criteria(step, HOSTS, ["gpu01", "gpu02"])
    assert "gpu01" in text and "{{" not in text and "cannot fill in" not in text


def test_a_launch_step_gets_the_ranks_of_its_job():
    step = {
        "definition": {
            "launch": {"launcher": "nccl_launcher"},
            "verify": {
                "run": "mpirun ...",
                "expect": [
                    {"path": "rank_count", "eq": "{{ launch_ranks }}"},
                    {"path": "busbw", "ge": "{{ nccl_inter_busbw_gbps }}"},
                ],
            },
        }
    }
    texts = step_criteria(step, HOSTS, ["gpu01", "gpu02", "gpu03"])
    assert texts[0] == "rank_count eq 20", texts
    assert "38" in texts[1]
    assert not any("{{" in t or "cannot fill in" in t for t in texts)


def test_a_variable_the_log_does_not_have_is_said_not_hidden():
    step = {"definition": {"verify": {"run": "x", "expect": [{"path": "v", "eq": "{{ nowhere }}"}]}}}
    [text] = step_criteria(step, HOSTS, ["gpu01"])
    assert "cannot fill in" in text
