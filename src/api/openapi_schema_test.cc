#include "api/openapi_schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

#include "api/custom_resources.h"
#include "api/validation.h"

namespace strata::api {
namespace {

using json = nlohmann::json;
using T = FieldType;
using ::testing::ElementsAre;

const TypeSchema* LeafSchema() {
  static const TypeSchema s{
      "Leaf",
      "A nested object.",
      {{"id", T::kString, "Its id.", nullptr, {}, true}, {"size", T::kQuantity, "Its size."}}};
  return &s;
}

const TypeSchema* LoopSchema() {
  static const TypeSchema s{
      "Loop", "Contains itself.", {{"next", T::kObject, "The next one.", LoopSchema}}};
  return &s;
}

// A schema with one field of every type.
const TypeSchema& EveryType() {
  static const TypeSchema s{
      "EveryType",
      "One field of each type.",
      {{"string", T::kString, "A string.", nullptr, {}, true},
       {"bool", T::kBool, "A bool."},
       {"integer", T::kInteger, "An integer."},
       {"count", T::kNonNegativeInteger, "A count."},
       {"number", T::kNumber, "A number."},
       {"quantity", T::kQuantity, "A quantity."},
       {"duration", T::kDuration, "A duration."},
       {"time", T::kTimestamp, "A time."},
       {"mode", T::kEnum, "A mode.", nullptr, {"Required", "Preferred"}, true},
       {"port", T::kIntOrString, "A port."},
       {"names", T::kStringList, "Names."},
       {"labels", T::kStringMap, "Labels."},
       {"limits", T::kQuantityMap, "Limits."},
       {"leaf", T::kObject, "", LeafSchema},
       {"leaves", T::kObjectList, "Leaves.", LeafSchema},
       {"byName", T::kObjectMap, "Leaves by name.", LeafSchema},
       {"namespace", T::kUnsupported, "strata has no such thing"},
       {"generation", T::kIgnored, "set by the server"}}};
  return s;
}

json Property(std::string_view name) {
  return OpenApiObjectSchema(EveryType())["properties"][std::string(name)];
}

json IntOrString() { return json::array({{{"type", "integer"}}, {{"type", "string"}}}); }

TEST(OpenApiSchemaTest, ScalarTypes) {
  EXPECT_EQ(Property("string"), json({{"type", "string"}, {"description", "A string."}}));
  EXPECT_EQ(Property("bool"), json({{"type", "boolean"}, {"description", "A bool."}}));
  EXPECT_EQ(Property("integer"),
            json({{"type", "integer"}, {"format", "int64"}, {"description", "An integer."}}));
  EXPECT_EQ(
      Property("count"),
      json(
          {{"type", "integer"}, {"format", "int64"}, {"minimum", 0}, {"description", "A count."}}));
  EXPECT_EQ(Property("number"), json({{"type", "number"}, {"description", "A number."}}));
  EXPECT_EQ(Property("time"),
            json({{"type", "string"}, {"format", "date-time"}, {"description", "A time."}}));
  EXPECT_EQ(Property("port"), json({{"anyOf", IntOrString()},
                                    {"x-kubernetes-int-or-string", true},
                                    {"description", "A port."}}));
}

TEST(OpenApiSchemaTest, EnumsListTheirValues) {
  EXPECT_EQ(
      Property("mode"),
      json({{"type", "string"}, {"enum", {"Required", "Preferred"}}, {"description", "A mode."}}));
}

TEST(OpenApiSchemaTest, QuantitiesAreIntOrStringWithKubernetesPattern) {
  json quantity = Property("quantity");
  EXPECT_EQ(quantity["anyOf"], IntOrString());
  EXPECT_EQ(quantity["x-kubernetes-int-or-string"], true);
  std::regex pattern(quantity["pattern"].get<std::string>(), std::regex::ECMAScript);
  for (const char* good : {"8", "500m", "24Gi", "1.5", "1e3", "+2k"}) {
    EXPECT_TRUE(std::regex_match(good, pattern)) << good;
  }
  for (const char* bad : {"three", "8 GPUs", "24GB", ""}) {
    EXPECT_FALSE(std::regex_match(bad, pattern)) << bad;
  }
  EXPECT_EQ(Property("limits")["additionalProperties"]["pattern"], quantity["pattern"]);
}

TEST(OpenApiSchemaTest, DurationsMatchWhatParseDurationAccepts) {
  json duration = Property("duration");
  EXPECT_EQ(duration["type"], "string");
  std::regex pattern(duration["pattern"].get<std::string>(), std::regex::ECMAScript);
  for (const char* good : {"30s", "500ms", "5m", "1h30m"}) {
    EXPECT_TRUE(std::regex_match(good, pattern)) << good;
  }
  for (const char* bad : {"an hour", "1.5h", "30", "s", "-5m", ""}) {
    EXPECT_FALSE(std::regex_match(bad, pattern)) << bad;
  }
}

TEST(OpenApiSchemaTest, ListsAndMaps) {
  EXPECT_EQ(Property("names"),
            json({{"type", "array"}, {"items", {{"type", "string"}}}, {"description", "Names."}}));
  EXPECT_EQ(Property("labels"), json({{"type", "object"},
                                      {"additionalProperties", {{"type", "string"}}},
                                      {"description", "Labels."}}));
  EXPECT_EQ(Property("limits")["type"], "object");
}

TEST(OpenApiSchemaTest, NestedObjectsCarryTheirFieldsAndRequiredList) {
  json leaf = OpenApiObjectSchema(*LeafSchema());
  EXPECT_EQ(leaf["type"], "object");
  EXPECT_EQ(leaf["required"], json({"id"}));
  EXPECT_EQ(leaf["properties"]["id"]["description"], "Its id.");
  // A field without a doc of its own is described by its type's.
  json field = Property("leaf");
  EXPECT_EQ(field["description"], "A nested object.");
  EXPECT_EQ(field["properties"], leaf["properties"]);
  EXPECT_EQ(field["required"], leaf["required"]);
  json list = Property("leaves");
  EXPECT_EQ(list["type"], "array");
  EXPECT_EQ(list["items"]["properties"], leaf["properties"]);
  EXPECT_EQ(list["description"], "Leaves.");
  json map = Property("byName");
  EXPECT_EQ(map["type"], "object");
  EXPECT_EQ(map["additionalProperties"]["required"], json({"id"}));
}

TEST(OpenApiSchemaTest, RequiredFieldsAreListedInOrder) {
  EXPECT_EQ(OpenApiObjectSchema(EveryType())["required"], json({"string", "mode"}));
}

TEST(OpenApiSchemaTest, UnsupportedFieldsAreRefusedByACelRuleNamingThem) {
  json schema = OpenApiObjectSchema(EveryType());
  // Declared, so the rule can see it ("namespace" is a CEL reserved word: escaped).
  EXPECT_EQ(schema["properties"]["namespace"]["x-kubernetes-int-or-string"], true);
  ASSERT_EQ(schema["x-kubernetes-validations"].size(), 1u);
  json rule = schema["x-kubernetes-validations"][0];
  EXPECT_EQ(rule["rule"], "!has(self.__namespace__)");
  EXPECT_EQ(rule["message"], "namespace is not supported by strata: strata has no such thing");
  EXPECT_EQ(rule["fieldPath"], ".namespace");
  // Ignored fields are kept as they are, whatever they hold.
  EXPECT_EQ(schema["properties"]["generation"]["x-kubernetes-preserve-unknown-fields"], true);
}

TEST(OpenApiSchemaTest, ASchemaThatContainsItselfIsCutAtTheRepetition) {
  json loop = OpenApiObjectSchema(*LoopSchema());
  json next = loop["properties"]["next"];
  EXPECT_EQ(next["type"], "object");
  EXPECT_EQ(next["x-kubernetes-preserve-unknown-fields"], true);
  EXPECT_FALSE(next.contains("properties"));
}

// Every node of a structural schema has a type, except int-or-string and preserved ones; no
// $ref; metadata at most typed.
void ExpectStructural(const json& node, const std::string& path) {
  ASSERT_TRUE(node.is_object()) << path;
  EXPECT_FALSE(node.contains("$ref")) << path;
  bool typed = node.contains("type") || node.value("x-kubernetes-int-or-string", false) ||
               node.value("x-kubernetes-preserve-unknown-fields", false);
  EXPECT_TRUE(typed) << path << " has no type";
  if (node.contains("properties")) {
    for (auto it = node["properties"].begin(); it != node["properties"].end(); ++it) {
      ExpectStructural(it.value(), path + "." + it.key());
    }
  }
  if (node.contains("items")) ExpectStructural(node["items"], path + "[]");
  if (node.contains("additionalProperties")) {
    ExpectStructural(node["additionalProperties"], path + "{}");
  }
}

// The schema node at a printer column's JSONPath (".spec.resources.gpu"), or null.
json NodeAt(const json& root, const std::string& json_path) {
  json node = root;
  size_t start = 1;
  while (start <= json_path.size()) {
    size_t dot = json_path.find('.', start);
    if (dot == std::string::npos) dot = json_path.size();
    std::string name = json_path.substr(start, dot - start);
    if (!node.contains("properties") || !node["properties"].contains(name)) return nullptr;
    node = node["properties"][name];
    start = dot + 1;
  }
  return node;
}

TEST(CustomResourcesTest, OneCrdPerStrataKindWithTheCatalogsNames) {
  std::vector<json> crds = CustomResourceDefinitions();
  std::vector<std::string> names;
  for (const json& crd : crds) names.push_back(crd["metadata"]["name"]);
  EXPECT_THAT(names, ElementsAre("queues.strata.dev", "resourceflavors.strata.dev",
                                 "jobs.strata.dev", "services.strata.dev", "tenants.strata.dev",
                                 "workloadpriorityclasses.strata.dev"));
  for (const json& crd : crds) {
    const json& spec = crd["spec"];
    const ResourceType* type = FindResourceTypeByKind(spec["names"]["kind"].get<std::string>());
    ASSERT_NE(type, nullptr);
    EXPECT_EQ(spec["group"], "strata.dev");
    EXPECT_EQ(spec["names"]["plural"], type->plural);
    EXPECT_EQ(spec["names"]["singular"], type->singular);
    EXPECT_EQ(spec["scope"], type->namespaced ? "Namespaced" : "Cluster");
    ASSERT_EQ(spec["versions"].size(), 1u);
    EXPECT_EQ(spec["versions"][0]["name"], "v1alpha1");
    ExpectStructural(spec["versions"][0]["schema"]["openAPIV3Schema"], std::string(type->plural));
  }
}

TEST(CustomResourcesTest, JobSchemaComesFromTheJobTables) {
  json job = CustomResourceDefinitions()[2];
  json version = job["spec"]["versions"][0];
  json root = version["schema"]["openAPIV3Schema"];
  EXPECT_EQ(root["required"], json({"spec"}));
  EXPECT_EQ(root["properties"]["metadata"], json({{"type", "object"}}));
  json replicas = NodeAt(root, ".spec.replicas");
  EXPECT_EQ(replicas["type"], "integer");
  EXPECT_EQ(replicas["minimum"], 0);
  // The API server refuses what strata's decoder refuses.
  EXPECT_EQ(replicas["maximum"], kMaxJobReplicas);
  EXPECT_EQ(replicas["description"],
            "Pods (nodes), placed all together or not at all (default 1). Not with roles.");
  EXPECT_EQ(NodeAt(root, ".spec.template")["required"], json({"command"}));
  EXPECT_EQ(NodeAt(root, ".status.phase")["enum"],
            json({"Pending", "Running", "Restarting", "Succeeded", "Failed"}));
  EXPECT_EQ(version["subresources"], json({{"status", json::object()}}));
}

TEST(CustomResourcesTest, KindsWithoutStatusHaveNoStatusSubresource) {
  for (const json& crd : CustomResourceDefinitions()) {
    std::string kind = crd["spec"]["names"]["kind"];
    bool has_status = kind == "Job" || kind == "Service" || kind == "Queue";
    EXPECT_EQ(crd["spec"]["versions"][0].contains("subresources"), has_status) << kind;
  }
}

TEST(CustomResourcesTest, PrinterColumnsPointAtFieldsOfTheirTypes) {
  for (const json& crd : CustomResourceDefinitions()) {
    json version = crd["spec"]["versions"][0];
    json root = version["schema"]["openAPIV3Schema"];
    json columns = version["additionalPrinterColumns"];
    ASSERT_FALSE(columns.empty());
    EXPECT_EQ(columns.back()["name"], "Age");
    for (const json& column : columns) {
      std::string path = column["jsonPath"];
      if (path == ".metadata.creationTimestamp") continue;
      json node = NodeAt(root, path);
      ASSERT_FALSE(node.is_null()) << crd["metadata"]["name"] << ": " << path;
      if (column["type"] == "integer") {
        EXPECT_EQ(node["type"], "integer") << path;
      }
    }
  }
}

TEST(CustomResourcesTest, ShortNamesShadowNoBuiltInKind) {
  // Every short name and singular of kubectl api-resources on Kubernetes v1.37, and Kueue's
  // short names (clusters running strata often have Kueue's CRDs too).
  const std::set<std::string> builtin = {
      "cs",    "cm",       "ep",    "ev",  "limits",  "ns",      "no",     "pvc",   "pv",
      "po",    "rc",       "quota", "sa",  "svc",     "crd",     "crds",   "ds",    "deploy",
      "rs",    "sts",      "hpa",   "cj",  "csr",     "ing",     "netpol", "pdb",   "pc",
      "sc",    "ingclass", "ipa",   "job", "service", "pod",     "node",   "event", "secret",
      "lease", "lq",       "cq",    "rf",  "flavor",  "flavors", "queue",  "queues"};
  std::set<std::string> seen;
  for (const CustomResourceNames& kind : CustomResourceKinds()) {
    for (std::string_view name : kind.short_names) {
      EXPECT_EQ(builtin.count(std::string(name)), 0u) << name;
      EXPECT_TRUE(seen.insert(std::string(name)).second) << name;
    }
  }
}

TEST(CustomResourcesTest, ControlPlaneRulesCoverEveryKindAndItsStatus) {
  std::vector<json> rules = ControlPlaneRules();
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0]["resources"], json({"queues", "resourceflavors", "jobs", "services", "tenants",
                                         "workloadpriorityclasses"}));
  EXPECT_EQ(rules[1]["resources"], json({"queues/status", "jobs/status", "services/status"}));
  EXPECT_THAT(rules[1]["verbs"].get<std::vector<std::string>>(),
              ElementsAre("get", "patch", "update"));
}

