#!/usr/bin/env python3
"""The comparisons of tests/device/run.sh: what strata read from NVML against nvidia-smi's word.

Each subcommand reads the files run.sh saved, prints one line per check,
  PASS <step>: <what>      FAIL <step>: <what, both values>      INFO <step>: <not compared, why>
and exits 1 when any check failed. Python's standard library only: a bare GPU machine has it.

  inventory INVENTORY_JSON QUERY_CSV SMI_Q_TXT P2P_TXT
      `strata node inventory -o json` against `nvidia-smi --query-gpu=...` (QUERY_FIELDS),
      `nvidia-smi -q` and `nvidia-smi topo -p2p n`.
  pod INVENTORY_JSON POD_LOG
      what the GPU pod printed (POD_SCRIPT's lines) against the inventory.
  dcgm METRICS_TXT READINGS_DIR
      strata's DCGM_FI_DEV_* series against nvidia-smi's READING_FIELDS, one file per field
      in READINGS_DIR: FIELD.csv (`--query-gpu=uuid,FIELD`), or FIELD.refused when nvidia-smi
      refused the field.
Helpers of run.sh: `fields query|readings` prints those field lists; `pod-manifest PROBE SMI`
the GPU pod (JSON); `gpu-name QUERY_CSV` the GPUs' models ("1 x NVIDIA H100 80GB HBM3").
"""
import json
import os
import re
import sys

QUERY_FIELDS = "index,name,uuid,memory.total,mig.mode.current"
READING_FIELDS = (
    "memory.used,memory.free,memory.reserved,temperature.gpu,power.draw,utilization.gpu,"
    "clocks.sm,clocks.max.sm,ecc.errors.corrected.volatile.total,"
    "ecc.errors.uncorrected.volatile.total"
)

failures = 0


def report(verdict, step, what):
    global failures
    if verdict == "FAIL":
        failures += 1
    print(f"{verdict} {step}: {what}", flush=True)


def check(step, ok, what):
    report("PASS" if ok else "FAIL", step, what)


def csv_rows(path):
    """nvidia-smi's csv,noheader,nounits rows, each a list of stripped fields."""
    with open(path) as f:
        return [[field.strip() for field in line.split(",")] for line in f if line.strip()]


def number(text):
    """A figure of nvidia-smi's, or None for [N/A], [Not Supported] and the like."""
    try:
        return float(text)
    except ValueError:
        return None


def load_inventory(path):
    with open(path) as f:
        inventory = json.load(f)
    gpus = [gpu for node in inventory["nodes"] for gpu in node["gpus"]]
    return inventory, gpus


def islands_from_p2p(path):
    """The NVLink islands nvidia-smi's `topo -p2p n` matrix implies: sets of GPU indices joined
    transitively by OK cells (the same query as nvmlDeviceGetP2PStatus(NVLINK)), or None when the
    file holds no matrix."""
    rows = {}
    with open(path) as f:
        for line in f:
            cells = line.split()
            if cells and re.fullmatch(r"GPU\d+", cells[0]) and len(cells) > 1:
                if all(re.fullmatch(r"GPU\d+", c) for c in cells):
                    continue  # the header row
                rows[int(cells[0][3:])] = cells[1:]
    if not rows:
        return None
    parent = {i: i for i in rows}

    def find(i):
        while parent[i] != i:
            i = parent[i]
        return i

    order = sorted(rows)
    for i in order:
        for column, cell in enumerate(rows[i]):
            if column < len(order) and cell == "OK":
                parent[find(i)] = find(order[column])
    groups = {}
    for i in order:
        groups.setdefault(find(i), set()).add(i)
    return sorted((frozenset(g) for g in groups.values()), key=min)


