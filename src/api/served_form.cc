#include "api/served_form.h"

#include <string>

#include "api/object_meta.h"
#include "api/resource_catalog.h"
#include "common/json_member.h"

namespace strata::api {
namespace {

// The served type of a core-group native kind named `kind`, or nullptr.
const ResourceType* CoreType(std::string_view kind) {
  const ResourceType* type = FindResourceTypeByKind(kind);
  return type != nullptr && type->group.empty() ? type : nullptr;
}

}  // namespace

void ToServedForm(nlohmann::json& body) {
  if (!body.is_object()) return;
  const ResourceType* type = CoreType(StringMemberOr(body, "kind"));
  if (type == nullptr || StringMemberOr(body, "apiVersion") != kApiVersion) return;
  body["apiVersion"] = type->GroupVersion();
}

bool IsServedCoreForm(const nlohmann::json& document) {
  const std::string kind = StringMemberOr(document, "kind");
  const ResourceType* type = CoreType(kind);
  if (type == nullptr || StringMemberOr(document, "apiVersion") != type->GroupVersion()) {
    return false;
  }
  return kind != "Pod" || MemberOrNull(document, "spec").contains("template");
}

}  // namespace strata::api
