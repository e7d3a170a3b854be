"""Tenants through `strata up`: the official openai Python client against the gateway of a real
`strata up` (one simulated GPU, so the replica runs `strata engine-sim`), with API keys and token
quotas from Tenant objects applied through the CLI. Checks that a missing or unknown key gets 401,
a tenant over its quota 429 with Retry-After, a Service that names its tenants 403 for the
others, and that a Tenant changed or deleted takes effect without a restart. Everything binds port 0 on loopback.

Run: STRATA_BIN=build/release/bin/strata python3 tests/serving/python/test_tenants_up.py
Exits 77 (CTest's skip) when python3 cannot import openai.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

try:
    import openai
except ImportError as error:
    print(f"skipped: python3 cannot import openai ({error})")
    sys.exit(77)

STRATA = os.environ.get("STRATA_BIN", os.path.join("build", "release", "bin", "strata"))
MODEL = "tenant-chat"
MESSAGES = [{"role": "user", "content": "Say hello."}]
# Bounds on waits for the platform to act, not timing assertions.
START_SECONDS = 60
CONVERGE_SECONDS = 60

PRIVATE_MODEL = "team-a-chat"


def service(name, model, tenants_line=""):
    return f"""
apiVersion: strata.dev/v1alpha1
kind: Service
metadata: {{name: {name}}}
spec:
  model: {model}
  engine: {{command: [vllm, serve, meta-llama/Llama-3.1-8B-Instruct, --served-model-name, {model}]}}
  resources: {{cpu: "1", memory: 4Gi, gpu: 1}}
  minReplicas: 1
  maxReplicas: 1
{tenants_line}"""


def tenant(name, keys, tokens_per_minute=0):
    return (
        "apiVersion: strata.dev/v1alpha1\nkind: Tenant\n"
        f"metadata: {{name: {name}}}\n"
        f"spec: {{apiKeys: [{', '.join(keys)}], tokensPerMinute: {tokens_per_minute}}}\n"
    )


def wait_for(what, check, seconds=CONVERGE_SECONDS):
    """Polls `check` until it returns a truthy value; fails naming `what` after `seconds`."""
    deadline = time.monotonic() + seconds
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.1)
    raise AssertionError(f"gave up waiting for {what}; last: {last!r}")


class TenantsThroughUpTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="strata-tenants-")
        # The file's tenant and the store's are one set; a short queue wait keeps the 429 quick.
        config = os.path.join(cls.dir, "gateway.yaml")
        with open(config, "w") as out:
            out.write(
                "limits: {maxQueueWaitMs: 200}\n"
                "tenants:\n- {name: ops, keys: [sk-ops-file-key]}\n"
            )
        cls.up = subprocess.Popen(
            [STRATA, "up", "--data-dir", os.path.join(cls.dir, "data"),
             "--listen", "127.0.0.1:0", "--gateway-listen", "127.0.0.1:0",
             "--gateway-config", config, "--simulate", "1x2:H100-80GB",
             "--sim-startup-delay", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        cls.log = []
        addresses = {}
        found = threading.Event()

        def read():
            for line in cls.up.stdout:
                cls.log.append(line)
                for name in ("API", "gateway"):
                    match = re.search(name + r" listening on (http://\S+)", line)
                    if match:
                        addresses.setdefault(name, match.group(1))
                if len(addresses) == 2:
                    found.set()
            found.set()

        threading.Thread(target=read, daemon=True).start()
        if not found.wait(START_SECONDS) or len(addresses) != 2:
            cls.tearDownClass()
            raise RuntimeError("strata up did not start:\n" + "".join(cls.log))
        cls.api = addresses["API"]
        cls.base_url = addresses["gateway"] + "/v1"
        cls.apply("service", service("chat", MODEL))
        cls.apply("private", service("private", PRIVATE_MODEL, "  tenants: [team-a]\n"))
        cls.apply("team-a", tenant("team-a", ["sk-team-a-key-1"]))
        cls.apply("team-small", tenant("team-small", ["sk-team-small-1"], 150))
        # Ready: the replica answers through the gateway.
        wait_for("the replica to serve", lambda: cls.chat_status("sk-ops-file-key") == 200, 120)
        wait_for("the private replica to serve",
                 lambda: cls.chat_status("sk-team-a-key-1", model=PRIVATE_MODEL) == 200, 120)

    @classmethod
    def tearDownClass(cls):
        # strata up leaves its pods running when stopped: the service goes first.
        if cls.up.poll() is None and getattr(cls, "api", None):
            for name in ("chat", "private"):
                subprocess.run([STRATA, "delete", "service", name, "--server", cls.api],
                               capture_output=True)
            time.sleep(1)
        if cls.up.poll() is None:
            cls.up.terminate()
            try:
                cls.up.wait(30)
            except subprocess.TimeoutExpired:
                cls.up.kill()
                cls.up.wait()
        shutil.rmtree(cls.dir, ignore_errors=True)

    @classmethod
    def apply(cls, name, yaml):
        path = os.path.join(cls.dir, f"{name}.yaml")
        with open(path, "w") as out:
            out.write(yaml)
        run = subprocess.run([STRATA, "apply", "-f", path, "--server", cls.api],
                             capture_output=True, text=True)
        assert run.returncode == 0, f"apply {name}: {run.stdout}{run.stderr}"

    @classmethod
    def client(cls, key):
        return openai.OpenAI(base_url=cls.base_url, api_key=key, max_retries=0, timeout=60)

    @classmethod
    def chat_status(cls, key, max_tokens=4, model=MODEL):
        """The HTTP status of one chat completion with `key` (None: no Authorization field)."""
        client = cls.client(key or "unused")
        headers = {"Authorization": ""} if key is None else {}
        try:
            client.chat.completions.create(model=model, messages=MESSAGES, max_tokens=max_tokens,
                                           extra_headers=headers)
            return 200
        except openai.APIStatusError as error:
            return error.status_code
        except openai.APIConnectionError:
            return None

    def test_unknown_keys_get_401(self):
        self.assertEqual(self.chat_status(None), 401)
        with self.assertRaises(openai.AuthenticationError) as raised:
            self.client("sk-nobody-has-this").chat.completions.create(
                model=MODEL, messages=MESSAGES, max_tokens=4)
        self.assertEqual(raised.exception.status_code, 401)
        self.assertEqual(raised.exception.code, "invalid_api_key")
        self.assertEqual(self.chat_status("sk-team-a-key-1"), 200)
        self.assertEqual(self.chat_status("sk-ops-file-key"), 200)

    def test_a_service_naming_tenants_serves_them_only(self):
        self.assertEqual(self.chat_status("sk-team-a-key-1", model=PRIVATE_MODEL), 200)
        with self.assertRaises(openai.PermissionDeniedError) as raised:
            self.client("sk-ops-file-key").chat.completions.create(
                model=PRIVATE_MODEL, messages=MESSAGES, max_tokens=4)
        self.assertIn('tenant "ops" may not call', raised.exception.message)
        # The model list takes a key too.
        with self.assertRaises(openai.AuthenticationError):
            self.client("sk-nobody-has-this").models.list()
        ids = {model.id for model in self.client("sk-ops-file-key").models.list()}
        self.assertIn(MODEL, ids)

    def test_over_quota_gets_429_with_retry_after(self):
        # 150 tokens a minute: a request of ~100 completion tokens fits, a second one does not
        # until the bucket refills (2.5 tokens/s), and its wait ends at maxQueueWaitMs.
        client = self.client("sk-team-small-1")
        first = client.chat.completions.create(model=MODEL, messages=MESSAGES, max_tokens=100)
        self.assertTrue(first.choices)
        with self.assertRaises(openai.RateLimitError) as raised:
            client.chat.completions.create(model=MODEL, messages=MESSAGES, max_tokens=100)
        self.assertEqual(raised.exception.status_code, 429)
        self.assertGreaterEqual(int(raised.exception.response.headers["retry-after"]), 1)
        self.assertIn("team-small", raised.exception.message)
        # Another tenant is not held back by it.
        self.assertEqual(self.chat_status("sk-team-a-key-1", 100), 200)

    def test_a_tenant_changed_or_deleted_takes_effect_without_restart(self):
        self.apply("team-b", tenant("team-b", ["sk-team-b-old"]))
        wait_for("team-b's key accepted", lambda: self.chat_status("sk-team-b-old") == 200)
        # The key rotated: the old one is refused, the new one accepted.
        self.apply("team-b", tenant("team-b", ["sk-team-b-new"]))
        wait_for("the old key refused", lambda: self.chat_status("sk-team-b-old") == 401)
        self.assertEqual(self.chat_status("sk-team-b-new"), 200)
        # Deleted: its key is refused; the other tenants' keys still work.
        run = subprocess.run([STRATA, "delete", "tenant", "team-b", "--server", self.api],
                             capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        wait_for("the deleted tenant's key refused",
                 lambda: self.chat_status("sk-team-b-new") == 401)
        self.assertEqual(self.chat_status("sk-team-a-key-1"), 200)
        self.assertEqual(self.chat_status(None), 401)


if __name__ == "__main__":
    unittest.main(verbosity=2)
