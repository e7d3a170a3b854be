#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "api/field_reader.h"
#include "api/field_schema.h"
#include "api/validation.h"
#include "api/workload.h"

// Probes (livenessProbe, readinessProbe, startupProbe) in native process templates and in
// Kubernetes containers: their schemas and their decoding into api::Probe. Pure; thread-safe.
namespace strata::api {

// The native probe: Kubernetes' shape, with `port` left out meaning the pod's own port.
const TypeSchema* ProbeSchema();
// A Kubernetes container's probe (ports by number or by the name of a containerPort).
const TypeSchema* KubeProbeSchema();

// What a probe's port may refer to.
struct ProbePorts {
  WorkloadClass workload = WorkloadClass::kTraining;
  // The container's declared ports (Kubernetes' containerPorts): by name, and every number.
  // strata gives each Service replica a port of its own and runs its engine there, so for a
  // Service a declared port is that port.
  std::map<std::string, int64_t> named;
  std::set<int64_t> declared;
};

// How a probe that strata's own engine command answers is read.
enum class ProbeDefaults {
  kNone,
  // A KServe LLMInferenceService whose template leaves the engine to strata (`vllm serve`):
  // KServe's config gives its probes their handler (GET /health on the engine's port) and
  // serves vLLM over TLS, which strata does not; so a probe without a handler gets that one,
  // and HTTPS on the engine's port is read as HTTP, each with a warning.
  kKServeEngine,
};
// The engine port KServe's config gives vLLM: with kKServeEngine, a declared port.
inline constexpr int64_t kKServeEnginePort = 8000;

// The probe `field` ("livenessProbe", "readinessProbe", "startupProbe") of `container`, or
// nullopt when absent. Reports under the probe's path: no handler or several, a port out of
// 1-65535, a named port the container does not declare, a missing port where the pod has none
// of its own, an exec without command, a path not starting with '/', a bad header name, timing
// fields below their minimum (period, timeout, thresholds at least 1; the initial delay at least
// 0), a success threshold other than 1 on a liveness or startup probe and a
// terminationGracePeriodSeconds on a readiness probe (Kubernetes' rules), and gRPC (which
// strata's prober does not speak).
std::optional<Probe> DecodeProbe(const FieldView& container, std::string_view field,
                                 const ProbePorts& ports, ProbeDefaults defaults,
                                 FieldErrors& errors);

// Reads the three probes of `container` into `out`.
void DecodeProbes(const FieldView& container, const ProbePorts& ports, ProbeDefaults defaults,
                  ProcessTemplate& out, FieldErrors& errors);

}  // namespace strata::api
