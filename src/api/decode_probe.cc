#include "api/decode_probe.h"

#include <fmt/format.h>

#include <initializer_list>
#include <utility>

namespace strata::api {
namespace {

using T = FieldType;

constexpr std::string_view kNoHost =
    "a probe reaches the pod on its own machine; give no host (or a Host header)";

const TypeSchema* HttpHeaderSchema() {
  static const TypeSchema s{"HTTPHeader",
                            "A header sent with an HTTP probe.",
                            {{"name", T::kString, "The header's name.", nullptr, {}, true},
                             {"value", T::kString, "Its value.", nullptr, {}, true}}};
  return &s;
}

const TypeSchema* HttpGetSchema() {
  static const TypeSchema s{
      "HTTPGetAction",
      "An HTTP GET that passes when it answers 200-399.",
      {{"path", T::kString, "The path to get (default /)."},
       {"port", T::kInteger, "The port on the pod's machine (default: the pod's own port)."},
       {"scheme",
        T::kEnum,
        "HTTP (default) or HTTPS (the certificate is not verified).",
        nullptr,
        {"HTTP", "HTTPS"}},
       {"httpHeaders", T::kObjectList, "Headers to send.", HttpHeaderSchema}}};
  return &s;
}

const TypeSchema* TcpSocketSchema() {
  static const TypeSchema s{
      "TCPSocketAction",
      "A TCP connection that passes when it opens.",
      {{"port", T::kInteger, "The port on the pod's machine (default: the pod's own port)."}}};
  return &s;
}

const TypeSchema* ExecSchema() {
  static const TypeSchema s{
      "ExecAction",
      "A command that passes when it exits 0; run with the pod's environment, as its user.",
      {{"command", T::kStringList, "The program and its arguments.", nullptr, {}, true}}};
  return &s;
}

const TypeSchema* KubeHttpGetSchema() {
  static const TypeSchema s{
      "HTTPGetAction",
      "An HTTP GET that passes when it answers 200-399.",
      {{"path", T::kString, "The path to get (default /)."},
       {"port", T::kIntOrString,
        "The port: a number or the name of a containerPort (a Service's is its replica's own)."},
       {"scheme",
        T::kEnum,
        "HTTP (default) or HTTPS (the certificate is not verified).",
        nullptr,
        {"HTTP", "HTTPS"}},
       {"httpHeaders", T::kObjectList, "Headers to send.", HttpHeaderSchema},
       {"host", T::kUnsupported, kNoHost}}};
  return &s;
}

const TypeSchema* KubeTcpSocketSchema() {
  static const TypeSchema s{
      "TCPSocketAction",
      "A TCP connection that passes when it opens.",
      {{"port", T::kIntOrString, "The port: a number or the name of a containerPort."},
       {"host", T::kUnsupported, kNoHost}}};
  return &s;
}

// The timing fields both schemas share, after their handlers.
std::vector<FieldSpec> ProbeFields(std::vector<FieldSpec> handlers) {
  for (FieldSpec& timing : std::vector<FieldSpec>{
           {"initialDelaySeconds", T::kInteger, "Seconds after the start before the first probe."},
           {"periodSeconds", T::kInteger, "Seconds between probes (default 10)."},
           {"timeoutSeconds", T::kInteger, "Seconds a probe may take (default 1)."},
           {"successThreshold", T::kInteger,
            "Passes in a row that make a failed probe pass (default 1; 1 for liveness and "
            "startup)."},
           {"failureThreshold", T::kInteger, "Failures in a row that make it fail (default 3)."},
           {"terminationGracePeriodSeconds", T::kInteger,
            "Liveness and startup: seconds between SIGTERM and SIGKILL when it kills the pod."}}) {
    handlers.push_back(std::move(timing));
  }
  return handlers;
}

bool IsHeaderName(const std::string& name) {
  if (name.empty()) return false;
  for (unsigned char c : name) {
    if (c <= 32 || c >= 127 || std::string_view("()<>@,;:\\\"/[]?={}").find(c) != std::string::npos)
      return false;
  }
  return true;
}

// The probe's port from `handler`'s "port": 0 for the pod's own port.
int64_t DecodePort(const FieldView& handler, const ProbePorts& ports, FieldErrors& errors) {
  const std::string path = handler.PathOf("port");
  const nlohmann::json& raw = handler.Raw("port");
  const bool own_port = ports.workload == WorkloadClass::kService;
  int64_t port = 0;
  if (raw.is_null()) {
    if (!own_port) errors.Add(path, "required: only a Service's replicas have a port of their own");
    return 0;
  }
  if (raw.is_string()) {
    auto named = ports.named.find(raw.get<std::string>());
    if (named == ports.named.end()) {
      errors.Add(path, fmt::format(
                           "names no port of the container (its ports: {})",
                           ports.named.empty() ? "none named" : [&] {
                             std::string names;
                             for (const auto& [name, number] : ports.named) {
                               names += (names.empty() ? "" : ", ") + name;
                             }
                             return names;
                           }()));
      return 0;
    }
    port = named->second;
  } else {
    port = raw.get<int64_t>();
  }
  if (port < 1 || port > 65535) {
    errors.Add(path, fmt::format("must be between 1 and 65535, got {}", port));
    return 0;
  }
  // The engine listens on the port strata gives it, not on the one its container declares.
  if (own_port && ports.declared.count(port) > 0) return 0;
  return port;
}

void ReadAtLeast(const FieldView& view, std::string_view field, int64_t minimum, int64_t& out,
                 FieldErrors& errors) {
  if (!view.Has(field)) return;
  const int64_t value = view.Integer(field, out);
  if (value < minimum) {
    errors.Add(view.PathOf(field), fmt::format("must be at least {}, got {}", minimum, value));
    return;
  }
  out = value;
}

}  // namespace

const TypeSchema* ProbeSchema() {
  static const TypeSchema s{
      "Probe",
      "A check of the pod's processes, run by its node as the kubelet runs it: one of httpGet, "
      "tcpSocket or exec.",
      ProbeFields({{"httpGet", T::kObject, "An HTTP GET.", HttpGetSchema},
                   {"tcpSocket", T::kObject, "A TCP connection.", TcpSocketSchema},
                   {"exec", T::kObject, "A command.", ExecSchema}})};
  return &s;
}

const TypeSchema* KubeProbeSchema() {
  static const TypeSchema s{
      "Probe", "A Kubernetes probe, run by the pod's node as the kubelet runs it.",
      ProbeFields({{"httpGet", T::kObject, "An HTTP GET.", KubeHttpGetSchema},
                   {"tcpSocket", T::kObject, "A TCP connection.", KubeTcpSocketSchema},
                   {"exec", T::kObject, "A command.", ExecSchema},
                   {"grpc", T::kUnsupported,
                    "strata's prober speaks HTTP/1.1, not gRPC health checking; use exec (with "
                    "grpc_health_probe) or httpGet"}})};
  return &s;
}

std::optional<Probe> DecodeProbe(const FieldView& container, std::string_view field,
                                 const ProbePorts& ports, ProbeDefaults defaults,
                                 FieldErrors& errors) {
  if (!container.Has(field)) return std::nullopt;
  const FieldView view = container.Object(field);
  const bool kserve = defaults == ProbeDefaults::kKServeEngine;
  Probe probe;
  int handlers = 0;
  for (const char* name : {"httpGet", "tcpSocket", "exec", "grpc"}) handlers += view.Has(name);
  if (handlers == 0 && kserve) {
    errors.Warn(view.path(),
                "no handler: GET /health on the engine's port, as KServe's config gives it");
    probe.path = "/health";
  } else if (handlers != 1) {
    errors.Add(view.path(), "give exactly one of httpGet, tcpSocket and exec");
  } else if (view.Has("httpGet")) {
    const FieldView get = view.Object("httpGet");
    probe.port = DecodePort(get, ports, errors);
    probe.path = get.String("path", "/");
    if (probe.path.empty() || probe.path.front() != '/') {
      errors.Add(get.PathOf("path"), "must start with /");
    }
    probe.scheme = get.String("scheme", "HTTP");
    if (probe.scheme == "HTTPS" && kserve && probe.port == 0) {
      errors.Warn(get.PathOf("scheme"),
                  "HTTPS read as HTTP: strata serves the engine without KServe's TLS");
      probe.scheme = "HTTP";
    }
    for (const FieldView& header : get.ObjectList("httpHeaders")) {
      HttpHeader h{header.String("name"), header.String("value")};
      if (!IsHeaderName(h.name)) errors.Add(header.PathOf("name"), "is not an HTTP header name");
      probe.http_headers.push_back(std::move(h));
    }
  } else if (view.Has("tcpSocket")) {
    probe.action = ProbeAction::kTcpSocket;
    probe.port = DecodePort(view.Object("tcpSocket"), ports, errors);
  } else if (view.Has("exec")) {
    probe.action = ProbeAction::kExec;
    const FieldView exec = view.Object("exec");
    probe.command = exec.StringList("command");
    if (probe.command.empty()) errors.Add(exec.PathOf("command"), "must name a program");
  }
  ReadAtLeast(view, "initialDelaySeconds", 0, probe.initial_delay_seconds, errors);
  ReadAtLeast(view, "periodSeconds", 1, probe.period_seconds, errors);
  ReadAtLeast(view, "timeoutSeconds", 1, probe.timeout_seconds, errors);
  ReadAtLeast(view, "successThreshold", 1, probe.success_threshold, errors);
  ReadAtLeast(view, "failureThreshold", 1, probe.failure_threshold, errors);
  const bool readiness = field == "readinessProbe";
  if (!readiness && probe.success_threshold != 1) {
    errors.Add(view.PathOf("successThreshold"), "must be 1 for a liveness or startup probe");
  }
  if (view.Has("terminationGracePeriodSeconds")) {
    if (readiness) {
      errors.Add(view.PathOf("terminationGracePeriodSeconds"),
                 "must not be set for a readiness probe (it kills nothing)");
    } else {
      int64_t grace = 0;
      ReadAtLeast(view, "terminationGracePeriodSeconds", 0, grace, errors);
      probe.termination_grace_period_seconds = grace;
    }
  }
  return probe;
}

void DecodeProbes(const FieldView& container, const ProbePorts& ports, ProbeDefaults defaults,
                  ProcessTemplate& out, FieldErrors& errors) {
  out.liveness_probe = DecodeProbe(container, "livenessProbe", ports, defaults, errors);
  out.readiness_probe = DecodeProbe(container, "readinessProbe", ports, defaults, errors);
  out.startup_probe = DecodeProbe(container, "startupProbe", ports, defaults, errors);
}

}  // namespace strata::api
