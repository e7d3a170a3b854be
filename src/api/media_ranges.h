#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace strata::api {

// One media range of an HTTP Accept header (RFC 9110 12.5.1), as Kubernetes' clients use its
// parameters to ask for another form of an object: "application/json;as=Table;v=v1;g=meta.k8s.io".
struct MediaRange {
  std::string type;                               // "application/json"
  std::map<std::string, std::string> parameters;  // "as" -> "Table"
};

// The ranges of an Accept header, in the order given (no quality weighting: Kubernetes' clients
// list what they prefer first). Pure; thread-safe.
std::vector<MediaRange> ParseAcceptHeader(std::string_view accept);

}  // namespace strata::api
