#!/usr/bin/env python3
"""FakeNvidiaSmi: nvidia-smi's word on the machine that src/node/fake_nvml_library.cc describes,
in nvidia-smi's own formats, for device_run_test (tests/device/run.sh end to end without a GPU).
Only the invocations run.sh and gpu_probe.sh make: -L [-i N], -q, --version, topo -p2p n, and
--query-gpu=FIELDS --format=csv,noheader,nounits. memory.reserved is refused as an unknown field,
as drivers before it existed refuse it.

The machine: 8 x "NVIDIA H100 80GB HBM3" (81559 MiB), UUIDs GPU-fake-N, NVLink islands {0-3} and
{4-7}; MIG not supported on 0-3, enabled on 5 (instances MIG-fake-5-0 and MIG-fake-5-1, 1g.10gb),
disabled on 4, 6 and 7. GPU i: utilisation 10*i %, i GiB used, (100 + i) W, (40 + i) C, SM clock
(1980 - i) MHz; GPU 2 counts 3 corrected and 1 uncorrected volatile ECC errors; GPU 7 has no ECC
counters.
"""
import sys

GPUS = 8
MIG_GPU = 5
TOTAL_MIB = 81559
NAME = "NVIDIA H100 80GB HBM3"


def mig_mode(i):
    return "[N/A]" if i < 4 else "Enabled" if i == MIG_GPU else "Disabled"


def ecc(i, corrected):
    if i == 7:
        return "[N/A]"
    return str((3 if corrected else 1) if i == 2 else 0)


def field(i, name):
    values = {
        "index": str(i),
        "name": NAME,
        "uuid": f"GPU-fake-{i}",
        "memory.total": str(TOTAL_MIB),
        "memory.used": str(i * 1024),
        "memory.free": str(TOTAL_MIB - i * 1024),
        "mig.mode.current": mig_mode(i),
        "temperature.gpu": str(40 + i),
        "power.draw": f"{100 + i:.2f}",
        "utilization.gpu": str(10 * i),
        "clocks.sm": str(1980 - i),
        "clocks.max.sm": "1980",
        "ecc.errors.corrected.volatile.total": ecc(i, True),
        "ecc.errors.uncorrected.volatile.total": ecc(i, False),
    }
    return values.get(name)


def listing(indices):
    for i in indices:
        print(f"GPU {i}: {NAME} (UUID: GPU-fake-{i})")
        if i == MIG_GPU:
            for n in range(2):
                print(f"  MIG 1g.10gb     Device  {n}: (UUID: MIG-fake-{MIG_GPU}-{n})")


def query(args):
    names = next(a for a in args if a.startswith("--query-gpu=")).split("=", 1)[1].split(",")
    if "--format=csv,noheader,nounits" not in args:
        print("fake nvidia-smi: only --format=csv,noheader,nounits", file=sys.stderr)
        return 2
    for name in names:
        if field(0, name) is None:
            print(f'Field "{name}" is not a valid field to query.', file=sys.stderr)
            return 2
    for i in range(GPUS):
        print(", ".join(field(i, name) for name in names))
    return 0


def full_query():
    print("==============NVSMI LOG==============\n")
    print("Driver Version                            : fake")
    print(f"Attached GPUs                             : {GPUS}")
    for i in range(GPUS):
        print(f"GPU 00000000:{0x18 + i:02X}:00.0")
        print(f"    Product Name                          : {NAME}")
        print(f"    MIG Mode\n        Current                           : {mig_mode(i)}")
        if i == MIG_GPU:
            for n in range(2):
                print(f"    MIG Device\n        UUID                              : "
                      f"MIG-fake-{MIG_GPU}-{n}")
        print(f"    GPU UUID                              : GPU-fake-{i}")
        print(f"    FB Memory Usage\n        Total                             : {TOTAL_MIB} MiB")


def p2p_nvlink():
    print("\t" + "\t".join(f"GPU{i}" for i in range(GPUS)))
    for i in range(GPUS):
        cells = ["X" if i == j else "OK" if i // 4 == j // 4 else "NS" for j in range(GPUS)]
        print(f" GPU{i}\t" + "\t".join(cells))
    print("\nLegend:\n\n  X    = Self\n  OK   = Status Ok\n  NS   = Not supported")


def main(args):
    if args[:1] == ["-L"]:
        if args[1:2] == ["-i"]:
            if len(args) < 3 or not args[2].isdigit() or int(args[2]) >= GPUS:
                print(f"No devices were found matching the ID '{args[2:3]}'", file=sys.stderr)
                return 6
            listing([int(args[2])])
        else:
            listing(range(GPUS))
        return 0
    if args == ["-q"]:
        full_query()
        return 0
    if args == ["--version"]:
        print("NVIDIA-SMI version  : fake\nDRIVER version      : fake")
        return 0
    if args == ["topo", "-p2p", "n"]:
        p2p_nvlink()
        return 0
    if any(a.startswith("--query-gpu=") for a in args):
        return query(args)
    print(f"fake nvidia-smi: {' '.join(args)} is not an invocation it knows", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
