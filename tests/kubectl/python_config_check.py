"""The Kubernetes Python client's typed ConfigMap and Secret calls against `strata up`.

Usage: python_config_check.py KUBECONFIG. Creates a ConfigMap and a Secret (stringData), reads
them back through the typed models (a Secret's data base64 as in Kubernetes), lists them, and
deletes them. Prints one line per check; exits 1 on the first that fails.
"""
import base64
import sys

from kubernetes import client, config


def main():
    config.load_kube_config(config_file=sys.argv[1])
    core = client.CoreV1Api()
    core.create_namespaced_config_map(
        "default",
        client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-settings"),
                           data={"MODE": "fast"}))
    core.create_namespaced_secret(
        "default",
        client.V1Secret(metadata=client.V1ObjectMeta(name="py-creds"),
                        string_data={"password": "py-s3cret"}))
    config_map = core.read_namespaced_config_map("py-settings", "default")
    assert config_map.data == {"MODE": "fast"}, config_map.data
    print("ok: the Python client reads a ConfigMap")
    secret = core.read_namespaced_secret("py-creds", "default")
    assert secret.type == "Opaque", secret.type
    assert base64.b64decode(secret.data["password"]) == b"py-s3cret", secret.data
    assert secret.string_data is None
    print("ok: the Python client reads a Secret, its stringData stored as base64 data")
    names = [s.metadata.name for s in core.list_namespaced_secret("default").items]
    assert "py-creds" in names, names
    print("ok: the Python client lists Secrets")
    core.delete_namespaced_secret("py-creds", "default")
    core.delete_namespaced_config_map("py-settings", "default")
    names = [c.metadata.name for c in core.list_namespaced_config_map("default").items]
    assert "py-settings" not in names, names
    print("ok: the Python client deletes them")


if __name__ == "__main__":
    main()
