#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace strata::api {

// The OpenAPI v3 documents the REST API serves at /openapi/v3, as kube-apiserver serves them,
// generated from the field tables strata's decoders use (openapi_schema.h). kubectl reads them
// to learn that the server validates fields itself (the fieldValidation parameter of each
// PATCH: it then sends fieldValidation=Strict instead of validating on its side), to compute a
// strategic merge patch of a core kind for `kubectl apply` (its schema marks the lists that merge
// by key, api/strategic_merge_patch.h) and for `kubectl explain`.
//
// Each served kind has a component schema (its whole document, strata's form) tagged with the
// group, version and kind it is served as, and its object and collection paths with the
// operations the API answers. Immutable once built; thread-safe.

// The document at /openapi/v3: each group version's path ("api/v1",
// "apis/strata.dev/v1alpha1") and the URL of its document, with a hash of its content.
const nlohmann::json& OpenApiV3Index();

// The document of one group version, by its path in the index ("api/v1"); nullptr for any
// other.
const nlohmann::json* OpenApiV3Document(std::string_view group_version_path);

}  // namespace strata::api
