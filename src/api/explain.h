#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace strata::api {

// Field documentation for `strata explain`, in kubectl explain's layout (KIND, VERSION,
// DESCRIPTION, FIELDS with types), read from the same tables the decoder checks manifests
// against.
//
// `query` is KIND[.FIELD.PATH] ("job", "PyTorchJob.spec.runPolicy"); the kind matches case-
// insensitively. When native and compatible kinds share a name (Pod, Queue, ResourceFlavor),
// the native one is meant unless `api_version` names another. Returns kNotFound for an unknown
// kind or field, with a suggestion when one is a single edit away. Thread-safe.
Result<std::string> Explain(std::string_view query, std::string_view api_version = "");

// One line per kind strata reads: kind, apiVersion, and what a compatible kind becomes.
std::string ListKinds();

}  // namespace strata::api
