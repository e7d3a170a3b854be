"""The official openai Python client against `strata gateway` in front of two `strata engine-sim`
replicas: chat, completions, streaming with usage, models, and the errors the client maps to
its exception classes. Everything binds port 0 on loopback.

Run: STRATA_BIN=build/release/bin/strata python3 tests/gateway/python/test_openai_client.py
Exits 77 (CTest's skip) when python3 cannot import openai.
"""

import os
import re
import subprocess
import sys
import tempfile
import threading
import unittest

try:
    import openai
except ImportError as error:
    print(f"skipped: python3 cannot import openai ({error})")
    sys.exit(77)

STRATA = os.environ.get("STRATA_BIN", os.path.join("build", "release", "bin", "strata"))
MODEL = "llama-test"
MESSAGES = [{"role": "user", "content": "Tell me something short."}]
LIVENESS_SECONDS = 60  # a hang guard, not a timing assertion


class StrataProcess:
    """A `strata` subcommand that prints "listening on HOST:PORT" once it serves."""

    def __init__(self, args):
        self.process = subprocess.Popen([STRATA, *args], stdout=subprocess.PIPE, text=True)
        found = threading.Event()
        self.port = None

        def read():
            for line in self.process.stdout:
                match = re.search(r"listening on \S*:(\d+)", line)
                if match and self.port is None:
                    self.port = int(match.group(1))
                    found.set()
            found.set()

        threading.Thread(target=read, daemon=True).start()
        if not found.wait(LIVENESS_SECONDS) or self.port is None:
            self.stop()
            raise RuntimeError(f"strata {args[0]} did not start listening")

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class OpenAIClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.processes = []
        replicas = []
        for _ in range(2):
            replica = StrataProcess(["engine-sim", "--port", "0", "--model", MODEL])
            cls.processes.append(replica)
            replicas.append(f'"127.0.0.1:{replica.port}"')
        cls.dir = tempfile.TemporaryDirectory(prefix="strata-gw-py-")
        config = os.path.join(cls.dir.name, "gateway.yaml")
        with open(config, "w") as out:
            out.write(
                "threads: 2\n"
                "models:\n"
                f"- {{name: {MODEL}, versions: [{{name: v1, endpoints: [{', '.join(replicas)}]}}]}}\n"
                "tenants:\n"
                "- {name: py, keys: [sk-py], tokensPerMinute: 1000000}\n"
            )
        gateway = StrataProcess(["gateway", "--listen", "127.0.0.1:0", "--config", config])
        cls.processes.append(gateway)
        cls.base_url = f"http://127.0.0.1:{gateway.port}/v1"
        cls.client = openai.OpenAI(api_key="sk-py", base_url=cls.base_url, max_retries=0,
                                   timeout=LIVENESS_SECONDS)

    @classmethod
    def tearDownClass(cls):
        for process in reversed(cls.processes):
            process.stop()
        cls.dir.cleanup()

    def test_models_list_and_retrieve(self):
        models = self.client.models.list()
        self.assertIn(MODEL, [model.id for model in models.data])
        model = self.client.models.retrieve(MODEL)
        self.assertEqual(model.id, MODEL)
        self.assertEqual(model.object, "model")
        self.assertIsInstance(model.created, int)
        self.assertEqual(model.owned_by, "strata")
        with self.assertRaises(openai.NotFoundError) as raised:
            self.client.models.retrieve("no-such-model")
        self.assertEqual(raised.exception.status_code, 404)
        self.assertEqual(raised.exception.code, "model_not_found")

    def test_chat_streaming_matches_non_streaming_with_usage_last(self):
        whole = self.client.chat.completions.create(model=MODEL, messages=MESSAGES, max_tokens=5)
        text = whole.choices[0].message.content
        self.assertTrue(text)
        self.assertGreater(whole.usage.prompt_tokens, 0)
        self.assertTrue(0 < whole.usage.completion_tokens <= 5)

        stream = self.client.chat.completions.create(
            model=MODEL, messages=MESSAGES, max_tokens=5, stream=True,
            stream_options={"include_usage": True})
        streamed, usage, chunks_after_usage = "", None, 0
        for chunk in stream:
            if usage is not None:
                chunks_after_usage += 1
            if chunk.choices:
                streamed += chunk.choices[0].delta.content or ""
            if chunk.usage is not None:
                usage = chunk.usage
        self.assertEqual(streamed, text)
        self.assertIsNotNone(usage, "the final chunk carries usage")
        self.assertEqual(chunks_after_usage, 0, "usage comes last")
        self.assertEqual(usage.completion_tokens, whole.usage.completion_tokens)
        self.assertEqual(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens)

    def test_chat_content_as_text_parts(self):
        parts = [{"type": "text", "text": "Tell me "}, {"type": "text", "text": "something short."}]
        answer = self.client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": parts}], max_tokens=3)
        self.assertTrue(answer.choices[0].message.content)

    def test_completions_streaming_and_non_streaming_agree(self):
        prompt = "Once upon a time"
        whole = self.client.completions.create(model=MODEL, prompt=prompt, max_tokens=4)
        self.assertTrue(whole.choices[0].text)
        self.assertGreater(whole.usage.completion_tokens, 0)
        stream = self.client.completions.create(model=MODEL, prompt=prompt, max_tokens=4,
                                                stream=True)
        streamed = "".join(chunk.choices[0].text for chunk in stream if chunk.choices)
        self.assertEqual(streamed, whole.choices[0].text)

    def test_completion_ids_are_unique_across_replicas(self):
        ids = {self.client.chat.completions.create(model=MODEL, messages=MESSAGES,
                                                   max_tokens=1).id for _ in range(8)}
        self.assertEqual(len(ids), 8)

    def test_an_unknown_model_is_not_found(self):
        with self.assertRaises(openai.NotFoundError) as raised:
            self.client.chat.completions.create(model="no-such-model", messages=MESSAGES)
        self.assertEqual(raised.exception.status_code, 404)

    def test_a_wrongly_typed_temperature_is_a_bad_request_naming_it(self):
        with self.assertRaises(openai.BadRequestError) as raised:
            self.client.chat.completions.create(model=MODEL, messages=MESSAGES,
                                                temperature="hot")
        self.assertEqual(raised.exception.status_code, 400)
        self.assertEqual(raised.exception.param, "temperature")
        self.assertEqual(raised.exception.type, "invalid_request_error")

    def test_an_unknown_key_is_refused(self):
        stranger = openai.OpenAI(api_key="sk-unknown", base_url=self.base_url, max_retries=0)
        with self.assertRaises(openai.AuthenticationError) as raised:
            stranger.chat.completions.create(model=MODEL, messages=MESSAGES)
        self.assertEqual(raised.exception.status_code, 401)


if __name__ == "__main__":
    unittest.main(verbosity=2)
