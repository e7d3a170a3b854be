#!/usr/bin/env python3
"""Replays an Azure LLM inference trace (CSV) through an OpenAI-compatible gateway in real time,
sampling a strata Service's replica counts meanwhile.

Each row (TIMESTAMP, ContextTokens, GeneratedTokens) becomes one streaming POST /v1/completions
at its trace time: a prompt of ContextTokens tokens (a word naming the request, then filler, so
no two requests share a prefix, as `strata sim autoscale` treats this trace) and max_tokens =
GeneratedTokens. engine-sim's tokenizer makes a token of each run of letters and digits and of
each other non-space byte; --bytes-per-token sets the filler's size (4: English, which is what
the gateway's picker prices a prompt block at).

While the trace plays, every --sample-interval seconds the Service's status is read from the
REST API (desired, replicas, ready, starting and draining replicas of its first version) and
the autoscaler's provisioned rate and per-replica capacity from /metrics. Prints one JSON object:
per request outcome summary, per minute arrivals, late requests and replica counts, in the shape
of `strata sim autoscale -o json`'s `minutes` where the fields exist. Standard library only.
"""

import argparse
import csv
import datetime
import json
import os
import sys
import threading
import time
import urllib.request

# The streaming client and percentile of bench/serve's live check (Mooncake), shared as they are.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "serve"))
from live_replay import Result, percentile, send  # noqa: E402


def parse_timestamp(text):
    # "2023-11-16 18:15:46.6805900": seven digits of fraction, which strptime does not take.
    whole, _, fraction = text.partition(".")
    seconds = datetime.datetime.strptime(whole, "%Y-%m-%d %H:%M:%S").replace(
        tzinfo=datetime.timezone.utc).timestamp()
    return seconds + (float("0." + fraction) if fraction else 0.0)


def read_trace(path):
    rows = []
    with open(path, newline="") as trace:
        for i, row in enumerate(csv.reader(trace)):
            if i == 0 and row and row[0] == "TIMESTAMP":
                continue
            if len(row) != 3:
                raise SystemExit("%s:%d: expected TIMESTAMP,ContextTokens,GeneratedTokens"
                                 % (path, i + 1))
            rows.append((parse_timestamp(row[0]), int(row[1]), int(row[2])))
    if not rows:
        raise SystemExit("%s: no requests" % path)
    # As strata's reader: arrivals from the first row, never before it.
    first = rows[0][0]
    return [(max(0.0, t - first), tokens_in, tokens_out) for t, tokens_in, tokens_out in rows]


def prompt_text(index, tokens, bytes_per_token):
    filler = "." if bytes_per_token <= 1 else "a" * (bytes_per_token - 1) + " "
    return "u%x " % index + filler * (tokens - 1)


def api_request(url):
    """A request to strata's REST API, with the bearer token in $STRATA_TOKEN when it is set."""
    request = urllib.request.Request(url)
    token = os.environ.get("STRATA_TOKEN")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    return request


def get_json(url):
    with urllib.request.urlopen(api_request(url), timeout=10) as response:
        return json.load(response)


def metric_values(api, families):
    """{family: value} of the first series of each family on the API's /metrics."""
    url = "%s/metrics?families=%s" % (api, ",".join(families))
    values = {}
    with urllib.request.urlopen(api_request(url), timeout=10) as response:
        for line in response.read().decode().splitlines():
            if line.startswith("#") or not line.strip():
                continue
            name = line.split("{", 1)[0].split(" ", 1)[0]
            if name in families and name not in values:
                values[name] = float(line.rsplit(" ", 1)[1])
    return values


class Sampler(threading.Thread):
    """Reads the Service's replica counts every `interval` seconds until stopped."""

    FAMILIES = ["strata_autoscaler_provisioned_rate_requests_per_second",
                "strata_autoscaler_replica_capacity_requests_per_second"]

    def __init__(self, api, namespace, service, interval, origin):
        super().__init__(daemon=True)
        self.url = "%s/apis/strata.dev/v1alpha1/namespaces/%s/services/%s" % (api, namespace,
                                                                               service)
        self.api = api
        self.interval = interval
        self.origin = origin
        self.samples = []
        self.failures = 0
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.is_set():
            at = time.monotonic() - self.origin
            try:
                status = get_json(self.url).get("status", {})
                version = (status.get("versions") or [{}])[0]
                metrics = metric_values(self.api, self.FAMILIES)
                self.samples.append({
                    "at": at,
                    "desired": version.get("desiredReplicas", 0),
                    "replicas": version.get("replicas", 0),
                    "ready": version.get("readyReplicas", 0),
                    "starting": version.get("startingReplicas", 0),
                    "draining": version.get("drainingReplicas", 0),
                    "forecast_rate": metrics.get(self.FAMILIES[0], 0.0),
                    "capacity": metrics.get(self.FAMILIES[1], 0.0),
                    "cold_start_seconds": status.get("coldStartSeconds", 0.0),
                })
            except (OSError, ValueError):
                self.failures += 1
            self.stopping.wait(max(0.0, self.interval - (time.monotonic() - self.origin - at)))