TEST(CustomResourcesTest, PyTorchJobCrdComesFromTheDecodersTablesWithKubeflowsStatus) {
  std::vector<json> crds = CompatCustomResourceDefinitions();
  ASSERT_EQ(crds.size(), 1u);
  const json& crd = crds[0];
  EXPECT_EQ(crd["metadata"]["name"], "pytorchjobs.kubeflow.org");
  EXPECT_TRUE(IsStrataDefinition(crd));
  const json& spec = crd["spec"];
  EXPECT_EQ(spec["group"], "kubeflow.org");
  EXPECT_EQ(spec["names"]["kind"], "PyTorchJob");
  EXPECT_EQ(spec["names"]["plural"], "pytorchjobs");
  EXPECT_EQ(spec["scope"], "Namespaced");
  EXPECT_FALSE(spec["names"].contains("shortNames"));
  const json& version = spec["versions"][0];
  EXPECT_EQ(version["name"], "v1");
  EXPECT_EQ(version["subresources"], json({{"status", json::object()}}));
  json root = version["schema"]["openAPIV3Schema"];
  ExpectStructural(root, "pytorchjobs");
  EXPECT_EQ(NodeAt(root, ".spec.pytorchReplicaSpecs")["additionalProperties"]["required"],
            json({"template"}));
  // What strata does not honour is refused by the API server, naming the field.
  json elastic = NodeAt(root, ".spec.elasticPolicy");
  bool refuses_rdzv = false;
  for (const json& rule : elastic["x-kubernetes-validations"]) {
    refuses_rdzv |= rule["fieldPath"] == ".rdzvBackend";
  }
  EXPECT_TRUE(refuses_rdzv);
  EXPECT_EQ(NodeAt(root, ".status.conditions")["items"]["properties"]["type"]["enum"],
            json({"Created", "Running", "Restarting", "Succeeded", "Failed", "Suspended"}));
  EXPECT_EQ(
      NodeAt(root,
             ".status.replicaStatuses")["additionalProperties"]["properties"]["active"]["type"],
      "integer");
  EXPECT_EQ(version["additionalPrinterColumns"][0]["jsonPath"], ".status.conditions[-1:].type");
}