def inventory_command(inventory_path, query_path, smi_q_path, p2p_path):
    step = "inventory"
    inventory, gpus = load_inventory(inventory_path)
    check(step, inventory["source"].startswith("nvml"),
          f"strata read NVML, not a simulation (source: {inventory['source']}; "
          f"{inventory['notice']})")
    rows = csv_rows(query_path)
    check(step, len(gpus) == len(rows),
          f"GPU count: strata {len(gpus)}, nvidia-smi {len(rows)}")
    by_index = {gpu["index"]: gpu for gpu in gpus}
    with open(smi_q_path) as f:
        smi_q = f.read()
    for row in rows:
        if len(row) != 5:
            report("FAIL", step, f"nvidia-smi row not of {QUERY_FIELDS}: {row}")
            continue
        index, name, uuid, total_mib, mig_mode = row
        gpu = by_index.get(int(index))
        if gpu is None:
            report("FAIL", step, f"GPU {index} ({uuid}): nvidia-smi lists it, strata does not")
            continue
        where = f"GPU {index}"
        check(step, gpu["name"] == name, f"{where} model: strata '{gpu['name']}', "
              f"nvidia-smi '{name}'")
        check(step, gpu["uuid"] == uuid, f"{where} UUID: strata {gpu['uuid']}, nvidia-smi {uuid}")
        check(step, uuid in smi_q, f"{where} UUID {uuid} appears in nvidia-smi -q")
        strata_mib = gpu["memoryBytes"] / 2**20
        smi_mib = number(total_mib)
        # nvidia-smi prints whole MiB of the same NVML total; 1% covers a driver that reports the
        # total less its reserved memory through one API and not the other.
        check(step, smi_mib is not None and abs(strata_mib - smi_mib) <= max(1.0, 0.01 * smi_mib),
              f"{where} memory: strata {strata_mib:.0f} MiB, nvidia-smi {total_mib} MiB")
        smi_mig = mig_mode == "Enabled"
        check(step, gpu["migEnabled"] == smi_mig,
              f"{where} MIG mode: strata {'on' if gpu['migEnabled'] else 'off'}, "
              f"nvidia-smi {mig_mode}")
        if gpu["migEnabled"]:
            for mig in gpu["migInstances"]:
                check(step, mig["uuid"] in smi_q,
                      f"{where} MIG instance {mig['uuid']} appears in nvidia-smi -q")
    smi_islands = islands_from_p2p(p2p_path)
    strata_groups = {}
    for gpu in gpus:
        strata_groups.setdefault(gpu["nvlinkIsland"], set()).add(gpu["index"])
    strata_islands = sorted((frozenset(g) for g in strata_groups.values()), key=min)
    show = lambda islands: " ".join("{" + ",".join(map(str, sorted(i))) + "}" for i in islands)
    if smi_islands is None:
        if len(gpus) == 1:
            check(step, len(strata_islands) == 1,
                  f"NVLink peers: one GPU, alone in its island (strata {show(strata_islands)}); "
                  "nvidia-smi topo -p2p n printed no matrix")
        else:
            report("INFO", step, f"NVLink peers not compared: nvidia-smi topo -p2p n printed no "
                   f"matrix (strata's islands: {show(strata_islands)})")
    else:
        check(step, smi_islands == strata_islands,
              f"NVLink islands: strata {show(strata_islands)}, "
              f"nvidia-smi topo -p2p n {show(smi_islands)}")


def pod_command(inventory_path, log_path):
    step = "up-pod"
    _, gpus = load_inventory(inventory_path)
    by_index = {str(gpu["index"]): gpu for gpu in gpus}
    with open(log_path) as f:
        log = f.read()
    print(log, end="" if log.endswith("\n") else "\n")
    visible = re.search(r"^CUDA_VISIBLE_DEVICES=(.*)$", log, re.M)
    devices = visible.group(1).strip() if visible else ""
    check(step, bool(re.fullmatch(r"\d+", devices)),
          f"the pod's CUDA_VISIBLE_DEVICES names exactly one GPU: '{devices}'")
    listed = re.findall(r"^GPU (\d+): .*\(UUID: (GPU-[^)]+)\)", log, re.M)
    own = re.search(r"^OWN GPU (\d+): .*\(UUID: (GPU-[^)]+)\)", log, re.M)
    check(step, len(listed) == len(gpus),
          f"nvidia-smi -L in the pod lists the machine's {len(gpus)} GPU(s): {len(listed)}")
    gpu = by_index.get(devices)
    check(step, own is not None and gpu is not None and own.group(2) == gpu["uuid"],
          f"nvidia-smi -L -i $CUDA_VISIBLE_DEVICES in the pod is the inventory's GPU {devices}: "
          f"{own.group(2) if own else 'no line'} vs {gpu['uuid'] if gpu else 'no such GPU'}")
    cuda = re.search(r"^CUDA sees (\d+) device\(s\): ?(.*)$", log, re.M)
    if cuda is None:
        skipped = re.search(r"^CUDA not checked: (.*)$", log, re.M)
        report("INFO", step, "CUDA's own view not checked: "
               + (skipped.group(1) if skipped else "the pod printed no CUDA line"))
    else:
        seen = cuda.group(2).split()
        check(step, cuda.group(1) == "1" and gpu is not None and seen == [gpu["uuid"]],
              f"CUDA in the pod sees exactly its GPU: {cuda.group(1)} device(s) {seen}")
    nvidia = re.search(r"^NVIDIA_VISIBLE_DEVICES=(.*)$", log, re.M)
    report("INFO", step, "NVIDIA_VISIBLE_DEVICES in the pod (read by container runtimes, which a "
           f"process pod has none of): '{nvidia.group(1) if nvidia else 'no line'}'")


def dcgm_series(path):
    """{uuid: {family: value}} from strata's /metrics page."""
    series = {}
    pattern = re.compile(r"^(DCGM_FI_DEV_\w+)\{([^}]*)\}\s+(\S+)")
    with open(path) as f:
        for line in f:
            match = pattern.match(line)
            if not match:
                continue
            uuid = re.search(r'UUID="([^"]*)"', match.group(2))
            if uuid:
                series.setdefault(uuid.group(1), {})[match.group(1)] = float(match.group(3))
    return series


