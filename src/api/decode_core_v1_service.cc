// Kubernetes' v1 Service, read beside the workloads it fronts (LeaderWorkerSet's and JobSet's
// examples ship one), decoded into no object.
//
// Why nothing: strata runs pods as local processes, reached at their node's address; a
// Service's model is served by strata's gateway (a LeaderWorkerSet, Deployment or
// StatefulSet is a strata Service the gateway routes to by model name), and a training job's
// pods find rank 0 at MASTER_ADDR. A v1 Service has nothing to route here, so its spec is
// accepted with a warning saying where the traffic goes instead, and on a Kubernetes cluster it
// is applied with kubectl, as it always was.
#include "api/compat_schema.h"
#include "api/decode_common.h"
#include "api/kinds.h"
#include "api/native_schema.h"

namespace strata::api {

const TypeSchema* CoreV1ServiceSchema() {
  using T = FieldType;
  static const TypeSchema s{
      "Service",
      "A Kubernetes v1 Service: accepted beside its workloads, adding no object.",
      {{"apiVersion", T::kString, "v1", nullptr, {}, true},
       {"kind", T::kString, "Service", nullptr, {}, true},
       {"metadata", T::kObject, "Name, namespace, labels.", ObjectMetaSchema, {}, true},
       {"spec", T::kIgnored,
        "strata's gateway serves the models of the workloads among these manifests (strata get "
        "services lists them) and pods reach each other at their node's address, so this "
        "Service adds no object; on a Kubernetes cluster apply it with kubectl"},
       {"status", T::kIgnored, "status is set by the cluster"}}};
  return &s;
}

void DecodeCoreV1Service(const FieldView& doc, DecodedDocument& out) {
  DecodeMetadata(doc.Object("metadata"), true, false, out.errors);
}

}  // namespace strata::api
