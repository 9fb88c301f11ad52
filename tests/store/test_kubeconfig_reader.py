"""The kubeconfig reader, as kubectl reads kubeconfigs: $KUBECONFIG lists merged, the context's
namespace, and exec plugins (client.authentication.k8s.io/v1 and v1beta1 ExecCredential)."""

from __future__ import annotations

import base64
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubetaint.store.interface import StoreError
from kubetaint.store.remote_config import load_kubeconfig

V1 = "client.authentication.k8s.io/v1"


def _config(user: dict[str, Any], *, namespace: str | None = None) -> dict[str, Any]:
    context: dict[str, Any] = {"cluster": "c", "user": "u"}
    if namespace:
        context["namespace"] = namespace
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:6443"}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "x", "context": context}],
        "current-context": "x",
    }


def _write(tmp_path: Path, name: str, doc: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc))
    return path


def _plugin(tmp_path: Path, body: str) -> str:
    path = tmp_path / "plugin"
    path.write_text(f"#!{sys.executable}\nimport json, os, sys\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


ANSWER_TOKEN = (
    "info = json.loads(os.environ['KUBERNETES_EXEC_INFO'])\n"
    "print(json.dumps({'apiVersion': info['apiVersion'], 'kind': 'ExecCredential',"
    " 'status': {'token': 'tok-' + os.environ.get('EXTRA', '') + str(info['spec'].get('cluster', {}).get('server', ''))}}))"
)


@pytest.mark.parametrize("api_version", [V1, "client.authentication.k8s.io/v1beta1"])
def test_an_exec_plugin_hands_out_a_token(tmp_path: Path, api_version: str) -> None:
    command = _plugin(tmp_path, ANSWER_TOKEN)
    user = {
        "exec": {
            "apiVersion": api_version,
            "command": command,
            "interactiveMode": "Never",
            "env": [{"name": "EXTRA", "value": "e-"}],
            "provideClusterInfo": True,
        }
    }
    connection = load_kubeconfig(_write(tmp_path, "k", _config(user)))
    assert connection.token == "tok-e-https://127.0.0.1:6443"


def test_an_exec_plugin_hands_out_a_client_certificate(tmp_path: Path) -> None:
    command = _plugin(
        tmp_path,
        "print(json.dumps({'apiVersion': '" + V1 + "', 'kind': 'ExecCredential',"
        " 'status': {'clientCertificateData': 'CERT', 'clientKeyData': 'KEY'}}))",
    )
    user = {"exec": {"apiVersion": V1, "command": command, "interactiveMode": "IfAvailable"}}
    doc = _config(user)
    doc["clusters"][0]["cluster"]["server"] = "http://127.0.0.1:6443"  # (no TLS: the PEMs are not loaded)
    connection = load_kubeconfig(_write(tmp_path, "k", doc))
    assert connection.client_cert_data == ("CERT", "KEY") and connection.token is None


@pytest.mark.parametrize(
    ("exec_spec", "body", "message"),
    [
        pytest.param(
            {"apiVersion": "client.authentication.k8s.io/v1alpha1"},
            "",
            "invalid apiVersion",
            id="v1alpha1 is gone",
        ),
        pytest.param(
            {"apiVersion": V1, "interactiveMode": None},
            "",
            "interactiveMode must be specified for u to use exec authentication plugin",
            id="v1 needs interactiveMode (clientcmd's message)",
        ),
        pytest.param(
            {"apiVersion": V1, "interactiveMode": "Always"},
            "",
            "needs a terminal",
            id="Always needs a terminal",
        ),
        pytest.param(
            {"apiVersion": V1},
            "sys.stderr.write('denied\\n'); sys.exit(3)",
            "failed with exit code 3: denied",
            id="a failing plugin",
        ),
        pytest.param({"apiVersion": V1}, "print('nope')", "not an ExecCredential", id="not JSON"),
        pytest.param({"apiVersion": V1, "args": 5}, "", "args is not a list", id="args not a list"),
        pytest.param({"apiVersion": V1, "env": {"a": "b"}}, "", "env is not a list", id="env not a list"),
        pytest.param(
            {"apiVersion": V1},
            "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1beta1', 'kind': 'ExecCredential', 'status': {'token': 't'}}))",
            "does not match",
            id="another apiVersion in the answer",
        ),
        pytest.param(
            {"apiVersion": V1},
            "print(json.dumps({'apiVersion': '" + V1 + "', 'kind': 'ExecCredential', 'status': {}}))",
            "neither a token nor a client certificate",
            id="no credential in the answer",
        ),
    ],
)
def test_exec_plugin_problems_are_one_line(
    tmp_path: Path, exec_spec: dict[str, Any], body: str, message: str
) -> None:
    spec = {"command": _plugin(tmp_path, body), "interactiveMode": "Never", **exec_spec}
    spec = {k: v for k, v in spec.items() if v is not None}
    path = _write(tmp_path, "k", _config({"exec": spec}))
    with pytest.raises(StoreError) as err:
        load_kubeconfig(path)
    assert message in str(err.value) and "\n" not in str(err.value)
    assert str(err.value).startswith(f"{path}: user 'u': exec plugin")


def test_a_missing_plugin_names_its_install_hint(tmp_path: Path) -> None:
    spec = {
        "apiVersion": V1,
        "command": "no-such-helper",
        "interactiveMode": "Never",
        "installHint": "get it",
    }
    with pytest.raises(StoreError, match=r"executable no-such-helper not found \(get it\)"):
        load_kubeconfig(_write(tmp_path, "k", _config({"exec": spec})))


def test_kubeconfig_lists_merge_and_the_first_value_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _config({"token": "one"}, namespace="shop")
    first.pop("clusters")
    second = _config({"token": "two"})
    second["current-context"] = "other"
    token_file = tmp_path / "token"
    token_file.write_text("from-file\n")
    monkeypatch.setenv(
        "KUBECONFIG", f"{_write(tmp_path, 'a', first)}:{tmp_path / 'missing'}:{_write(tmp_path, 'b', second)}"
    )
    connection = load_kubeconfig()
    assert (connection.server, connection.token, connection.namespace) == (
        "https://127.0.0.1:6443",
        "one",
        "shop",
    )


def test_the_default_namespace_and_inline_ca(tmp_path: Path) -> None:
    doc = _config({"token": "t"})
    doc["clusters"][0]["cluster"]["certificate-authority-data"] = base64.b64encode(b"PEM").decode()
    doc["clusters"][0]["cluster"]["server"] = "http://127.0.0.1:6443"  # (no TLS: the PEM is not loaded)
    connection = load_kubeconfig(_write(tmp_path, "k", doc), "x")
    assert (connection.namespace, connection.ca_pem) == ("default", "PEM")
    assert connection.headers() == [("Authorization", "Bearer t")]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param(
            {"clusters": 5}, "{path}: not a kubeconfig: clusters is not a list", id="clusters not a list"
        ),
        pytest.param({"users": "u"}, "{path}: not a kubeconfig: users is not a list", id="users not a list"),
        pytest.param(
            {"users": [{"name": "u", "user": {"exec": 5}}]},
            "{path}: user 'u': exec is not a mapping",
            id="exec not a mapping",
        ),
        pytest.param(
            {"users": [{"name": "u", "user": {"auth-provider": {"name": "gcp", "config": {}}}}]},
            "{path}: user 'u': auth-provider gcp is not supported: use an exec plugin (client.authentication.k8s.io)",
            id="an auth-provider is refused, not skipped",
        ),
    ],
)
def test_a_kubeconfig_of_the_wrong_shape_is_one_line(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    path = _write(tmp_path, "k", {**_config({"token": "t"}), **change})
    with pytest.raises(StoreError) as err:
        load_kubeconfig(path)
    assert str(err.value) == message.format(path=path)