TEST(CustomResourcesTest, ADefinitionWithoutStratasLabelIsAnotherOperators) {
  EXPECT_FALSE(IsStrataDefinition(json::parse(
      R"({"metadata": {"name": "pytorchjobs.kubeflow.org", "labels": {"app": "training"}}})")));
  EXPECT_FALSE(IsStrataDefinition(json::parse(R"({"metadata": {}})")));
}

TEST(CustomResourcesTest, UserRolesReachOnlyNamespacedKinds) {
  std::vector<json> roles = AggregatedUserRoles();
  ASSERT_EQ(roles.size(), 2u);
  EXPECT_EQ(roles[0]["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-edit"], "true");
  EXPECT_EQ(roles[0]["rules"][0]["resources"], json({"jobs", "services"}));
  EXPECT_EQ(roles[0]["rules"][2]["apiGroups"], json({"kubeflow.org"}));
  EXPECT_EQ(roles[0]["rules"][2]["resources"], json({"pytorchjobs"}));
  EXPECT_EQ(roles[1]["rules"][2]["verbs"], json({"get", "list", "watch"}));
  EXPECT_EQ(roles[1]["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-view"], "true");
  EXPECT_THAT(roles[1]["rules"][0]["verbs"].get<std::vector<std::string>>(),
              ElementsAre("get", "list", "watch"));
  EXPECT_EQ(roles[1]["metadata"]["labels"].count("rbac.authorization.k8s.io/aggregate-to-edit"),
            0u);
}

}  // namespace
}  // namespace strata::api
