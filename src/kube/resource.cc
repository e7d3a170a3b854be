#include "kube/resource.h"

namespace strata::kube {

std::string GroupVersionResource::ToString() const {
  return group.empty() ? resource : resource + "." + group;
}

std::string GroupVersionResource::ApiVersion() const {
  return group.empty() ? version : group + "/" + version;
}

std::string EscapeComponent(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if ((u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') || u == '-' ||
        u == '.' || u == '_' || u == '~') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 0xf]);
    }
  }
  return out;
}

std::string PathFor(const GroupVersionResource& resource, std::string_view namespace_name,
                    std::string_view name, std::string_view subresource,
                    const QueryParameters& query) {
  std::string path = resource.group.empty() ? "/api/" + EscapeComponent(resource.version)
                                            : "/apis/" + EscapeComponent(resource.group) + "/" +
                                                  EscapeComponent(resource.version);
  // A namespace object is addressed as /api/v1/namespaces/NAME, not under a namespace.
  if (!namespace_name.empty() && !(resource.group.empty() && resource.resource == "namespaces")) {
    path += "/namespaces/" + EscapeComponent(namespace_name);
  }
  path += "/" + EscapeComponent(resource.resource);
  if (!name.empty()) path += "/" + EscapeComponent(name);
  if (!subresource.empty()) path += "/" + EscapeComponent(subresource);
  char separator = '?';
  for (const auto& [key, value] : query) {
    path += separator;
    path += EscapeComponent(key) + "=" + EscapeComponent(value);
    separator = '&';
  }
  return path;
}

}  // namespace strata::kube
