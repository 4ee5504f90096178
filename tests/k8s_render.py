"""A small kustomize renderer for the subset docker/k8s/ uses, so CI renders the overlays offline.

No kustomize or kubectl binary is installable from a package registry here, so this
implements exactly what our kustomization.yaml files use, and refuses anything else:

- `resources`: files (every YAML document in them) and folders with a kustomization.yaml,
  rendered first, in order;
- `namespace`: set on every namespaced object (not on Namespace objects);
- `images`: `name` matched against each container's image name (the part before `:tag` or
  `@digest`), replaced by `newName` and/or `newTag`.

Like kustomize, it fails on two objects with the same kind, namespace and name. It does
not do patches, generators, labels, replacements or components: a kustomization that asks
for them is refused rather than rendered differently from `kubectl apply -k`.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

SUPPORTED = {"apiVersion", "kind", "resources", "namespace", "images"}
CLUSTER_SCOPED = {"Namespace", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "PersistentVolume"}


class RenderError(ValueError):
    pass


def render(folder: Path) -> list[dict[str, Any]]:
    """The objects `kubectl kustomize folder` prints, for the subset above."""
    folder = Path(folder)
    path = folder / "kustomization.yaml"
    if not path.exists():
        raise RenderError(f"{folder}: no kustomization.yaml")
    kust = yaml.safe_load(path.read_text()) or {}
    unknown = set(kust) - SUPPORTED
    if unknown:
        raise RenderError(f"{path}: not supported by this renderer: {sorted(unknown)}")
    docs: list[dict[str, Any]] = []
    for entry in kust.get("resources", []):
        target = (folder / entry).resolve()
        if target.is_dir():
            docs += render(target)
        elif target.is_file():
            docs += [copy.deepcopy(d) for d in yaml.safe_load_all(target.read_text()) if d]
        else:
            raise RenderError(f"{path}: resource {entry!r} not found")
    namespace = kust.get("namespace")
    if namespace:
        for d in docs:
            if d.get("kind") not in CLUSTER_SCOPED:
                d.setdefault("metadata", {})["namespace"] = namespace
    for image in kust.get("images", []):
        for container in containers(docs):
            container["image"] = _retag(container["image"], image)
    seen: set[tuple[str, str, str]] = set()
    for d in docs:
        key = (d.get("kind", ""), d.get("metadata", {}).get("namespace", ""), d.get("metadata", {}).get("name", ""))
        if key in seen:
            raise RenderError(f"{path}: {key} appears twice")
        seen.add(key)
    return docs


def pod_spec(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The pod spec of a workload (Deployment, StatefulSet, ...), or None."""
    return doc.get("spec", {}).get("template", {}).get("spec")


def containers(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for d in docs:
        spec = pod_spec(d)
        if spec:
            out += spec.get("containers", []) + spec.get("initContainers", [])
    return out


def _retag(ref: str, image: dict[str, str]) -> str:
    if "@" in ref:
        name, sep, tag = ref.partition("@")
    else:
        name, sep, tag = ref.rpartition(":") if ":" in ref.rsplit("/", 1)[-1] else (ref, "", "")
    if name != image["name"]:
        return ref
    name = image.get("newName", name)
    if "newTag" in image:
        sep, tag = ":", image["newTag"]
    return f"{name}{sep}{tag}"
