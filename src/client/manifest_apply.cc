#include "client/manifest_apply.h"

#include "api/encode.h"
#include "api/resource_catalog.h"

namespace strata::client {

Status ApplyManifests(ApiClient& client, const std::vector<api::Object>& objects, bool dry_run,
                      std::ostream& out) {
  std::string body;
  for (const api::Object& object : objects)
    body += "---\n" + api::EncodeObject(object).dump() + "\n";
  std::string path(api::kApplyPath);
  if (dry_run) path += "?dryRun=All";
  Result<nlohmann::json> result = client.Call("POST", path, std::move(body), "application/yaml");
  if (!result) return result.error();
  for (const nlohmann::json& item : (*result)["results"]) {
    out << item.value("reference", "") << " " << item.value("action", "")
        << (dry_run ? " (server dry run)" : "") << "\n";
  }
  return Status::Ok();
}

}  // namespace strata::client
