#include "api/explain.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "api/kinds.h"

namespace strata::api {
namespace {

// A field's description in a FIELDS list.
std::string FieldDescription(const FieldSpec& f) {
  if (f.type == FieldType::kUnsupported)
    return "Not supported by strata: " + std::string(f.doc) + ".";
  if (f.type == FieldType::kIgnored) return "Ignored, with a warning: " + std::string(f.doc) + ".";
  return std::string(f.doc);
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::vector<std::string_view> SplitPath(std::string_view query) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t dot = query.find('.', start);
    parts.push_back(query.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

Result<const KindInfo*> ResolveKind(std::string_view name, std::string_view api_version) {
  std::string wanted = Lower(name);
  const KindInfo* found = nullptr;
  std::vector<std::string_view> all;
  for (const KindInfo& k : AllKinds()) {
    if (std::find(all.begin(), all.end(), k.kind) == all.end()) all.push_back(k.kind);
    if (Lower(k.kind) != wanted) continue;
    if (!api_version.empty() && k.api_version != api_version) continue;
    if (found == nullptr) found = &k;
  }
  if (found != nullptr) return found;
  std::string message = "unknown kind " + Quoted(name);
  if (!api_version.empty()) message += " in " + Quoted(api_version);
  std::vector<std::string> lowered;
  for (std::string_view k : all) lowered.push_back(Lower(k));
  std::vector<std::string_view> lowered_views(lowered.begin(), lowered.end());
  std::string suggestion = SuggestClosest(wanted, lowered_views);
  if (!suggestion.empty()) {
    for (std::string_view k : all) {
      if (Lower(k) == suggestion) suggestion = std::string(k);
    }
    message += "; did you mean " + Quoted(suggestion) + "?";
  }
  return Err(NotFoundError(message + " (strata explain with no argument lists the kinds)"));
}

void WriteIndented(std::ostringstream& out, std::string_view text, int indent) {
  out << std::string(indent, ' ') << text << "\n";
}

}  // namespace

Result<std::string> Explain(std::string_view query, std::string_view api_version) {
  std::vector<std::string_view> parts = SplitPath(query);
  ASSIGN_OR_RETURN(const KindInfo* kind, ResolveKind(parts.front(), api_version));
  const TypeSchema* schema = kind->schema();
  const FieldSpec* field = nullptr;
  std::string walked(kind->kind);
  for (size_t i = 1; i < parts.size(); ++i) {
    if (field != nullptr) {
      if (field->nested == nullptr) {
        return Err(NotFoundError(walked + " is a " + TypeName(*field) + " and has no fields"));
      }
      schema = field->nested();
    }
    field = schema->Find(parts[i]);
    if (field == nullptr) {
      std::vector<std::string_view> names;
      for (const FieldSpec& f : schema->fields) names.push_back(f.name);
      std::string suggestion = SuggestClosest(parts[i], names);
      return Err(
          NotFoundError("field " + Quoted(parts[i]) + " does not exist in " + walked +
                        (suggestion.empty() ? "" : "; did you mean " + Quoted(suggestion) + "?")));
    }
    walked += "." + std::string(parts[i]);
  }

  std::ostringstream out;
  out << "KIND:       " << kind->kind << "\n";
  out << "VERSION:    " << kind->api_version << "\n";
  if (!kind->native) out << "DECODES TO: " << kind->maps_to << "\n";
  out << "\n";
  if (field != nullptr) {
    out << "FIELD: " << field->name << " " << TypeName(*field) << "\n\n";
  }
  out << "DESCRIPTION:\n";
  if (field != nullptr &&
      (field->type == FieldType::kUnsupported || field->type == FieldType::kIgnored)) {
    WriteIndented(out, FieldDescription(*field), 4);
    return out.str();
  }
  WriteIndented(out, field != nullptr ? field->doc : schema->doc, 4);
  if (field != nullptr && !field->values.empty()) {
    std::string values;
    for (std::string_view v : field->values)
      values += (values.empty() ? "" : ", ") + std::string(v);
    WriteIndented(out, "Values: " + values, 4);
  }
  if (field != nullptr && field->maximum > 0) {
    WriteIndented(out, "At most " + std::to_string(field->maximum) + ".", 4);
  }
  const TypeSchema* listed = field == nullptr           ? schema
                             : field->nested != nullptr ? field->nested()
                                                        : nullptr;
  if (listed != nullptr) {
    // The type's own description, unless the field already said the same.
    if (field != nullptr && listed->doc != field->doc) {
      WriteIndented(out, std::string(listed->doc), 4);
    }
    out << "\nFIELDS:\n";
    for (const FieldSpec& f : listed->fields) {
      out << "  " << f.name << "\t" << TypeName(f) << (f.required ? " -required-" : "") << "\n";
      WriteIndented(out, FieldDescription(f), 4);
      out << "\n";
    }
  }
  return out.str();
}

std::string ListKinds() {
  std::ostringstream out;
  out << "Kinds strata reads (strata explain KIND[.FIELD] for their fields):\n";
  for (const KindInfo& k : AllKinds()) {
    out << "  " << k.kind << "\t" << k.api_version;
    if (!k.native) out << "\t-> " << k.maps_to;
    out << "\n";
  }
  return out.str();
}

}  // namespace strata::api
