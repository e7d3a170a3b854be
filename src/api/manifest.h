#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "api/kinds.h"
#include "api/object.h"
#include "common/status.h"
#include "common/yaml_json.h"

namespace strata::api {

// The text of one manifest file (or of stdin), and the name errors give it.
struct ManifestSource {
  std::string name;  // "job.yaml", "examples/llm/isvc.yaml", "<stdin>"
  std::string text;
};

// Decodes every document of every source (YAML or JSON, multi-document) into native objects,
// in order. Native kinds (strata.dev/v1alpha1) and compatible kinds (v1 Pod, PyTorchJob,
// TrainJob, InferenceService, Kueue, Volcano) are accepted; links between documents (a
// LocalQueue and its ClusterQueue, a PodGroup and its pods, a TrainJob and its runtime) are
// resolved across all sources.
//
// All or nothing: on any error returns kInvalidArgument whose message lists every error found,
// one per line, each shaped
//   job.yaml: document 2 (PyTorchJob resnet50-train): spec.x.replicas: expected ..., got "three"
// On success, `warnings` (when given) receives one line of the same shape for every field that
// was accepted although it means nothing in this mode ("...imagePullPolicy: ignored: ...").
// Thread-safe.
Result<std::vector<Object>> DecodeManifests(const std::vector<ManifestSource>& sources,
                                            std::vector<std::string>* warnings = nullptr);

// A source already parsed into its documents, for a caller that had to look at them first (the
// server fills in namespaces): decoded as DecodeManifests does, without parsing the text again.
struct ParsedSource {
  std::string name;
  std::vector<YamlDocument> documents;
};
Result<std::vector<Object>> DecodeParsedManifests(const std::vector<ParsedSource>& sources,
                                                  std::vector<std::string>* warnings = nullptr);

// Decodes one JSON document on its own (no links to other documents). Errors as above, without
// the file and document prefix. For the store and the server, which receive single objects.
Result<Object> DecodeObject(const nlohmann::json& document);

// Decodes one kueue.x-k8s.io LocalQueue document on its own: the Queue name it is (the server
// keeps it on its ClusterQueue's Queue, api/local_queue_form.h). Errors as DecodeObject's; one
// for a document of any other kind.
Result<LocalQueueLink> DecodeLocalQueueObject(const nlohmann::json& document);

}  // namespace strata::api
