// KubeProtobufToJson on arbitrary bytes: never crashes or reads past the body; what it accepts is
// a v1 Namespace, ConfigMap or Secret with a metadata object, and what it refuses says why.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "server/protobuf_body.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  strata::Result<nlohmann::json> decoded = strata::server::KubeProtobufToJson(body);
  if (!decoded) {
    if (decoded.error().message().empty()) std::abort();
    return 0;
  }
  const nlohmann::json& kind = (*decoded)["kind"];
  if ((*decoded)["apiVersion"] != "v1" || !(*decoded)["metadata"].is_object() ||
      (kind != "Namespace" && kind != "ConfigMap" && kind != "Secret")) {
    std::abort();
  }
  return 0;
}