def minutes_of(arrivals, results, samples, ttft_slo):
    count = 1 + int(max(arrivals + [s["at"] for s in samples]) // 60)
    minutes = [{"arrivals": 0, "late": 0, "replicas_paid": 0.0, "replicas_ready": 0.0,
                "desired": 0, "forecast_rate": 0.0, "capacity": 0.0, "samples": 0}
               for _ in range(count)]
    for arrival, result in zip(arrivals, results):
        minute = minutes[int(arrival // 60)]
        minute["arrivals"] += 1
        if result.error is not None or result.ttft > ttft_slo:
            minute["late"] += 1
    for s in samples:
        if s["at"] < 0:
            continue
        minute = minutes[int(s["at"] // 60)]
        minute["samples"] += 1
        # Paid: every replica created and not yet stopped (starting, ready or draining).
        minute["replicas_paid"] += s["replicas"] + s["draining"]
        minute["replicas_ready"] += s["ready"]
        # The minute's last sample, as the simulator reports its last decision.
        for key in ("desired", "forecast_rate", "capacity"):
            minute[key] = s[key]
    for minute in minutes:
        if minute["samples"]:
            minute["replicas_paid"] /= minute["samples"]
            minute["replicas_ready"] /= minute["samples"]
    return minutes


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", required=True, help="Azure CSV (the slice to replay)")
    parser.add_argument("--gateway", required=True, help="host:port")
    parser.add_argument("--api", required=True, help="the REST API's base URL")
    parser.add_argument("--namespace", default="default")
    parser.add_argument("--service", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--bytes-per-token", type=int, default=4)
    parser.add_argument("--sample-interval", type=float, default=1.0)
    parser.add_argument("--ttft-slo", type=float, default=2.0)
    args = parser.parse_args()
    host, port = args.gateway.rsplit(":", 1)

    rows = read_trace(args.trace)
    prompts = [prompt_text(i, tokens_in, args.bytes_per_token)
               for i, (_, tokens_in, _) in enumerate(rows)]
    arrivals = [arrival for arrival, _, _ in rows]
    results = [Result() for _ in rows]
    origin = time.monotonic()
    sampler = Sampler(args.api, args.namespace, args.service, args.sample_interval, origin)
    sampler.start()
    threads = []
    for i, (arrival, _, tokens_out) in enumerate(rows):
        due = origin + arrival
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        thread = threading.Thread(target=send, daemon=True, args=(
            host, int(port), args.model, prompts[i], tokens_out, results[i], 1.0, due))
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join()
    span = time.monotonic() - origin
    sampler.stopping.set()
    sampler.join()

    done = [r for r in results if r.error is None]
    ttft = sorted(r.ttft for r in done)
    good = sum(1 for r in done if r.ttft <= args.ttft_slo)
    # Replica-seconds paid, from the samples (each stands for the interval up to the next).
    paid = 0.0
    for s, following in zip(sampler.samples, sampler.samples[1:]):
        paid += (s["replicas"] + s["draining"]) * (following["at"] - s["at"])
    errors = [r.error for r in results if r.error is not None]
    report = {
        "source": "live",
        "requests": len(rows),
        "completed": len(done),
        "errors": len(errors),
        "first_errors": errors[:3],
        "slo_attainment": good / len(rows),
        "ttft_seconds": {"p50": percentile(ttft, 0.5), "p99": percentile(ttft, 0.99)},
        "gpu_hours": paid / 3600,
        "span_seconds": span,
        "send_lateness_seconds": {"mean": sum(r.late for r in results) / len(results),
                                  "max": max(r.late for r in results)},
        "samples": len(sampler.samples),
        "sample_failures": sampler.failures,
        "cold_start_seconds": sampler.samples[-1]["cold_start_seconds"] if sampler.samples else 0,
        "minutes": minutes_of(arrivals, results, sampler.samples, args.ttft_slo),
        "timeline": sampler.samples,
    }
    json.dump(report, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
