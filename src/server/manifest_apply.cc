#include "server/manifest_apply.h"

#include "api/encode.h"
#include "server/rest_api.h"

namespace strata::server {

Status ApplyManifests(ApiClient& client, const std::vector<api::ManifestSource>& sources,
                      bool dry_run, std::ostream& out) {
  Result<std::vector<api::Object>> objects = api::DecodeManifests(sources);
  if (!objects) return objects.error();
  std::string body;
  for (const api::Object& object : *objects)
    body += "---\n" + api::EncodeObject(object).dump() + "\n";
  std::string path(RestApi::kApplyPath);
  if (dry_run) path += "?dryRun=All";
  Result<nlohmann::json> result = client.Call("POST", path, std::move(body), "application/yaml");
  if (!result) return result.error();
  for (const nlohmann::json& item : (*result)["results"]) {
    out << item.value("reference", "") << " " << item.value("action", "")
        << (dry_run ? " (server dry run)" : "") << "\n";
  }
  return Status::Ok();
}

}  // namespace strata::server
