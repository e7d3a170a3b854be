#pragma once

#include <set>
#include <string>
#include <string_view>

#include "api/torchrun_env.h"

// Kubernetes' rule for a container's command and args: `$(NAME)` refers to a variable of the
// container's environment. Used by the node agent for every pod it starts. Pure; thread-safe.
namespace strata::node {

// Replaces each `$(NAME)` in `text` by NAME's value in `env` (an unknown NAME stays as written)
// and each `$$` by `$`. Every name referred to, known or not, is added to `referenced` when it
// is not null.
std::string ExpandEnvReferences(std::string_view text, const api::Environment& env,
                                std::set<std::string>* referenced = nullptr);

}  // namespace strata::node
