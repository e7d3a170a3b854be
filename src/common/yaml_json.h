#pragma once

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace strata {

// One document of a YAML stream, converted to JSON.
struct YamlDocument {
  nlohmann::json value;
  int line = 0;  // 1-based line where the document starts
};

// Parses a stream of YAML documents separated by "---" (JSON is YAML, so JSON text works too)
// into JSON values. Plain scalars follow YAML 1.2's core schema: null (~, null, empty), booleans
// (true/false), integers (decimal, 0x, 0o), floats (1.5, 2e3, .inf, .nan); quoted scalars are
// always strings. Empty documents are skipped. Duplicate mapping keys and non-scalar keys are
// errors. On failure returns kInvalidArgument naming the line and column:
// "line 3, column 7: duplicate key \"name\"". Thread-safe.
Result<std::vector<YamlDocument>> ParseYamlDocuments(std::string_view text);

// Renders JSON as block-style YAML (two-space indent, keys in the JSON's order), for
// `-o yaml` output. Strings that would read back as another type are quoted.
std::string ToYaml(const nlohmann::json& value);

// The byte offset of the first invalid UTF-8 sequence in `text` (an overlong form, a stray
// continuation byte, a sequence cut short), or npos when it is all valid.
size_t InvalidUtf8Offset(std::string_view text);

}  // namespace strata
