#include "kube/kubeconfig.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "common/field_decoder.h"
#include "common/yaml_json.h"

namespace strata::kube {
namespace {

using nlohmann::json;

// One named entry of clusters/users/contexts, with the file that defined it (relative paths in
// it are relative to that file's directory).
struct NamedEntry {
  json value;
  std::string file;
};

// Several kubeconfig files merged as clientcmd merges them: the first file to define a name,
// or current-context, wins.
struct MergedConfig {
  std::map<std::string, NamedEntry> clusters, users, contexts;
  std::string current_context;
  std::string current_context_file;
  std::vector<std::string> files;
};

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

Status FileError(std::string_view file, std::string_view message) {
  return InvalidArgumentError("kubeconfig " + std::string(file) + ": " + std::string(message));
}

Result<std::string> ReadWholeFile(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Err(
        NotFoundError(std::string(what) + ": cannot read " + path + ": " + std::strerror(errno)));
  }
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

// A kubeconfig is kubectl's file: fields strata does not read (extensions, preferences) are
// allowed, and those it reads are decoded strictly (common/field_decoder.h).
Status AddNamedList(const FieldDecoder& doc, const std::string& file, const char* list_key,
                    const char* item_key, std::map<std::string, NamedEntry>& into) {
  Result<std::span<const json>> items = doc.List(list_key);
  if (!items) return items.error();
  for (size_t i = 0; i < items->size(); ++i) {
    const json& item = (*items)[i];
    if (!item.is_object()) return InvalidField(doc.ItemPath(list_key, i), "must be a mapping");
    const FieldDecoder entry = *FieldDecoder::OfAnyFields(item, doc.ItemPath(list_key, i));
    Result<std::string> name = entry.RequiredString("name");
    if (!name) return name.error();
    Result<FieldDecoder> body = entry.Mapping(item_key);
    if (!body) return body.error();
    const json& value = entry.Raw(item_key);
    into.try_emplace(std::move(*name), NamedEntry{value.is_null() ? json::object() : value, file});
  }
  return Status::Ok();
}

Status AddFile(const std::string& file, const std::string& text, MergedConfig& merged) {
  merged.files.push_back(file);
  Result<std::vector<YamlDocument>> docs = ParseYamlDocuments(text);
  if (!docs) return FileError(file, docs.error().message());
  if (docs->empty()) return Status::Ok();  // an empty file is an empty config, as for kubectl
  if (docs->size() > 1) return FileError(file, "holds more than one YAML document");
  const json& doc = docs->front().value;
  if (doc.is_null()) return Status::Ok();
  if (!doc.is_object()) return FileError(file, "must be a mapping (apiVersion: v1, kind: Config)");
  const FieldDecoder fields = *FieldDecoder::OfAnyFields(doc, "");
  for (Status added : {AddNamedList(fields, file, "clusters", "cluster", merged.clusters),
                       AddNamedList(fields, file, "users", "user", merged.users),
                       AddNamedList(fields, file, "contexts", "context", merged.contexts)}) {
    if (!added.ok()) return FileError(file, added.message());
  }
  Result<std::string> current = fields.String("current-context");
  if (!current) return FileError(file, current.error().message());
  if (merged.current_context.empty() && !current->empty()) {
    merged.current_context = std::move(*current);
    merged.current_context_file = file;
  }
  return Status::Ok();
}

// The fields of `entry`, at `where`.
FieldDecoder FieldsOf(const NamedEntry& entry, const std::string& where) {
  // AddNamedList admitted only mappings.
  return *FieldDecoder::OfAnyFields(entry.value, where);
}

// Reads the string field `key` of `entry` ("" when absent); an error names the file and `where`.
Result<std::string> StringField(const NamedEntry& entry, const std::string& where,
                                const char* key) {
  Result<std::string> value = FieldsOf(entry, where).String(key);
  if (!value) return Err(FileError(entry.file, value.error().message()));
  return value;
}

// A credential given inline as base64 (`data_key`) or as a file (`file_key`), at most one.
Result<std::string> InlineOrFile(const NamedEntry& entry, const std::string& where,
                                 const char* data_key, const char* file_key) {
  ASSIGN_OR_RETURN(std::string data, StringField(entry, where, data_key));
  ASSIGN_OR_RETURN(std::string path, StringField(entry, where, file_key));
  if (!data.empty() && !path.empty()) {
    return Err(FileError(entry.file,
                         where + ": both " + data_key + " and " + file_key + " are set; give one"));
  }
  if (!data.empty()) {
    std::optional<std::string> decoded = DecodeBase64(data);
    if (!decoded) return Err(FileError(entry.file, where + "." + data_key + ": not valid base64"));
    return *decoded;
  }
  if (path.empty()) return std::string();
  std::filesystem::path resolved(path);
  if (resolved.is_relative()) resolved = std::filesystem::path(entry.file).parent_path() / path;
  return ReadWholeFile(resolved.string(),
                       "kubeconfig " + entry.file + ": " + where + "." + file_key);
}

Status Unsupported(const NamedEntry& entry, const std::string& where, const char* key,
                   std::string_view why) {
  if (!entry.value.contains(key) || entry.value[key].is_null()) return Status::Ok();
  return FileError(entry.file, where + "." + key + ": " + std::string(why));
}

Result<KubeConfig> ResolveCluster(const NamedEntry& cluster, const std::string& where,
                                  KubeConfig out) {
  ASSIGN_OR_RETURN(out.server, StringField(cluster, where, "server"));
  if (out.server.empty()) return Err(FileError(cluster.file, where + ".server: is not set"));
  if (out.server.rfind("https://", 0) != 0) {
    return Err(FileError(cluster.file, where + ".server: " + Quote(out.server) +
                                           " is not an https:// URL; strata talks to the API "
                                           "server over TLS only"));
  }
  ASSIGN_OR_RETURN(out.tls_server_name, StringField(cluster, where, "tls-server-name"));
  ASSIGN_OR_RETURN(out.ca_pem, InlineOrFile(cluster, where, "certificate-authority-data",
                                            "certificate-authority"));
  if (cluster.value.contains("insecure-skip-tls-verify") &&
      cluster.value["insecure-skip-tls-verify"] == true) {
    return Err(FileError(
        cluster.file, where + ".insecure-skip-tls-verify: strata always verifies the API "
                              "server's certificate; give certificate-authority(-data) instead"));
  }
  Status status = Unsupported(cluster, where, "proxy-url", "proxies are not supported");
  if (!status.ok()) return Err(status);
  return out;
}

Result<KubeConfig> ResolveUser(const NamedEntry& user, const std::string& where, KubeConfig out) {
  for (auto [key, why] :
       {std::pair{"exec",
                  "exec credential plugins are not supported; use a client certificate "
                  "or a token"},
        std::pair{"auth-provider", "auth-provider plugins are not supported"},
        std::pair{"username", "basic authentication is not supported"},
        std::pair{"password", "basic authentication is not supported"},
        std::pair{"as-user-extra", "impersonating extra fields is not supported"}}) {
    Status status = Unsupported(user, where, key, why);
    if (!status.ok()) return Err(status);
  }
  ASSIGN_OR_RETURN(out.client_certificate_pem,
                   InlineOrFile(user, where, "client-certificate-data", "client-certificate"));
  ASSIGN_OR_RETURN(out.client_key_pem, InlineOrFile(user, where, "client-key-data", "client-key"));
  if (out.client_certificate_pem.empty() != out.client_key_pem.empty()) {
    return Err(FileError(user.file, where + ": a client certificate needs its key (client-key or "
                                            "client-key-data) and a key its certificate"));
  }
  ASSIGN_OR_RETURN(out.bearer_token, StringField(user, where, "token"));
  ASSIGN_OR_RETURN(std::string token_file, StringField(user, where, "tokenFile"));
  if (!token_file.empty()) {
    std::filesystem::path resolved(token_file);
    if (resolved.is_relative())
      resolved = std::filesystem::path(user.file).parent_path() / resolved;
    out.bearer_token_file = resolved.string();
    // As client-go: a token given inline wins over the file.
    if (out.bearer_token.empty()) {
      ASSIGN_OR_RETURN(std::string token,
                       ReadWholeFile(out.bearer_token_file,
                                     "kubeconfig " + user.file + ": " + where + ".tokenFile"));
      while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) {
        token.pop_back();
      }
      out.bearer_token = token;
    } else {
      out.bearer_token_file.clear();
    }
  }
  ASSIGN_OR_RETURN(out.impersonate_user, StringField(user, where, "as"));
  Result<std::vector<std::string>> groups = FieldsOf(user, where).StringList("as-groups");
  if (!groups) return Err(FileError(user.file, groups.error().message()));
  out.impersonate_groups = std::move(*groups);
  return out;
}

std::string Names(const std::map<std::string, NamedEntry>& entries) {
  std::string names;
  for (const auto& [name, entry] : entries) names += (names.empty() ? "" : ", ") + name;
  return names.empty() ? "none" : names;
}

Result<KubeConfig> Resolve(const MergedConfig& merged, std::string_view context_option) {
  std::string files;
  for (const std::string& file : merged.files) files += (files.empty() ? "" : ":") + file;
  std::string context_name(context_option);
  if (context_name.empty()) context_name = merged.current_context;
  if (context_name.empty()) {
    return Err(FileError(files, "current-context is not set and no context was given"));
  }
  auto context = merged.contexts.find(context_name);
  if (context == merged.contexts.end()) {
    return Err(FileError(merged.current_context_file.empty() ? files : merged.current_context_file,
                         "context " + Quote(context_name) +
                             " not found (contexts: " + Names(merged.contexts) + ")"));
  }
  std::string where = "contexts[" + Quote(context_name) + "].context";
  KubeConfig out;
  out.source = "kubeconfig " + files + ", context " + context_name;
  ASSIGN_OR_RETURN(std::string cluster_name, StringField(context->second, where, "cluster"));
  ASSIGN_OR_RETURN(std::string user_name, StringField(context->second, where, "user"));
  ASSIGN_OR_RETURN(std::string namespace_name, StringField(context->second, where, "namespace"));
  if (!namespace_name.empty()) out.namespace_name = namespace_name;

  auto cluster = merged.clusters.find(cluster_name);
  if (cluster == merged.clusters.end()) {
    return Err(FileError(context->second.file,
                         where + ".cluster: " + Quote(cluster_name) +
                             " not found (clusters: " + Names(merged.clusters) + ")"));
  }
  ASSIGN_OR_RETURN(
      out, ResolveCluster(cluster->second, "clusters[" + Quote(cluster_name) + "].cluster", out));
  if (!user_name.empty()) {
    auto user = merged.users.find(user_name);
    if (user == merged.users.end()) {
      return Err(FileError(context->second.file, where + ".user: " + Quote(user_name) +
                                                     " not found (users: " + Names(merged.users) +
                                                     ")"));
    }
    ASSIGN_OR_RETURN(out, ResolveUser(user->second, "users[" + Quote(user_name) + "].user", out));
  }
  return out;
}

}  // namespace

