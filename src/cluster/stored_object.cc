#include "cluster/stored_object.h"

#include "api/encode.h"
#include "api/manifest.h"

namespace strata::cluster {
Result<api::Object> DecodeStoredObject(const store::Object& object) {
  Result<api::Object> decoded = api::DecodeObject(object.body);
  if (!decoded) return Err(decoded.error().WithPrefix(object.key.Describe()));
  return decoded;
}

store::Object EncodeForStore(const api::Object& value, const store::Object& previous) {
  store::Object out;
  out.key = store::ObjectKey{std::string(value.kind()), value.namespace_name(), value.name()};
  out.labels = store::Labels(value.metadata().labels.begin(), value.metadata().labels.end());
  out.body = api::EncodeObject(value);
  out.resource_version = previous.resource_version;
  out.uid = previous.uid;
  return out;
}

}  // namespace strata::cluster
