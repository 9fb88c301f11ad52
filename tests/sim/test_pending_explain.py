"""Why the pods still pending at the end of a run are pending, plugin by plugin, as the HTML
report shows it (`kubetaint.sim.pending_explain`)."""

from __future__ import annotations

from functools import cache
from typing import Any

from kubetaint.sim.api import simulate
from kubetaint.sim.pending_explain import explain_pending
from kubetaint.sim.report_html import render_html

POD = {"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "6"}}}


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [POD], **spec},
    }


#: Six nodes: two tainted for GPUs, two labelled for another team, two that hold one 6-CPU pod each.
SCENARIO = {
    "apiVersion": "kubetaint.dev/v1alpha1",
    "kind": "Scenario",
    "metadata": {"name": "pending"},
    "spec": {
        "until": "1m",
        "nodeGroups": [
            {
                "name": "gpu",
                "count": 2,
                "template": {
                    "spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}
                },
            },
            {"name": "other", "count": 2, "template": {"metadata": {"labels": {"team": "other"}}}},
            {"name": "general", "count": 2, "template": {"metadata": {"labels": {"team": "mine"}}}},
        ],
        "objects": [
            _pod("first", nodeName="general-0"),
            _pod("second", nodeName="general-1"),
            *[_pod(f"late-{i}", nodeSelector={"team": "mine"}) for i in range(3)],
        ],
    },
}


@cache
def pending_run() -> dict[str, Any]:
    """The run of SCENARIO: three pods pending at the end."""
    return simulate(SCENARIO)


def test_one_pod_of_each_group_is_explained_plugin_by_plugin() -> None:
    (group,) = explain_pending(pending_run())
    assert (group["pod"], group["pods"], group["feasible"]) == ("default/late-0", 3, 0)
    assert group["message"].startswith("0/6 nodes are available: ")
    verdicts = [(v["plugin"], v["nodes"], v["names"]) for v in group["verdicts"]]
    assert verdicts == [
        ("NodeAffinity", 2, ["other-0", "other-1"]),
        ("NodeResourcesFit", 2, ["general-0", "general-1"]),
        ("TaintToleration", 2, ["gpu-0", "gpu-1"]),
    ]
    taint = next(v for v in group["verdicts"] if v["plugin"] == "TaintToleration")
    assert taint["taint"] == {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    assert taint["toleration"] == {
        "key": "dedicated",
        "operator": "Equal",
        "value": "gpu",
        "effect": "NoSchedule",
    }


def test_a_run_without_pending_pods_has_nothing_to_explain() -> None:
    doc = simulate({**SCENARIO, "spec": {**SCENARIO["spec"], "objects": SCENARIO["spec"]["objects"][:2]}})
    assert explain_pending(doc) == []


def test_the_report_shows_the_verdicts_under_the_pods_still_pending() -> None:
    page = render_html(pending_run(), explain_pending(pending_run()))
    section = page[page.index('id="still-pending"') : page.index('id="timeline"')]
    assert "Why <b>default/late-0</b> (and 2 more with the same message) is pending" in section
    rows = section[section.index('class="verdicts"') :]
    assert rows.count("<tr><td>") == 3
    assert "<code>dedicated=gpu:NoSchedule</code>" in rows
    assert (
        '{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}'
        in rows.replace("&quot;", '"')
    )


def test_every_group_is_explained_largest_first() -> None:
    huge = _pod("huge")
    huge["spec"]["containers"] = [{**POD, "resources": {"requests": {"cpu": "100"}}}]
    doc = simulate(
        {**SCENARIO, "spec": {**SCENARIO["spec"], "objects": [*SCENARIO["spec"]["objects"], huge]}}
    )
    groups = explain_pending(doc)
    assert [(g["pod"], g["pods"]) for g in groups] == [("default/late-0", 3), ("default/huge", 1)]
    assert [(v["plugin"], v["nodes"]) for v in groups[1]["verdicts"]] == [
        ("NodeResourcesFit", 4),
        ("TaintToleration", 2),
    ]
