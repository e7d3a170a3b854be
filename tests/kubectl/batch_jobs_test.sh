#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Kubernetes' batch/v1 Jobs through stock kubectl (v1.37, built by tools/kube/build.sh) against a
# real `strata up` on a simulated cluster (issue 20: users' manifests and tools work unchanged):
#  - kubectl apply -f of an Indexed batch/v1 Job (2 pods of python3 -c, each printing its
#    JOB_COMPLETION_INDEX) creates job.batch; kubectl get jobs shows Kubernetes' columns;
#    kubectl wait --for=condition=complete returns once both pods succeeded; kubectl get and
#    describe show the status (2 succeeded, completed indexes 0,1); kubectl logs reads each pod;
#  - kubectl apply of the same file is unchanged, of a changed label configured;
#  - kubectl apply -f and strata apply -f of the same batch Job (in two namespaces) store the
#    same native Job, as strata.dev serves it (kubectl get sjob);
#  - `jobs` means batch/v1's, as on Kubernetes: strata's own Job is listed as sjob only;
#  - a bad document is refused naming the field; kubectl delete job removes it;
#  - the Python client's BatchV1Api creates, reads, lists, watches until complete, patches and
#    deletes one (tests/kubectl/python_batch_check.py);
#  - a JobSet (jobset.x-k8s.io/v1alpha2, the second kind served so) likewise: kubectl apply,
#    get jobsets (JobSet's own columns), wait --for=condition=Completed, delete.
# Skips (exit 77) only when kubectl or python3-kubernetes is not there.
set -euo pipefail

