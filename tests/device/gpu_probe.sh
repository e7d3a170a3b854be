#!/usr/bin/env bash
# The GPU pod of tests/device/run.sh: prints what it was given, for device_checks.py's `pod`.
# Usage (as the pod's command): gpu_probe.sh NVIDIA_SMI
smi=$1
echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-}"
echo "NVIDIA_VISIBLE_DEVICES=${NVIDIA_VISIBLE_DEVICES-unset}"
"$smi" -L
# nvidia-smi ignores CUDA_VISIBLE_DEVICES: -i names the GPU the pod was given.
"$smi" -L -i "${CUDA_VISIBLE_DEVICES-}" | sed 's/^/OWN /'
# CUDA's own view honours CUDA_VISIBLE_DEVICES: the driver's libcuda, through ctypes.
if ! command -v python3 >/dev/null; then
  echo "CUDA not checked: no python3 in the pod"
  exit 0
fi
python3 - <<'PY'
import ctypes

try:
    cuda = ctypes.CDLL("libcuda.so.1")
except OSError as error:
    print(f"CUDA not checked: no libcuda.so.1 ({error})")
    raise SystemExit(0)
rc = cuda.cuInit(0)
if rc != 0:
    print(f"CUDA not checked: cuInit returned {rc}")
    raise SystemExit(0)
count = ctypes.c_int()
cuda.cuDeviceGetCount(ctypes.byref(count))
uuids = []
for ordinal in range(count.value):
    device = ctypes.c_int()
    cuda.cuDeviceGet(ctypes.byref(device), ordinal)
    raw = (ctypes.c_ubyte * 16)()
    cuda.cuDeviceGetUuid(raw, device)
    h = bytes(raw).hex()
    uuids.append(f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}")
print(f"CUDA sees {count.value} device(s): {' '.join(uuids)}")
PY
