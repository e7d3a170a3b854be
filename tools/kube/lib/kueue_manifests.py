#!/usr/bin/env python3
"""Prints Kueue's CRDs and webhook configurations, ready for a loopback cluster.

Reads the manifests tools/kube/build.sh copied from Kueue's module and does what Kueue's
kustomizations (config/default, components/crd, components/webhook) would: the `kueue-` name
prefix, the `kueue-system` namespace, the conversion webhook on the CRDs that
components/crd/kustomization.yaml patches, and the namespaceSelectors that
components/webhook/kustomization.yaml patches in. One difference, for loopback: the webhook
Service is reached on the port the manager listens on (cluster.sh makes that Service an
ExternalName for 127.0.0.1, so the API server dials the manager directly while checking the
certificate against the Service's DNS name, which is the name Kueue's own certificates carry).
Kueue's internal certificate management injects the CA bundles when it starts.

Usage: kueue_manifests.py KUEUE_DIR WEBHOOK_PORT
"""

import pathlib
import sys

import yaml

NAME_PREFIX = "kueue-"
NAMESPACE = "kueue-system"
SERVICE = NAME_PREFIX + "webhook-service"


def service_ref(port, path):
    return {"name": SERVICE, "namespace": NAMESPACE, "port": port, "path": path}


def patched_crd_names(crd_patch_dir):
    """CRD names whose conversion webhook components/crd/kustomization.yaml enables."""
    kustomization = yaml.safe_load((crd_patch_dir / "kustomization.yaml").read_text())
    names = set()
    for patch in kustomization.get("patches", []):
        path = crd_patch_dir / pathlib.Path(patch["path"]).name
        names.add(yaml.safe_load(path.read_text())["metadata"]["name"])
    return names


def crds(kueue_dir, port):
    converted = patched_crd_names(kueue_dir / "crd-patches")
    out = []
    for path in sorted((kueue_dir / "crds").glob("*.yaml")):
        for crd in yaml.safe_load_all(path.read_text()):
            if not crd:
                continue
            if crd["metadata"]["name"] in converted:
                crd["spec"]["conversion"] = {
                    "strategy": "Webhook",
                    "webhook": {
                        "clientConfig": {"service": service_ref(port, "/convert")},
                        "conversionReviewVersions": ["v1"],
                    },
                }
            out.append(crd)
    return out


def webhook_patches(webhook_dir):
    """(kind, configuration name) -> {webhook name: fields to merge}, from the inline patches."""
    kustomization = yaml.safe_load((webhook_dir / "kustomization.yaml").read_text())
    patches = {}
    for patch in kustomization.get("patches", []):
        doc = yaml.safe_load(patch["patch"])
        by_webhook = patches.setdefault((doc["kind"], doc["metadata"]["name"]), {})
        for webhook in doc.get("webhooks", []):
            fields = dict(webhook)
            by_webhook[fields.pop("name")] = fields
    return patches


def webhook_configurations(kueue_dir, port):
    webhook_dir = kueue_dir / "webhooks"
    patches = webhook_patches(webhook_dir)
    out = []
    for config in yaml.safe_load_all((webhook_dir / "manifests.yaml").read_text()):
        if not config:
            continue
        patch = patches.get((config["kind"], config["metadata"]["name"]), {})
        config["metadata"]["name"] = NAME_PREFIX + config["metadata"]["name"]
        for webhook in config["webhooks"]:
            path = webhook["clientConfig"]["service"]["path"]
            webhook["clientConfig"] = {"service": service_ref(port, path)}
            webhook.update(patch.get(webhook["name"], {}))
        out.append(config)
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    kueue_dir = pathlib.Path(sys.argv[1])
    port = int(sys.argv[2])
    docs = crds(kueue_dir, port) + webhook_configurations(kueue_dir, port)
    yaml.safe_dump_all(docs, sys.stdout, sort_keys=False)


if __name__ == "__main__":
    main()
