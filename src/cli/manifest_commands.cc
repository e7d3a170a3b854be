// `strata apply` and `strata explain`: decoding manifests and documenting their fields.
#include <iostream>
#include <string>

#include "api/encode.h"
#include "api/explain.h"
#include "api/manifest.h"
#include "api/manifest_reader.h"
#include "cli/client_flags.h"
#include "cli/command_registry.h"
#include "client/manifest_apply.h"
#include "common/yaml_json.h"

namespace strata::cli {
namespace {

struct ApplyOptions {
  std::string path;
  bool dry_run = false;
  std::string output = "yaml";
  ClientFlags client;
};

void PrintObjects(const std::vector<api::Object>& objects, const std::string& output) {
  if (output == "json") {
    nlohmann::json list = {
        {"apiVersion", "v1"}, {"kind", "List"}, {"items", nlohmann::json::array()}};
    for (const api::Object& o : objects) list["items"].push_back(api::EncodeObject(o));
    std::cout << list.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return;
  }
  for (size_t i = 0; i < objects.size(); ++i) {
    if (i > 0) std::cout << "---\n";
    std::cout << ToYaml(api::EncodeObject(objects[i]));
  }
}

void RunApply(const ApplyOptions& options) {
  Result<std::vector<api::ManifestSource>> sources =
      api::ReadManifestSources(options.path, std::cin);
  if (!sources) {
    Fail(sources.error());
    return;
  }
  std::vector<std::string> warnings;
  Result<std::vector<api::Object>> objects = api::DecodeManifests(*sources, &warnings);
  if (!objects) {
    std::cerr << objects.error().message() << "\n";
    SetExitCode(1);
    return;
  }
  for (const std::string& w : warnings) std::cerr << "Warning: " << w << "\n";
  if (objects->empty()) {
    // Not silence: a runtime alone is read, and says so, but nothing is written for it.
    std::cerr << "strata apply: " << options.path
              << " holds no object to create: a TrainingRuntime or ClusterTrainingRuntime is "
                 "read with the TrainJobs that name it (apply them together)\n";
  }
  if (!options.dry_run) {
    // Decoded here so that errors name the files; the server decodes the objects sent and
    // writes them one at a time.
    std::unique_ptr<client::ApiClient> client = Connect(options.client);
    if (client == nullptr) return;
    Status applied = client::ApplyManifests(*client, *objects, /*dry_run=*/false, std::cout);
    if (!applied.ok()) {
      std::cerr << applied.message() << "\n";
      SetExitCode(1);
      return;
    }
    SetExitCode(0);
    return;
  }
  PrintObjects(*objects, options.output);
  SetExitCode(0);
}

void RunExplain(const std::string& query, const std::string& api_version) {
  if (query.empty()) {
    std::cout << api::ListKinds();
    return;
  }
  Result<std::string> text = api::Explain(query, api_version);
  if (!text) {
    Fail(text.error());
    return;
  }
  std::cout << *text;
}

}  // namespace

STRATA_REGISTER_COMMANDS("manifest", [](CLI::App& app) {
  auto apply_options = std::make_shared<ApplyOptions>();
  CLI::App* apply = app.add_subcommand(
      "apply", "Decode and validate manifests (native and compatible kinds) and apply them");
  apply->add_option("-f,--filename", apply_options->path, "A file, a directory, or - for stdin")
      ->required();
  apply->add_flag("--dry-run", apply_options->dry_run,
                  "Print the decoded native objects instead of applying them");
  apply->add_option("-o,--output", apply_options->output, "Output format: yaml or json")
      ->check(CLI::IsMember({"yaml", "json"}));
  AddClientFlags(apply, apply_options->client, /*namespaced_verbs=*/false);
  apply->callback([apply_options] { RunApply(*apply_options); });

  auto query = std::make_shared<std::string>();
  auto api_version = std::make_shared<std::string>();
  CLI::App* explain = app.add_subcommand(
      "explain",
      "Document a kind's fields: strata explain KIND[.FIELD.PATH] (no KIND: list kinds)");
  explain->add_option("resource", *query, "KIND or KIND.FIELD.PATH, e.g. job.spec.resources");
  explain->add_option("--api-version", *api_version,
                      "The apiVersion, when kinds share a name (e.g. v1 for a Kubernetes Pod)");
  explain->callback([query, api_version] { RunExplain(*query, *api_version); });
});

}  // namespace strata::cli
