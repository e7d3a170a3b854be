#!/usr/bin/env python3
"""Replays the start of a Mooncake trace through an OpenAI-compatible gateway in real time.

Each request of the trace becomes one streaming POST /v1/completions whose prompt is text built
from its hash ids: hash id k expands into the same 512 tokens wherever it appears (a word naming
k, then filler), so requests that share hash ids share a text prefix, as the trace means; tokens
past the listed blocks start with a word naming the request; the prompt is cut to input_length
tokens; max_tokens is output_length. engine-sim's tokenizer makes a token of each run of letters
and digits and of each other non-space byte, so the engines see the same token counts and the
same prefix sharing as `strata sim serve` does from the trace itself.

--bytes-per-token sets how much text a token takes (the filler: one-letter words, or dots for 1
byte), which is what the gateway's picker sees: it prices a 64-byte block of prompt by the
prefill time of English text (16 tokens), in real seconds.

Time: arrivals are the trace's timestamps divided by --rate-scale (as `strata sim serve`) and by
--time-scale (the engine-sims' --time-scale: they run that many times faster than real time).
Measured latencies are multiplied by --time-scale, so the figures printed are in the engines'
simulated seconds, comparable with `strata sim serve`'s.

Prints one JSON object with the same fields as `strata sim serve -o json` where they exist.
Standard library only.
"""

import argparse
import http.client
import json
import math
import sys
import threading
import time

BLOCK_TOKENS = 512


def filler(count, bytes_per_token):
    """`count` tokens of `bytes_per_token` bytes each (the separating space included)."""
    if bytes_per_token <= 1:
        return "." * count
    return ("a" * (bytes_per_token - 1) + " ") * count


def tokens_text(name, count, bytes_per_token):
    """`count` tokens: the word `name`, then filler."""
    return name + " " + filler(count - 1, bytes_per_token) if count > 0 else ""


def prompt_text(index, row, cache, bytes_per_token):
    parts = []
    left = row["input_length"]
    for key in row["hash_ids"]:
        if left <= 0:
            break
        if left >= BLOCK_TOKENS:
            if key not in cache:
                cache[key] = tokens_text("k%x" % key, BLOCK_TOKENS, bytes_per_token)
            parts.append(cache[key])
            left -= BLOCK_TOKENS
        else:
            parts.append(tokens_text("k%x" % key, left, bytes_per_token))
            left = 0
    if left > 0:
        parts.append(tokens_text("u%x" % index, left, bytes_per_token))
    return " ".join(parts)


def percentile(sorted_values, p):
    """Nearest rank, as strata sim serve reports."""
    if not sorted_values:
        return 0.0
    rank = max(1, min(len(sorted_values), math.ceil(p * len(sorted_values))))
    return sorted_values[rank - 1]


class Result:
    def __init__(self):
        self.ttft = None
        self.tpot = None
        self.tokens = 0
        self.gaps = []  # seconds between consecutive tokens as the client read them
        self.error = None
        self.late = 0.0  # seconds by which the request left after its trace arrival (engine time)


