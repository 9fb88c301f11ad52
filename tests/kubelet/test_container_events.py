"""The container events of a started and a stopped pod, as the real kubelet records them
(pkg/kubelet/images/image_manager.go, kuberuntime_container.go): image references and pull
policies as upstream defaults them, an image pulled once is present for the next pod."""

from __future__ import annotations

import pytest

from kubetaint.kubelet import container_events as ce


@pytest.mark.parametrize(
    ("image", "tagged"),
    [
        pytest.param("nginx", "nginx:latest", id="an untagged name gets the latest tag"),
        pytest.param("nginx:1.25", "nginx:1.25", id="a tag is kept"),
        pytest.param("localhost:5000/app", "localhost:5000/app:latest", id="a registry port is not a tag"),
        pytest.param("localhost:5000/app:v2", "localhost:5000/app:v2", id="a tag after a registry port"),
        pytest.param("nginx@sha256:" + "a" * 64, "nginx@sha256:" + "a" * 64, id="a digest gets no tag"),
    ],
)
def test_apply_default_image_tag(image: str, tagged: str) -> None:
    assert ce.with_default_tag(image) == tagged


@pytest.mark.parametrize(
    ("container", "policy"),
    [
        pytest.param({"image": "nginx"}, "Always", id="untagged: Always"),
        pytest.param({"image": "nginx:latest"}, "Always", id="latest: Always"),
        pytest.param({"image": "nginx:1.25"}, "IfNotPresent", id="tagged: IfNotPresent"),
        pytest.param({"image": "nginx@sha256:" + "a" * 64}, "IfNotPresent", id="digest: IfNotPresent"),
        pytest.param({"image": "nginx", "imagePullPolicy": "Never"}, "Never", id="a set policy is kept"),
    ],
)
def test_the_pull_policy_defaults_as_set_defaults_container(container: dict, policy: str) -> None:
    assert ce.pull_policy(container) == policy


def pod(*containers: dict, init: tuple[dict, ...] = ()) -> dict:
    spec: dict = {"containers": list(containers)}
    if init:
        spec["initContainers"] = list(init)
    return {"metadata": {"name": "web", "namespace": "default"}, "spec": spec}


def test_a_started_pod_pulls_creates_and_starts_each_container_init_containers_first() -> None:
    events = ce.started(
        pod({"name": "c", "image": "nginx:1.25"}, init=({"name": "i", "image": "busybox"},)), set()
    )
    assert [(e.field_path, e.event_type, e.reason, e.message) for e in events] == [
        ("spec.initContainers{i}", "Normal", "Pulling", 'Pulling image "busybox:latest"'),
        (
            "spec.initContainers{i}",
            "Normal",
            "Pulled",
            'Successfully pulled image "busybox:latest" in 0s (0s including waiting). Image size: 0 bytes.',
        ),
        ("spec.initContainers{i}", "Normal", "Created", "Container created"),
        ("spec.initContainers{i}", "Normal", "Started", "Container started"),
        ("spec.containers{c}", "Normal", "Pulling", 'Pulling image "nginx:1.25"'),
        (
            "spec.containers{c}",
            "Normal",
            "Pulled",
            'Successfully pulled image "nginx:1.25" in 0s (0s including waiting). Image size: 0 bytes.',
        ),
        ("spec.containers{c}", "Normal", "Created", "Container created"),
        ("spec.containers{c}", "Normal", "Started", "Container started"),
    ]


def test_an_image_pulled_before_is_present_unless_the_policy_is_always() -> None:
    pulled: set[str] = set()
    ce.started(pod({"name": "c", "image": "nginx:1.25"}, {"name": "d", "image": "redis"}), pulled)
    again = ce.started(pod({"name": "c", "image": "nginx:1.25"}, {"name": "d", "image": "redis"}), pulled)
    assert [(e.field_path, e.reason, e.message) for e in again if e.reason in ("Pulling", "Pulled")] == [
        (
            "spec.containers{c}",
            "Pulled",
            'Container image "nginx:1.25" already present on machine and can be accessed by the pod',
        ),
        ("spec.containers{d}", "Pulling", 'Pulling image "redis:latest"'),
        (
            "spec.containers{d}",
            "Pulled",
            'Successfully pulled image "redis:latest" in 0s (0s including waiting). Image size: 0 bytes.',
        ),
    ]


def test_pull_policy_never_finds_the_image_present() -> None:
    (pulled, *_) = ce.started(pod({"name": "c", "image": "app", "imagePullPolicy": "Never"}), set())
    assert (pulled.reason, pulled.message) == (
        "Pulled",
        'Container image "app" already present on machine and can be accessed by the pod',
    )


def test_a_stopped_pod_kills_each_container() -> None:
    events = ce.killed(pod({"name": "c", "image": "x"}, {"name": "d", "image": "y"}))
    assert [(e.field_path, e.reason, e.message) for e in events] == [
        ("spec.containers{c}", "Killing", "Stopping container c"),
        ("spec.containers{d}", "Killing", "Stopping container d"),
    ]
