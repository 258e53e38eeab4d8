#!/usr/bin/env python3
"""What `kubectl apply -k DIR` applies, for the kustomizations of deploy/kubernetes, without kustomize.

Each example directory there is applied alone with its kustomization.yaml, which uses three of
kustomize's fields: `resources` (files of the directory), `namespace` (set on every namespaced
resource) and `images` (reachd's tag, named once). This renders exactly those, refuses any other
field (a field it ignored would make its answer wrong), and checks that the directory is whole:
every listed file exists, and every manifest file of the directory is listed (a file left out
is a file `apply -k` silently skips). Where `kubectl` is installed, its own `kubectl kustomize`
renders the directory too, and the two must agree — so this stays a faithful stand-in where it
is not (kubectl is not a Debian package).

Usage: render-kustomization.py DIR OUT   (writes the resources, as YAML documents, to OUT;
                                          problems on stderr, exit 1)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import yaml

FIELDS = {"apiVersion", "kind", "namespace", "resources", "images"}
# Kinds without a namespace among those the manifests could use.
CLUSTER_KINDS = {"Namespace", "ClusterRole", "ClusterRoleBinding", "PriorityClass", "StorageClass"}
POD_TEMPLATE_KINDS = {"Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job"}


def split_image(image: str) -> tuple[str, str]:
    """`name[:tag]` → (name, tag); a registry port (`host:5000/x`) is part of the name."""
    name, _, tag = image.rpartition(":")
    if not name or "/" in tag:
        return image, ""
    return name, tag


def render(directory: str) -> tuple[list[dict], list[str]]:
    problems: list[str] = []
    with open(os.path.join(directory, "kustomization.yaml")) as handle:
        kustomization = yaml.safe_load(handle)
    if kustomization.get("kind") != "Kustomization":
        problems.append("kustomization.yaml: kind is not Kustomization")
    for field in sorted(set(kustomization) - FIELDS):
        problems.append(f"kustomization.yaml: {field} is not rendered here (only {', '.join(sorted(FIELDS))})")
    namespace = kustomization.get("namespace")
    if not namespace:
        problems.append("kustomization.yaml: no namespace (every example sets its own)")
    resources = kustomization.get("resources", [])
    manifests = sorted(
        name for name in os.listdir(directory)
        if name.endswith((".yaml", ".yml")) and name != "kustomization.yaml"
        and os.path.isfile(os.path.join(directory, name)))
    for name in resources:
        if "/" in name or not os.path.isfile(os.path.join(directory, name)):
            problems.append(f"kustomization.yaml lists {name}, which is not a file of this directory")
    for name in manifests:
        if name not in resources:
            problems.append(f"{name} is not listed in kustomization.yaml: apply -k would skip it")
    images = {entry["name"]: entry for entry in kustomization.get("images", [])}

    documents: list[dict] = []
    for name in resources:
        path = os.path.join(directory, name)
        if not os.path.isfile(path):
            continue
        with open(path) as handle:
            for document in yaml.safe_load_all(handle):
                if not document:
                    continue
                metadata = document.setdefault("metadata", {})
                if "namespace" in metadata:
                    problems.append(f"{name}: {document['kind']} {metadata.get('name')} names its namespace; "
                                    "kustomization.yaml's namespace is the one place")
                if document["kind"] == "Namespace":
                    if metadata.get("name") != namespace:
                        problems.append(f"{name}: Namespace {metadata.get('name')} is not the kustomization's {namespace}")
                elif document["kind"] not in CLUSTER_KINDS and namespace:
                    metadata["namespace"] = namespace
                if document["kind"] in POD_TEMPLATE_KINDS:
                    spec = document["spec"]["template"]["spec"]
                    for container in spec.get("initContainers", []) + spec.get("containers", []):
                        image_name, tag = split_image(container["image"])
                        entry = images.get(image_name)
                        if entry:
                            container["image"] = entry.get("newName", image_name) + ":" + str(entry.get("newTag", tag or "latest"))
                documents.append(document)
    return documents, problems


def key(document: dict) -> tuple[str, str, str]:
    metadata = document.get("metadata", {})
    return document.get("kind", ""), metadata.get("namespace", ""), metadata.get("name", "")


def main() -> int:
    directory, out = sys.argv[1], sys.argv[2]
    documents, problems = render(directory)
    kubectl = shutil.which("kubectl")
    if kubectl and not problems:
        result = subprocess.run([kubectl, "kustomize", directory], capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            problems.append("kubectl kustomize: " + " ".join(result.stderr.split())[:300])
        else:
            theirs = sorted((d for d in yaml.safe_load_all(result.stdout) if d), key=key)
            if theirs != sorted(documents, key=key):
                problems.append("kubectl kustomize renders something else than this script: "
                                f"{[key(d) for d in theirs]} vs {[key(d) for d in sorted(documents, key=key)]}")
    with open(out, "w") as handle:
        yaml.safe_dump_all(documents, handle, sort_keys=False)
    for problem in problems:
        print(f"{directory}/{problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
