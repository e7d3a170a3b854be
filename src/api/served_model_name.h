#pragma once

#include <string>
#include <vector>

#include "api/workload.h"

namespace strata::api {

// The model names a vLLM engine answers to, read from its command line (command then args):
// the values of --served-model-name (one or more, as vLLM takes them), else the value of
// --model, else the positional of `vllm serve MODEL`; flags may be written `--flag value` or
// `--flag=value`, and a `sh -c "..."` script is read word by word. `strata engine-sim --model
// NAME`, strata's stand-in that speaks vLLM's API, counts as a vLLM server too. Empty when the
// process is not a vLLM server (neither `vllm serve`, vllm.entrypoints.openai.api_server nor
// engine-sim) or names no model. This is the name GAIE's clients put in the request's "model".
std::vector<std::string> VllmServedModelNames(const ProcessTemplate& engine);

}  // namespace strata::api
