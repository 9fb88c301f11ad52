"""`kubetaint validate -f FILE...`: validate manifests exactly as kube-apiserver would on create."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any

import click

from kubetaint.api.features import resolve_gates
from kubetaint.api.manifests import Manifest, ManifestError, check_manifest, load_documents, manifest_name
from kubetaint.api.validation import FieldError, api_group, invalid_message, kubectl_invalid_message, validate


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
        obj = self.manifest.obj
        if self.decode_error is not None:
            return self.decode_error
        if self.errors:
            return kubectl_invalid_message(str(obj.get("kind")), _name(obj), self.errors)
        return f"{manifest_name(obj)} valid"

    def to_json(self) -> dict[str, Any]:
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


def _name(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return ""
    return str(meta.get("name") or meta.get("generateName") or "")


def parse_feature_gates(text: str) -> dict[str, bool]:
    """`K=V,K2=V2` as kube components take --feature-gates."""
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


def validate_manifests(manifests: list[Manifest], gates: dict[str, bool] | None) -> list[Result]:
    """Decode and validate each manifest; type errors make that object invalid."""
    results = []
    for manifest in manifests:
        try:
            check_manifest(manifest)
        except ManifestError as exc:
            results.append(Result(manifest, decode_error=str(exc)))
            continue
        results.append(Result(manifest, validate(manifest.obj, feature_gates=gates)))
    return results


@click.command("validate")
@click.option(
    "-f", "--filename", "files", multiple=True, required=True, help="Manifest file, directory or -."
)
@click.option("-o", "--output", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--feature-gates", default="", help="Feature gates, e.g. TaintTolerationComparisonOperators=true."
)
@click.argument("more_files", nargs=-1, metavar="[FILE]...")
def validate_command(
    files: tuple[str, ...], more_files: tuple[str, ...], output: str, feature_gates: str
) -> None:
    """Validate manifests exactly as kube-apiserver would; exit 1 if any object is invalid."""
    try:
        gates = parse_feature_gates(feature_gates)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--feature-gates") from None
    try:
        manifests = load_documents([*files, *more_files])  # `-f a.yaml b.yaml` as in -f FILE...
    except ManifestError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    results = validate_manifests(manifests, gates)
    if output == "json":
        document = {"valid": all(r.valid for r in results), "objects": [r.to_json() for r in results]}
        click.echo(json.dumps(document, indent=2))
    else:
        for result in results:
            click.echo(result.text())
    if not all(r.valid for r in results):
        sys.exit(1)