KubeConfigEnvironment KubeConfigEnvironment::Process() {
  KubeConfigEnvironment environment;
  environment.getenv = [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
  return environment;
}

Result<KubeConfig> ParseKubeConfig(const std::vector<std::pair<std::string, std::string>>& texts,
                                   std::string_view context) {
  MergedConfig merged;
  for (const auto& [file, text] : texts) {
    Status added = AddFile(file, text, merged);
    if (!added.ok()) return Err(added);
  }
  return Resolve(merged, context);
}

Result<KubeConfig> LoadInClusterConfig(const KubeConfigEnvironment& environment) {
  std::optional<std::string> host = environment.getenv("KUBERNETES_SERVICE_HOST");
  std::optional<std::string> port = environment.getenv("KUBERNETES_SERVICE_PORT");
  if (!host || host->empty() || !port || port->empty()) {
    return Err(FailedPreconditionError(
        "not running in a pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset"));
  }
  KubeConfig out;
  bool ipv6 = host->find(':') != std::string::npos;
  out.server = "https://" + (ipv6 ? "[" + *host + "]" : *host) + ":" + *port;
  std::string dir = environment.service_account_dir;
  out.source = "in-cluster service account (" + dir + ")";
  out.bearer_token_file = dir + "/token";
  ASSIGN_OR_RETURN(out.bearer_token,
                   ReadWholeFile(out.bearer_token_file, "in-cluster service account token"));
  while (!out.bearer_token.empty() &&
         std::isspace(static_cast<unsigned char>(out.bearer_token.back()))) {
    out.bearer_token.pop_back();
  }
  ASSIGN_OR_RETURN(out.ca_pem, ReadWholeFile(dir + "/ca.crt", "in-cluster service account CA"));
  Result<std::string> namespace_name = ReadWholeFile(dir + "/namespace", "namespace");
  if (namespace_name && !namespace_name->empty()) {
    out.namespace_name = *namespace_name;
    while (!out.namespace_name.empty() &&
           std::isspace(static_cast<unsigned char>(out.namespace_name.back()))) {
      out.namespace_name.pop_back();
    }
  }
  return out;
}

Result<KubeConfig> LoadKubeConfig(const KubeConfigOptions& options,
                                  const KubeConfigEnvironment& environment) {
  std::vector<std::pair<std::string, std::string>> texts;
  std::vector<std::string> tried;
  if (!options.explicit_path.empty()) {
    ASSIGN_OR_RETURN(std::string text, ReadWholeFile(options.explicit_path, "kubeconfig"));
    texts.emplace_back(options.explicit_path, std::move(text));
  } else {
    std::vector<std::string> paths;
    if (std::optional<std::string> list = environment.getenv("KUBECONFIG");
        list && !list->empty()) {
      std::stringstream entries(*list);
      for (std::string entry; std::getline(entries, entry, ':');) {
        if (!entry.empty()) paths.push_back(entry);
      }
      tried.push_back("$KUBECONFIG (" + *list + ")");
    } else if (std::optional<std::string> home = environment.getenv("HOME"); home) {
      paths.push_back(*home + "/.kube/config");
      tried.push_back(paths.back());
    }
    // As clientcmd: files of the list that do not exist are skipped.
    for (const std::string& path : paths) {
      std::error_code ec;
      if (!std::filesystem::exists(path, ec)) continue;
      ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path, "kubeconfig"));
      texts.emplace_back(path, std::move(text));
    }
  }
  if (texts.empty()) {
    Result<KubeConfig> in_cluster = LoadInClusterConfig(environment);
    if (in_cluster || in_cluster.error().code() != StatusCode::kFailedPrecondition) {
      return in_cluster;
    }
    std::string looked;
    for (const std::string& place : tried) looked += (looked.empty() ? "" : ", ") + place;
    return Err(
        FailedPreconditionError("no kubeconfig found (looked at " +
                                (looked.empty() ? std::string("nothing: HOME is unset") : looked) +
                                ") and not running in a pod; give --kubeconfig FILE"));
  }
  return ParseKubeConfig(texts, options.context);
}

Result<KubeConfig> LoadKubeConfig(const KubeConfigOptions& options) {
  return LoadKubeConfig(options, KubeConfigEnvironment::Process());
}

std::optional<std::string> DecodeBase64(std::string_view text) {
  auto value_of = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t bits = 0;
  int count = 0;  // sextets gathered in `bits`
  size_t padding = 0;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    if (padding > 0) return std::nullopt;  // data after padding
    int value = value_of(c);
    if (value < 0) return std::nullopt;
    bits = (bits << 6) | static_cast<uint32_t>(value);
    if (++count == 4) {
      out.push_back(static_cast<char>((bits >> 16) & 0xff));
      out.push_back(static_cast<char>((bits >> 8) & 0xff));
      out.push_back(static_cast<char>(bits & 0xff));
      bits = 0;
      count = 0;
    }
  }
  if (count == 1 || padding > 2 || (padding > 0 && count + padding != 4)) return std::nullopt;
  if (count == 2) out.push_back(static_cast<char>((bits >> 4) & 0xff));
  if (count == 3) {
    out.push_back(static_cast<char>((bits >> 10) & 0xff));
    out.push_back(static_cast<char>((bits >> 2) & 0xff));
  }
  return out;
}

}  // namespace strata::kube