def readings_by_uuid(directory):
    """{uuid: {field: text}} from READINGS_DIR; fields nvidia-smi refused are left out."""
    readings = {}
    for field in READING_FIELDS.split(","):
        path = os.path.join(directory, field + ".csv")
        if not os.path.exists(path):
            continue
        for row in csv_rows(path):
            if len(row) == 2:
                readings.setdefault(row[0], {})[field] = row[1]
    return readings


def dcgm_command(metrics_path, readings_dir):
    step = "dcgm"
    series = dcgm_series(metrics_path)
    for field in READING_FIELDS.split(","):
        refused = os.path.join(readings_dir, field + ".refused")
        if os.path.exists(refused):
            with open(refused) as f:
                why = f.read().strip().splitlines()
            report("INFO", step, f"nvidia-smi refused {field}: {why[0] if why else ''}")
    readings = readings_by_uuid(readings_dir)
    check(step, len(series) == len(readings),
          f"strata's /metrics has DCGM series for {len(series)} GPU(s), nvidia-smi lists "
          f"{len(readings)}")
    for uuid, fields in readings.items():
        mine = series.get(uuid)
        if mine is None:
            report("FAIL", step, f"{uuid}: no DCGM_FI_DEV_* series on strata's /metrics")
            continue

        def compare(family, field, tolerance, unit):
            theirs = number(fields.get(field, ""))
            ours = mine.get(family)
            if theirs is None or ours is None:
                report("INFO", step, f"{uuid} {family}: not compared (strata {ours}, nvidia-smi "
                       f"{field} '{fields.get(field)}')")
                return
            check(step, abs(ours - theirs) <= tolerance(theirs),
                  f"{uuid} {family}: strata {ours:g}, nvidia-smi {field} {theirs:g} {unit} "
                  f"(within {tolerance(theirs):g})")

        # Readings taken a moment apart on an idle GPU: memory is steady, the rest drifts a little.
        # FB_USED may count the driver's reserved memory that nvidia-smi shows apart.
        slack = number(fields.get("memory.reserved", "")) or 0.0
        compare("DCGM_FI_DEV_FB_FREE", "memory.free", lambda v: 64.0 + slack, "MiB")
        compare("DCGM_FI_DEV_FB_USED", "memory.used", lambda v: 64.0 + slack, "MiB")
        compare("DCGM_FI_DEV_GPU_TEMP", "temperature.gpu", lambda v: 5.0, "C")
        compare("DCGM_FI_DEV_POWER_USAGE", "power.draw", lambda v: max(30.0, 0.25 * v), "W")
        compare("DCGM_FI_DEV_GPU_UTIL", "utilization.gpu", lambda v: 25.0, "%")
        compare("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "ecc.errors.corrected.volatile.total",
                lambda v: 0.0, "errors")
        compare("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "ecc.errors.uncorrected.volatile.total",
                lambda v: 0.0, "errors")
        # The SM clock moves with load from one instant to the next: it must be a clock this GPU
        # can run at.
        clock, top = mine.get("DCGM_FI_DEV_SM_CLOCK"), number(fields.get("clocks.max.sm", ""))
        if clock is None or top is None:
            report("INFO", step, f"{uuid} DCGM_FI_DEV_SM_CLOCK: not compared (strata {clock}, "
                   f"nvidia-smi clocks.max.sm '{fields.get('clocks.max.sm')}')")
        else:
            check(step, 0 < clock <= top,
                  f"{uuid} DCGM_FI_DEV_SM_CLOCK: strata {clock:g} MHz, within (0, clocks.max.sm "
                  f"{top:g}] (nvidia-smi clocks.sm {fields.get('clocks.sm')})")


def fields_command(which):
    print({"query": QUERY_FIELDS, "readings": READING_FIELDS}[which])


def pod_manifest_command(probe, smi):
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "device-probe", "namespace": "default"},
        "spec": {
            "restartPolicy": "Never",
            "containers": [{
                "name": "probe",
                # A process pod runs the command on the host; the image is for a real kubelet.
                "image": "nvidia/cuda:12.4.1-base-ubuntu22.04",
                "command": ["bash", probe, smi],
                "resources": {"limits": {"nvidia.com/gpu": 1}},
            }],
        },
    }
    print(json.dumps(pod, indent=2))


def gpu_name_command(query_path):
    names = {}
    for row in csv_rows(query_path):
        if len(row) > 1:
            names[row[1]] = names.get(row[1], 0) + 1
    print(", ".join(f"{n} x {name}" for name, n in names.items()) or "no GPU")


def main(argv):
    commands = {"inventory": (inventory_command, 4, 4), "pod": (pod_command, 2, 2),
                "dcgm": (dcgm_command, 2, 2), "fields": (fields_command, 1, 1),
                "pod-manifest": (pod_manifest_command, 2, 2),
                "gpu-name": (gpu_name_command, 1, 1)}
    if len(argv) < 2 or argv[1] not in commands:
        print(__doc__, file=sys.stderr)
        return 2
    command, least, most = commands[argv[1]]
    if not least <= len(argv) - 2 <= most:
        print(__doc__, file=sys.stderr)
        return 2
    command(*argv[2:])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
