#!/usr/bin/env python3
"""The API server's write requests between two reads of its /metrics, by resource.

Usage: api_writes.py BEFORE AFTER
  BEFORE, AFTER: kube-apiserver /metrics pages (`kubectl get --raw /metrics`).
Prints one JSON object {"total": N, "by_resource": {"RESOURCE[/SUBRESOURCE] VERB": N, ...}}
counting apiserver_request_total's writes (POST, PUT, PATCH, DELETE, APPLY) that the API
server answered between the two pages, the largest first.
"""
import json
import re
import sys

WRITES = {"POST", "PUT", "PATCH", "DELETE", "APPLY"}
SAMPLE = re.compile(r'^apiserver_request_total\{(?P<labels>[^}]*)\} (?P<value>\S+)$')
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def writes(path):
    counts = {}
    with open(path, encoding="utf-8") as page:
        for line in page:
            match = SAMPLE.match(line.strip())
            if not match:
                continue
            labels = dict(LABEL.findall(match["labels"]))
            if labels.get("verb") not in WRITES:
                continue
            resource = labels.get("resource", "")
            if labels.get("subresource"):
                resource += "/" + labels["subresource"]
            key = f'{resource} {labels["verb"]}'
            counts[key] = counts.get(key, 0) + float(match["value"])
    return counts


def main():
    before, after = writes(sys.argv[1]), writes(sys.argv[2])
    delta = {k: int(v - before.get(k, 0)) for k, v in after.items()}
    delta = {k: v for k, v in sorted(delta.items(), key=lambda kv: -kv[1]) if v > 0}
    print(json.dumps({"total": sum(delta.values()), "by_resource": delta}))


if __name__ == "__main__":
    main()
