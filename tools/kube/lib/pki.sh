# The certificates of a loopback cluster, made with openssl at start, and the kubeconfigs that
# use them. Sourced by cluster.sh. All keys are ECDSA P-256 (fast to make, accepted everywhere);
# certificates live 30 days, far past any test.
# shellcheck shell=bash

# pki_ca DIR NAME COMMON_NAME: a self-signed CA, DIR/NAME.{key,crt}.
pki_ca() {
  openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
    -keyout "$1/$2.key" -out "$1/$2.crt" -days 30 -subj "/CN=$3" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" 2>/dev/null
}

# pki_issue DIR NAME SUBJECT EXTENDED_KEY_USAGE [SUBJECT_ALT_NAMES] [CA]
# Writes DIR/NAME.key and DIR/NAME.crt, signed by DIR/CA (default ca).
pki_issue() {
  local dir=$1 name=$2 subject=$3 usage=$4 sans=${5:-} ca=${6:-ca}
  local ext="basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=$usage"
  [[ -n $sans ]] && ext+=$'\n'"subjectAltName=$sans"
  openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
    -keyout "$dir/$name.key" -subj "$subject" -out "$dir/$name.csr" 2>/dev/null
  openssl x509 -req -in "$dir/$name.csr" -CA "$dir/$ca.crt" -CAkey "$dir/$ca.key" \
    -set_serial "0x$(openssl rand -hex 16)" -days 30 -extfile <(echo "$ext") \
    -out "$dir/$name.crt" 2>/dev/null
  rm -f "$dir/$name.csr"
}

# pki_make DIR SERVICE_IP: a CA; the API server's serving certificate (loopback and the names
# in-cluster clients use); client certificates for the admin (system:masters), the API server's
# kubelet client (system:masters, as kubeadm made it), the controller manager and the scheduler
# (their RBAC users); one serving certificate for the other loopback
# servers; the service-account signing key pair; a front-proxy CA and the API server's client
# certificate under it (as kubeadm makes them: the request-header authentication that aggregated
# APIs and the components' delegated authentication read).
pki_make() {
  local dir=$1 service_ip=$2
  mkdir -p "$dir"
  chmod 700 "$dir"
  pki_ca "$dir" ca strata-kube-ca
  pki_ca "$dir" front-proxy-ca strata-kube-front-proxy-ca
  pki_issue "$dir" front-proxy-client "/CN=front-proxy-client" clientAuth "" front-proxy-ca
  pki_issue "$dir" apiserver "/CN=kube-apiserver" serverAuth \
    "IP:127.0.0.1,IP:$service_ip,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  pki_issue "$dir" admin "/O=system:masters/CN=strata-admin" clientAuth
  pki_issue "$dir" apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" \
    clientAuth
  pki_issue "$dir" controller-manager "/CN=system:kube-controller-manager" clientAuth
  pki_issue "$dir" scheduler "/CN=system:kube-scheduler" clientAuth
  pki_issue "$dir" loopback-serving "/CN=127.0.0.1" serverAuth "IP:127.0.0.1,DNS:localhost"
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/service-account.key"
  openssl pkey -in "$dir/service-account.key" -pubout -out "$dir/service-account.pub"
}

# write_kubeconfig FILE SERVER PKI_DIR CLIENT_NAME: a kubeconfig with everything embedded.
write_kubeconfig() {
  local file=$1 server=$2 pki=$3 client=$4
  local umask_was
  umask_was=$(umask)
  umask 077
  cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: strata-kube
  cluster:
    server: $server
    certificate-authority-data: $(base64 -w0 "$pki/ca.crt")
users:
- name: $client
  user:
    client-certificate-data: $(base64 -w0 "$pki/$client.crt")
    client-key-data: $(base64 -w0 "$pki/$client.key")
contexts:
- name: strata-kube
  context:
    cluster: strata-kube
    user: $client
current-context: strata-kube
EOF
  umask "$umask_was"
}
