# The simulated GPU nodes of a loopback cluster, as one v1 List for kubectl. Sourced by
# cluster.sh. kwok manages every node carrying the annotation kwok.x-k8s.io/node=fake; its
# node-initialize stage keeps a status.capacity/allocatable given at creation (as a kubelet's
# registration does) and adds the Ready condition, addresses and node info.
# shellcheck shell=bash

# What a node looks like; cluster.sh's flags override these.
NODE_GPU_PRODUCT=${NODE_GPU_PRODUCT:-NVIDIA-H100-80GB-HBM3}
NODE_GPU_MEMORY_MIB=${NODE_GPU_MEMORY_MIB:-81559}
NODE_CPUS=${NODE_CPUS:-128}
NODE_MEMORY=${NODE_MEMORY:-1Ti}
NODE_PODS=${NODE_PODS:-110}

# nodes_manifest COUNT GPUS_PER_NODE NODES_PER_RACK RACKS_PER_BLOCK
# Node i is kwok-node-i in rack-(i / NODES_PER_RACK), block-(rack / RACKS_PER_BLOCK).
nodes_manifest() {
  local count=$1 gpus=$2 per_rack=$3 per_block=$4 i rack block name resources
  resources="      cpu: \"$NODE_CPUS\"
      memory: $NODE_MEMORY
      pods: \"$NODE_PODS\"
      ephemeral-storage: 10Ti
      nvidia.com/gpu: \"$gpus\""
  echo "apiVersion: v1"
  echo "kind: List"
  echo "items:"
  for ((i = 0; i < count; i++)); do
    name=kwok-node-$i
    rack=$((i / per_rack))
    block=$((rack / per_block))
    cat <<EOF
- apiVersion: v1
  kind: Node
  metadata:
    name: $name
    annotations:
      kwok.x-k8s.io/node: fake
      node.alpha.kubernetes.io/ttl: "0"
    labels:
      type: kwok
      kubernetes.io/hostname: $name
      kubernetes.io/os: linux
      kubernetes.io/arch: amd64
      topology.strata.dev/block: block-$block
      topology.strata.dev/rack: rack-$rack
      nvidia.com/gpu.present: "true"
      nvidia.com/gpu.product: $NODE_GPU_PRODUCT
      nvidia.com/gpu.memory: "$NODE_GPU_MEMORY_MIB"
      nvidia.com/gpu.count: "$gpus"
  spec:
    taints:
    - key: kwok.x-k8s.io/node
      value: fake
      effect: NoSchedule
  status:
    capacity:
$resources
    allocatable:
$resources
EOF
  done
}
