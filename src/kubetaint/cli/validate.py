"""`kubetaint validate [FILE]... [-f FILE]...`: validate manifests as kube-apiserver would on create."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import click

from kubetaint.cli.failure import Failure, UsageFailure
from kubetaint.cli.inputs import dumps_yaml, gather_files, input_files
from kubetaint.cli.output import write_out

if TYPE_CHECKING:  # (the API models are imported when the command runs: `--help` stays fast)
    from kubetaint.api.manifests import Manifest
    from kubetaint.api.validation import FieldError


@dataclass
class Result:
    """The verdict on one object."""

    manifest: Manifest
    errors: list[FieldError] = field(default_factory=list)
    decode_error: str | None = None

    @property
    def valid(self) -> bool:
        return not self.errors and self.decode_error is None

    def text(self) -> str:
        from kubetaint.api.manifests import manifest_name
        from kubetaint.api.validation import kubectl_invalid_message

        obj = self.manifest.obj
        if self.decode_error is not None:
            return self.decode_error
        if self.errors:
            message = kubectl_invalid_message(str(obj.get("kind")), _name(obj), self.errors)
            return f"{_where(self.manifest, self.errors[0].field)}: {message}"
        return f"{manifest_name(obj)} valid"

    def to_json(self) -> dict[str, Any]:
        from kubetaint.api.validation import api_group, invalid_message

        obj, m = self.manifest.obj, self.manifest
        raw_meta = obj.get("metadata")
        meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        doc: dict[str, Any] = {
            "source": m.source,
            "document": m.document,
            "line": m.line,
            "apiVersion": obj.get("apiVersion"),
            "kind": obj.get("kind"),
            "namespace": meta.get("namespace"),
            "name": _name(obj),
            "valid": self.valid,
            "errors": [
                {
                    "field": e.field,
                    "type": e.type,
                    "reason": e.reason,
                    "message": e.message,
                    "detail": e.detail,
                }
                for e in self.errors
            ],
            "message": None,
        }
        if self.decode_error is not None:
            doc["message"] = self.decode_error
        elif self.errors:
            group = api_group(str(obj.get("apiVersion") or ""))
            doc["message"] = invalid_message(str(obj.get("kind")), _name(obj), self.errors, group)
        return doc


def _where(manifest: Manifest, path: str) -> str:
    """`pz.yaml, document 1, line 6`, as load errors name a place: the line of the field at
    `path` when the text has it there, else the object's own line."""
    from kubetaint.api.manifests import field_line

    if path.startswith("metadata.taints") and manifest.obj.get("kind") == "Node":
        path = "spec" + path.removeprefix("metadata")  # (ValidateNode's path for spec.taints)
    line = field_line(manifest, path)
    where = f"{manifest.source}, document {manifest.document}"
    return where if line is None else f"{where}, line {line}"


def _name(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return ""
    return str(meta.get("name") or meta.get("generateName") or "")


def parse_feature_gates(text: str) -> dict[str, bool]:
    """`K=V,K2=V2` as kube components take --feature-gates."""
    from kubetaint.api.features import resolve_gates

    gates: dict[str, bool] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, raw = item.partition("=")
        if not sep:
            raise ValueError(f"missing bool value for {name}")
        value = raw.strip().lower()
        if value not in ("true", "false"):
            raise ValueError(f"invalid value of {name}={raw}, err: must be true or false")
        gates[name.strip()] = value == "true"
    return dict(resolve_gates(gates))


def _with_scenario_hint(manifest: Manifest, message: str) -> str:
    """kubectl's refusal of a kind it does not know, and for a kubetaint scenario the command
    that checks one."""
    obj = manifest.obj
    if obj.get("kind") == "Scenario" and str(obj.get("apiVersion") or "").startswith("kubetaint.dev/"):
        return f"{message} (a kubetaint scenario: `kubetaint simulate` checks and runs it)"
    return message


def validate_manifests(manifests: list[Manifest], gates: dict[str, bool] | None) -> list[Result]:
    """Decode and validate each manifest; type errors make that object invalid. A Pod is
    validated as the pod strategy's PrepareForCreate leaves it: its matchLabelKeys and
    mismatchLabelKeys merged into its selectors."""
    from kubetaint.api.manifests import ManifestError, check_manifest
    from kubetaint.api.validation import validate
    from kubetaint.core.label_keys_merge import with_label_keys_merged

    results = []
    for manifest in manifests:
        try:
            check_manifest(manifest)
        except ManifestError as exc:
            results.append(Result(manifest, decode_error=_with_scenario_hint(manifest, str(exc))))
            continue
        obj = manifest.obj
        if obj.get("kind") == "Pod" and obj.get("apiVersion") == "v1":
            obj = with_label_keys_merged(obj)
        results.append(Result(manifest, validate(obj, feature_gates=gates)))
    return results


@click.command(
    "validate",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  kubetaint validate pod.yaml
  kubetaint validate -f manifests/ -f extra.yaml
  kubectl get pods -o yaml | kubetaint validate -
  kubetaint validate pod.yaml -o json
""",
)
@input_files("Manifest file or directory; - reads standard input.")
@click.option(
    "-o",
    "--output",
    type=click.Choice(["text", "table", "wide", "json", "yaml"]),
    default="text",
    show_default=True,
    help="text (table and wide: the same lines), json or yaml.",
)
@click.option(
    "--feature-gates", default="", help="Feature gates, e.g. TaintTolerationComparisonOperators=true."
)
def validate_command(
    files: tuple[str, ...], more_files: tuple[str, ...], output: str, feature_gates: str
) -> None:
    """Validate manifests exactly as kube-apiserver would; exit 1 if any object is invalid.

    Each object is decoded as with fieldValidation=Strict (unknown and duplicate fields are
    errors) and validated as on create; every object gets its verdict in one run."""
    from kubetaint.api.manifests import ManifestError, load_documents

    try:
        gates = parse_feature_gates(feature_gates)
    except ValueError as exc:
        raise UsageFailure(f"--feature-gates: {exc}") from None
    try:
        manifests = load_documents(gather_files(files, more_files))
    except ManifestError as exc:
        raise Failure(str(exc)) from None
    if not manifests:
        raise Failure("no objects passed to validate")  # (kubectl: "no objects passed to create")
    results = validate_manifests(manifests, gates)
    if output in ("json", "yaml"):
        document = {"valid": all(r.valid for r in results), "objects": [r.to_json() for r in results]}
        write_out(json.dumps(document, indent=2) + "\n" if output == "json" else dumps_yaml(document))
    else:
        for result in results:
            click.echo(result.text())
    if not all(r.valid for r in results):
        sys.exit(1)
