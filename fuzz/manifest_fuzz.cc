// DecodeManifests on arbitrary bytes: never crashes, reports failures with a message, and every
// object it decodes encodes to JSON that decodes back to an equal object.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "api/encode.h"
#include "api/manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  strata::Result<std::vector<strata::api::Object>> objects =
      strata::api::DecodeManifests({{"fuzz.yaml", text}});
  if (!objects) {
    if (objects.error().message().empty()) std::abort();
    return 0;
  }
  for (const strata::api::Object& object : *objects) {
    strata::Result<strata::api::Object> back =
        strata::api::DecodeObject(strata::api::EncodeObject(object));
    if (!back || !(*back == object)) std::abort();
  }
  return 0;
}
