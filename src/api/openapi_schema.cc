#include "api/openapi_schema.h"

#include <algorithm>
#include <string>
#include <vector>

namespace strata::api {
namespace {

using json = nlohmann::json;
using T = FieldType;

// The schemas on the path from the root to the one being converted: a nested schema already on
// it would recurse forever, as CRD schemas have no $ref.
using Path = std::vector<const TypeSchema*>;

json ObjectSchema(const TypeSchema& schema, Path& path);

// How a CEL expression names a property: Kubernetes escapes CEL's reserved words and the
// characters CEL identifiers cannot hold.
std::string CelProperty(std::string_view name) {
  static const std::vector<std::string_view> kReserved = {
      "true",     "false",   "null",      "in",       "as",  "break",  "const",
      "continue", "else",    "for",       "function", "if",  "import", "let",
      "loop",     "package", "namespace", "return",   "var", "void",   "while"};
  if (std::find(kReserved.begin(), kReserved.end(), name) != kReserved.end()) {
    return "__" + std::string(name) + "__";
  }
  std::string out;
  for (char c : name) {
    switch (c) {
      case '.':
        out += "__dot__";
        break;
      case '-':
        out += "__dash__";
        break;
      case '/':
        out += "__slash__";
        break;
      default:
        out += c;
    }
  }
  return out;
}

json Quantity() {
  return {{"anyOf", json::array({{{"type", "integer"}}, {{"type", "string"}}})},
          {"pattern", kQuantityPattern},
          {"x-kubernetes-int-or-string", true}};
}

json Nested(const FieldSpec& field, Path& path) {
  const TypeSchema* nested = field.nested();
  if (std::find(path.begin(), path.end(), nested) != path.end()) {
    return {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}};
  }
  return ObjectSchema(*nested, path);
}

json ValueSchema(const FieldSpec& field, Path& path) {
  switch (field.type) {
    case T::kString:
      return {{"type", "string"}};
    case T::kBool:
      return {{"type", "boolean"}};
    case T::kInteger:
      return {{"type", "integer"}, {"format", "int64"}};
    case T::kNonNegativeInteger: {
      json schema = {{"type", "integer"}, {"format", "int64"}, {"minimum", 0}};
      if (field.maximum > 0) schema["maximum"] = field.maximum;
      return schema;
    }
    case T::kNumber:
      return {{"type", "number"}};
    case T::kQuantity:
      return Quantity();
    case T::kDuration:
      return {{"type", "string"}, {"pattern", kDurationPattern}};
    case T::kTimestamp:
      return {{"type", "string"}, {"format", "date-time"}};
    case T::kEnum: {
      json values = json::array();
      for (std::string_view v : field.values) values.push_back(v);
      return {{"type", "string"}, {"enum", std::move(values)}};
    }
    case T::kIntOrString:
      return {{"anyOf", json::array({{{"type", "integer"}}, {{"type", "string"}}})},
              {"x-kubernetes-int-or-string", true}};
    case T::kStringList:
      return {{"type", "array"}, {"items", {{"type", "string"}}}};
    case T::kStringMap:
      return {{"type", "object"}, {"additionalProperties", {{"type", "string"}}}};
    case T::kQuantityMap:
      return {{"type", "object"}, {"additionalProperties", Quantity()}};
    case T::kObject:
      return Nested(field, path);
    case T::kObjectList:
      return {{"type", "array"}, {"items", Nested(field, path)}};
    case T::kObjectMap:
      return {{"type", "object"}, {"additionalProperties", Nested(field, path)}};
    case T::kFreeForm:
      return {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}};
    case T::kUnsupported:
      // Typed so that the CEL rule that refuses it can name it (CEL cannot see untyped
      // fields); anything else is refused by the type check already.
      return {{"x-kubernetes-int-or-string", true}};
    case T::kIgnored:
      return {{"x-kubernetes-preserve-unknown-fields", true}};
  }
  return {{"x-kubernetes-preserve-unknown-fields", true}};
}

std::string Description(const FieldSpec& field) {
  switch (field.type) {
    case T::kUnsupported:
      return "Not supported by strata: " + std::string(field.doc) + ".";
    case T::kIgnored:
      return "Ignored: " + std::string(field.doc) + ".";
    case T::kObject:
    case T::kObjectList:
    case T::kObjectMap:
      if (field.doc.empty()) return std::string(field.nested()->doc);
      return std::string(field.doc);
    default:
      return std::string(field.doc);
  }
}

json FieldSchema(const FieldSpec& field, Path& path) {
  json out = ValueSchema(field, path);
  std::string description = Description(field);
  if (!description.empty()) out["description"] = description;
  return out;
}

json ObjectSchema(const TypeSchema& schema, Path& path) {
  path.push_back(&schema);
  json out = {{"type", "object"}};
  if (!schema.doc.empty()) out["description"] = schema.doc;
  json properties = json::object();
  json required = json::array();
  json rules = json::array();
  for (const FieldSpec& field : schema.fields) {
    properties[std::string(field.name)] = FieldSchema(field, path);
    if (field.required) required.push_back(field.name);
    if (field.type == T::kUnsupported) {
      // The field must be declared for the rule to name it; the rule refuses any value, where
      // pruning would drop it without a word.
      rules.push_back({{"rule", "!has(self." + CelProperty(field.name) + ")"},
                       {"message", std::string(field.name) +
                                       " is not supported by strata: " + std::string(field.doc)},
                       {"fieldPath", "." + std::string(field.name)}});
    }
  }
  out["properties"] = std::move(properties);
  if (!required.empty()) out["required"] = std::move(required);
  if (!rules.empty()) out["x-kubernetes-validations"] = std::move(rules);
  path.pop_back();
  return out;
}

}  // namespace

json OpenApiObjectSchema(const TypeSchema& schema) {
  Path path;
  return ObjectSchema(schema, path);
}

json OpenApiFieldSchema(const FieldSpec& field) {
  Path path;
  return FieldSchema(field, path);
}

}  // namespace strata::api