repo=${STRATA_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
strata=${STRATA_BINARY_DIR:-$repo/build/release}/bin/strata
# shellcheck source=strata_for_kubectl.sh
source "$repo/tests/kubectl/strata_for_kubectl.sh"
start_strata_for_kubectl batch_jobs_test 2x8:H100-80GB
# row ARGS...: the table kubectl get prints, without its header, columns joined by one space.
row() { k get "$@" --no-headers | tr -s ' '; }

# batch_job NAMESPACE TEAM [COMPLETIONS]: an Indexed Job of two pods.
batch_job() {
  cat <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: indexed
  namespace: $1
  labels: {team: $2}
spec:
  completions: ${3:-2}
  parallelism: 2
  completionMode: Indexed
  backoffLimit: 1
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: python:3.12
        command: [python3, -c, "import os; print('index', os.environ['JOB_COMPLETION_INDEX'])"]
YAML
}
batch_job by-kubectl research >"$dir/job.yaml"

check "kubectl apply -f creates a batch/v1 Job" equals "$(k apply -f "$dir/job.yaml")" \
  "job.batch/indexed created"
check "kubectl get jobs lists it with Kubernetes' columns" has "NAME STATUS COMPLETIONS DURATION AGE" \
  "$(k get jobs -n by-kubectl | tr -s ' ')"
check "kubectl wait --for=condition=complete" equals \
  "$(k wait --for=condition=complete job/indexed -n by-kubectl --timeout=60s)" \
  "job.batch/indexed condition met"
check "kubectl get jobs: Complete, 2/2" has "indexed Complete 2/2 " "$(row jobs -n by-kubectl)"
check "its status counts both pods and their indexes" equals \
  "$(jp job indexed -n by-kubectl '{.status.succeeded}/{.status.completedIndexes}')" "2/0,1"
check "it is served as written" equals \
  "$(jp jobs.batch indexed -n by-kubectl '{.apiVersion}/{.spec.completionMode}/{.spec.backoffLimit}')" \
  "batch/v1/Indexed/1"
describe=$(k describe job indexed -n by-kubectl)
check "kubectl describe job: its pods" has "2 Succeeded / 0 Failed" "$describe"
check "kubectl describe job: its indexes" has "Completed Indexes:  0,1" "$describe"
check "kubectl describe job: its events" has "all 2 pod(s) succeeded" "$describe"
logs=$(for pod in $(k get pods -n by-kubectl -o name); do k logs -n by-kubectl "$pod"; done | sort)
check "each pod ran with its completion index" equals "$logs" "$(printf 'index 0\nindex 1')"

check "kubectl apply of the same file is unchanged" equals "$(k apply -f "$dir/job.yaml")" \
  "job.batch/indexed unchanged"
batch_job by-kubectl training >"$dir/relabeled.yaml"
check "kubectl apply of a changed label configures it" equals \
  "$(k apply -f "$dir/relabeled.yaml")" "job.batch/indexed configured"
check "with the file's label" equals "$(jp job indexed -n by-kubectl '{.metadata.labels.team}')" \
  training

# The same document through strata apply, into another namespace: the same native Job.
batch_job by-strata training >"$dir/strata.yaml"
check "strata apply -f of the same Job" "$strata" apply -f "$dir/strata.yaml" --server "$STRATA_API"
native() { # NAMESPACE: the native Job as strata.dev serves it, without what the server sets
  k get sjob indexed -n "$1" -o json | "$python" -c '
import json, sys
o = json.load(sys.stdin)
m = o["metadata"]
for f in ("uid", "resourceVersion", "creationTimestamp", "managedFields", "namespace"):
    m.pop(f, None)
m.get("annotations", {}).pop("kubectl.kubernetes.io/last-applied-configuration", None)
o.pop("status", None)
print(json.dumps(o, sort_keys=True, indent=1).replace(sys.argv[1], "NS"))
' "$1"
}
same_native() {
  local a b
  a=$(native by-kubectl)
  b=$(native by-strata)
  [[ $a == "$b" ]] || { diff <(echo "$a") <(echo "$b") | head -20; return 1; }
  has '"strata.dev/source"' "$a"
}
check "kubectl apply -f and strata apply -f store the same native Job" same_native
check "kubectl wait of the one strata applied" equals \
  "$(k wait --for=condition=complete job/indexed -n by-strata --timeout=60s)" \
  "job.batch/indexed condition met"

# strata's own Job: sjob, not jobs.
cat >"$dir/native.yaml" <<YAML
apiVersion: strata.dev/v1alpha1
kind: Job
metadata: {name: own, namespace: by-kubectl}
spec:
  replicas: 1
  template: {command: [sh, -c, "exit 0"]}
YAML
check "kubectl apply of strata's own Job" equals "$(k apply -f "$dir/native.yaml")" \
  "job.strata.dev/own created"
check "kubectl get jobs lists batch/v1 Jobs only" equals \
  "$(k get jobs -n by-kubectl -o name)" "job.batch/indexed"
check "kubectl get sjob lists strata's Jobs, both" equals \
  "$(k get sjob -n by-kubectl -o name | sort)" \
  "$(printf 'job.strata.dev/indexed\njob.strata.dev/own')"
check "strata's own Job is not found as a batch/v1 Job" fails_saying 'jobs.batch "own" not found' \
  k get job own -n by-kubectl

batch_job by-kubectl research 3 | sed 's/name: indexed/name: uneven/' >"$dir/bad.yaml"
check "a bad document is refused naming the field" fails_saying "spec.completions" \
  k apply -f "$dir/bad.yaml"

check "kubectl delete job" equals "$(k delete job indexed -n by-kubectl)" \
  "job.batch \"indexed\" deleted from by-kubectl namespace"
check "it is gone" equals "$(k get jobs -n by-kubectl -o name)" ""
check "strata's own Job stays" equals "$(k get sjob -n by-kubectl -o name)" "job.strata.dev/own"

check "the Python client: create, read, list, watch until complete, patch, delete" \
  "$python" "$repo/tests/kubectl/python_batch_check.py" "$STRATA_API" "$STRATA_ADMIN_TOKEN" by-strata

# ---- JobSet ---------------------------------------------------------------------------------------
cat >"$dir/jobset.yaml" <<YAML
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: pair, namespace: by-kubectl}
spec:
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 1
        completions: 1
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: main
              image: python:3.12
              command: [python3, -c, "print('hi')"]
YAML
check "kubectl apply -f creates a JobSet" equals "$(k apply -f "$dir/jobset.yaml")" \
  "jobset.jobset.x-k8s.io/pair created"
check "kubectl wait --for=condition=Completed jobset" equals \
  "$(k wait --for=condition=Completed jobset/pair -n by-kubectl --timeout=60s)" \
  "jobset.jobset.x-k8s.io/pair condition met"
check "kubectl get jobsets shows JobSet's columns" has "pair Completed 0 True " \
  "$(row jobsets -n by-kubectl)"
check "its replicated jobs' status" equals \
  "$(jp jobset pair -n by-kubectl '{.status.replicatedJobsStatus[0].name}/{.status.replicatedJobsStatus[0].succeeded}')" \
  workers/2
check "kubectl apply of the same JobSet is unchanged" equals "$(k apply -f "$dir/jobset.yaml")" \
  "jobset.jobset.x-k8s.io/pair unchanged"
check "a JobSet is no batch/v1 Job" equals "$(k get jobs -n by-kubectl -o name)" ""
check "kubectl delete jobset" equals "$(k delete jobset pair -n by-kubectl)" \
  "jobset.jobset.x-k8s.io \"pair\" deleted from by-kubectl namespace"

[[ $failures -eq 0 ]] || { echo "$failures check(s) failed"; exit 1; }
echo "all checks passed"
