#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/status.h"

namespace strata::server {

// The media type of Kubernetes' protobuf encoding, in which its typed clients (kubectl's create
// verbs among them) send built-in kinds.
inline constexpr std::string_view kKubeProtobuf = "application/vnd.kubernetes.protobuf";

// The JSON object of `body`, a request body in Kubernetes' protobuf encoding: the "k8s\0" magic,
// then a runtime.Unknown holding the TypeMeta and the object's message. strata reads the kinds
// kubectl creates this way that it stores: v1 Namespace, ConfigMap and Secret (bytes fields as
// base64, as their JSON has them), with their metadata's name, generateName, namespace, labels
// and annotations. InvalidArgument naming the offset of a malformed body, the field of one strata
// does not read, or the kind. Never reads past `body`; nests at most four messages deep. Pure;
// thread-safe.
Result<nlohmann::json> KubeProtobufToJson(std::string_view body);

}  // namespace strata::server