def send(host, port, model, prompt, max_tokens, result, time_scale, due):
    body = json.dumps(
        {
            "model": model,
            "prompt": prompt,
            "max_tokens": max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
    ).encode()
    start = time.monotonic()
    result.late = max(0.0, start - due) * time_scale
    first = last = None
    try:
        connection = http.client.HTTPConnection(host, port, timeout=3600)
        connection.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        if response.status != 200:
            result.error = "HTTP %d: %s" % (response.status, response.read(200))
            return
        while True:
            line = response.readline()
            if not line:
                break
            if not line.startswith(b"data: "):
                continue
            payload = line[6:].strip()
            if payload == b"[DONE]":
                break
            chunk = json.loads(payload)
            if chunk.get("choices") and chunk["choices"][0].get("text"):
                now = time.monotonic()
                if first is None:
                    first = now
                else:
                    result.gaps.append((now - last) * time_scale)
                last = now
                result.tokens += 1
        connection.close()
    except (OSError, http.client.HTTPException, ValueError) as error:
        result.error = repr(error)
        return
    if first is None:
        result.error = "no token"
        return
    result.ttft = (first - start) * time_scale
    if result.tokens > 1:
        result.tpot = (last - first) / (result.tokens - 1) * time_scale


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", required=True)
    parser.add_argument("--gateway", required=True, help="host:port")
    parser.add_argument("--model", default="llama-3-8b")
    parser.add_argument("--rate-scale", type=float, default=1.0)
    parser.add_argument("--time-scale", type=float, default=1.0)
    parser.add_argument("--max-requests", type=int, default=300)
    parser.add_argument("--bytes-per-token", type=int, default=4,
                        help="bytes of prompt text per token (1-5; English is about 4)")
    parser.add_argument("--ttft-slo", type=float, default=2.0)
    parser.add_argument("--tpot-slo", type=float, default=0.05)
    args = parser.parse_args()
    host, port = args.gateway.rsplit(":", 1)

    rows = []
    with open(args.trace) as trace:
        for line in trace:
            if line.strip():
                rows.append(json.loads(line))
            if len(rows) >= args.max_requests:
                break
    rows.sort(key=lambda row: row["timestamp"])
    cache = {}
    prompts = [prompt_text(i, row, cache, args.bytes_per_token) for i, row in enumerate(rows)]
    results = [Result() for _ in rows]
    threads = []
    origin = rows[0]["timestamp"]
    start = time.monotonic()
    for i, row in enumerate(rows):
        due = start + (row["timestamp"] - origin) / 1000.0 / args.rate_scale / args.time_scale
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        thread = threading.Thread(
            target=send,
            args=(host, int(port), args.model, prompts[i], row["output_length"], results[i],
                  args.time_scale, due),
            daemon=True,
        )
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join()
    span = (time.monotonic() - start) * args.time_scale

    done = [r for r in results if r.error is None]
    errors = [r.error for r in results if r.error is not None]
    ttft = sorted(r.ttft for r in done)
    tpot = sorted(r.tpot for r in done if r.tpot is not None)
    gaps = sorted(g for r in done for g in r.gaps)
    good = sum(
        1
        for r in done
        if r.ttft <= args.ttft_slo and (r.tpot is None or r.tpot <= args.tpot_slo)
    )
    report = {
        "source": "live",
        "requests": len(rows),
        "completed": len(done),
        "errors": len(errors),
        "first_errors": errors[:3],
        "span_seconds": span,
        "ttft_seconds": {
            "p50": percentile(ttft, 0.5),
            "p90": percentile(ttft, 0.9),
            "p99": percentile(ttft, 0.99),
        },
        "tpot_seconds": {"p50": percentile(tpot, 0.5), "p90": percentile(tpot, 0.9)},
        # Every gap between two tokens of a stream, as vllm:inter_token_latency_seconds counts
        # them in the engines: the client's side of the same figure.
        "inter_token_seconds": {
            "mean": sum(gaps) / len(gaps) if gaps else 0.0,
            "p50": percentile(gaps, 0.5),
            "p90": percentile(gaps, 0.9),
        },
        # How far behind the trace the client sent (engine seconds): TTFT counts from the send.
        "send_lateness_seconds": {
            "mean": sum(r.late for r in results) / len(results) if results else 0.0,
            "max": max((r.late for r in results), default=0.0),
        },
        "prompt_bytes_per_token": sum(len(p) for p in prompts)
        / max(1, sum(row["input_length"] for row in rows)),
        "output_tokens_per_second": sum(r.tokens for r in done) / span if span > 0 else 0,
        "goodput_fraction": good / len(rows) if rows else 0,
    }
    json.dump(report, sys.stdout, indent=2)
    print()
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main())
