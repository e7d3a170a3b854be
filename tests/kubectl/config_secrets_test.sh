#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# ConfigMaps and Secrets through stock kubectl (v1.37, built by tools/kube/build.sh) against a real
# `strata up`, each checked as a user would:
#  - kubectl create configmap / secret generic (sent as protobuf) and kubectl apply of what they
#    make; get (the Secret's data base64 as in Kubernetes;
#    the table shows the Secret's type and key count, never a value); describe (a Secret's keys
#    with their sizes only); a Secret is not readable without a credential;
#  - a pod reading both into its environment (envFrom with a prefix, secretKeyRef, fieldRef,
#    resourceFieldRef, a $(NAME) reference) prints them;
#  - a pod whose Secret does not exist yet waits Pending (CreateContainerConfigError, with a
#    Warning event naming the Secret) and runs once `kubectl create secret` makes it;
#  - an immutable ConfigMap refuses a change of its data; kubectl delete removes both kinds.
#  - the Python client (Debian's python3-kubernetes) creates, reads, lists and deletes both.
# Skips (exit 77) only when kubectl or python3-kubernetes is not there.
set -euo pipefail

repo=${STRATA_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
strata=${STRATA_BINARY_DIR:-$repo/build/release}/bin/strata
# shellcheck source=strata_for_kubectl.sh
source "$repo/tests/kubectl/strata_for_kubectl.sh"
start_strata_for_kubectl config_secrets_test 1x8:H100-80GB

# kubectl create sends core kinds as protobuf, which strata reads for ConfigMaps and Secrets;
# kubectl apply sends JSON.
check "kubectl create configmap (protobuf)" equals \
  "$(k create configmap settings --from-literal=GREETING=hello --from-literal=EPOCHS=3)" \
  "configmap/settings created"
created() { k create "$@" --dry-run=client -o yaml | k apply -f -; }
check "kubectl apply of a Secret" created secret generic creds \
  --from-literal=token=s3cret-value --from-literal=user=ada
check "a Secret's data is base64 on the wire" \
  equals "$(jp secret creds '{.data.token}')" "$(printf s3cret-value | base64)"
check "a ConfigMap's data is text" equals "$(jp configmap settings '{.data.GREETING}')" hello
table=$(k get secrets)
check "the Secret table shows type and key count" has "Opaque" "$table"
check "the Secret table shows no value" lacks "s3cret" "$table"
described=$(k describe secret creds)
check "describe shows a Secret's keys by size" has "token:  12 bytes" "$described"
check "describe shows no value" lacks "s3cret" "$described"
check "cm short name" has settings "$(k get cm)"
check "describe shows a ConfigMap's data" has "hello" "$(k describe configmap settings)"
server=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}')
anonymous=$(curl -sk -w ' HTTP %{http_code}' "$server/api/v1/namespaces/default/secrets/creds")
check "a Secret is not readable without a credential" has "HTTP 401" "$anonymous"
check "nor shown to one" lacks "czNjcmV0" "$anonymous"

cat >"$dir/reader.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: reader
  labels: {app: reader}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    command: [sh, -c, 'echo "greeting=$CFG_GREETING token=$TOKEN pod=$POD app=$APP url=$URL mem=$MEM"']
    resources:
      requests: {cpu: 500m, memory: 64Mi}
    envFrom:
    - configMapRef: {name: settings}
      prefix: CFG_
    env:
    - name: TOKEN
      valueFrom: {secretKeyRef: {name: creds, key: token}}
    - name: POD
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
    - name: APP
      valueFrom: {fieldRef: {fieldPath: "metadata.labels['app']"}}
    - name: URL
      value: "https://$(TOKEN)@example/$(CFG_EPOCHS)"
    - name: MEM
      valueFrom: {resourceFieldRef: {resource: requests.memory, divisor: 1Mi}}
YAML
check "kubectl apply of a pod that reads them" k apply -f "$dir/reader.yaml"
succeeded() { [[ $(jp pod "$1" '{.status.phase}') == Succeeded ]]; }
check "the pod runs to completion" wait_for 60 succeeded reader
check "its output has every value" equals "$(k logs reader)" \
  "greeting=hello token=s3cret-value pod=reader app=reader url=https://s3cret-value@example/3 mem=64"
check "the stored pod holds no secret value" lacks "s3cret" "$(k get pod reader -o json)"

sed -e 's/name: reader$/name: waiter/' -e 's/name: creds, key: token/name: later, key: token/' \
  "$dir/reader.yaml" >"$dir/waiter.yaml"
check "kubectl apply of a pod whose Secret is missing" k apply -f "$dir/waiter.yaml"
waiting() { [[ $(jp pod waiter '{.status.reason}') == CreateContainerConfigError ]]; }
check "it waits with CreateContainerConfigError" wait_for 30 waiting
check "it is still Pending" equals "$(jp pod waiter '{.status.phase}')" Pending
check "its event names the Secret" has 'secret "later" not found' \
  "$(k get events --field-selector involvedObject.name=waiter 2>/dev/null || k get events)"
check "kubectl create of the Secret it waits for (protobuf)" equals \
  "$(k create secret generic later --from-literal=token=arrived)" "secret/later created"
check "it then runs to completion" wait_for 60 succeeded waiter
check "with the Secret's value" has "token=arrived" "$(k logs waiter)"

cat >"$dir/frozen.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: frozen}
data: {k: v}
immutable: true
YAML
check "an immutable ConfigMap is created" k apply -f "$dir/frozen.yaml"
sed -i 's/{k: v}/{k: w}/' "$dir/frozen.yaml"
out=$(k apply -f "$dir/frozen.yaml" 2>&1 || true)
check "its data cannot change" has "field is immutable" "$out"
check "the Python client's create, read, list and delete" \
  "$python" "$repo/tests/kubectl/python_config_check.py" "$dir/kubeconfig"
check "kubectl delete of both kinds" k delete configmap settings frozen
check "kubectl delete secret" k delete secret creds later
check "they are gone" equals "$(k get secrets -o name)" ""

if ((failures > 0)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "every check passed"
