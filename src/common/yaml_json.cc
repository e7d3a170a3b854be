#include "common/yaml_json.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>

namespace strata {
namespace {

std::string Where(const YAML::Mark& mark) {
  return "line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1);
}

bool IsNullScalar(const std::string& s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

bool AllOf(std::string_view s, bool (*pred)(char)) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!pred(c)) return false;
  }
  return true;
}

bool IsDec(char c) { return c >= '0' && c <= '9'; }
bool IsOctDigit(char c) { return c >= '0' && c <= '7'; }
bool IsHexDigit(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

std::string_view WithoutSign(std::string_view s) {
  return !s.empty() && (s[0] == '-' || s[0] == '+') ? s.substr(1) : s;
}

// [-+]?[0-9]+
bool IsInt(std::string_view s) { return AllOf(WithoutSign(s), IsDec); }

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool IsFloat(std::string_view s) {
  s = WithoutSign(s);
  size_t e = s.find_first_of("eE");
  std::string_view mantissa = s.substr(0, e);
  if (e != std::string_view::npos && !IsInt(s.substr(e + 1))) return false;
  size_t dot = mantissa.find('.');
  if (dot == std::string_view::npos) return AllOf(mantissa, IsDec);
  std::string_view whole = mantissa.substr(0, dot);
  std::string_view frac = mantissa.substr(dot + 1);
  if (whole.empty()) return AllOf(frac, IsDec);
  return AllOf(whole, IsDec) && (frac.empty() || AllOf(frac, IsDec));
}

// Converts a plain (unquoted) scalar by YAML 1.2's core schema.
nlohmann::json PlainScalar(const std::string& s) {
  if (IsNullScalar(s)) return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (IsInt(s)) {
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(s.c_str(), &end, 10);
    if (errno == 0) return static_cast<int64_t>(v);
    return s;  // out of int64 range: keep the text, let the field decoder complain
  }
  std::string_view view(s);
  if (view.size() > 2 && view.substr(0, 2) == "0o" && AllOf(view.substr(2), IsOctDigit))
    return static_cast<int64_t>(std::strtoll(s.c_str() + 2, nullptr, 8));
  if (view.size() > 2 && view.substr(0, 2) == "0x" && AllOf(view.substr(2), IsHexDigit))
    return static_cast<int64_t>(std::strtoll(s.c_str() + 2, nullptr, 16));
  if (IsFloat(view)) return std::strtod(s.c_str(), nullptr);
  if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "+.inf")
    return std::numeric_limits<double>::infinity();
  if (s == "-.inf" || s == "-.Inf" || s == "-.INF") return -std::numeric_limits<double>::infinity();
  if (s == ".nan" || s == ".NaN" || s == ".NAN") return std::numeric_limits<double>::quiet_NaN();
  return s;
}

// What one stream may expand to. An alias repeats its anchor's whole subtree, so a few lines of
// nested aliases stand for billions of nodes ("billion laughs"): conversion counts what it
// produces and stops at these. They are far above any manifest or config (yaml-cpp itself
// takes seconds to read a million nodes written out), and reached in about a second.
constexpr size_t kMaxExpandedNodes = 1'000'000;
constexpr size_t kMaxExpandedScalarBytes = 32 * 1024 * 1024;

struct Expansion {
  size_t nodes = 0;
  size_t scalar_bytes = 0;
};

// Counts `node` (and its text when it is a scalar) against the limits.
Status Count(const YAML::Node& node, Expansion* expansion) {
  if (++expansion->nodes > kMaxExpandedNodes) {
    return InvalidArgumentError(Where(node.Mark()) + ": the YAML expands to more than " +
                                std::to_string(kMaxExpandedNodes) +
                                " nodes (aliases repeat what their anchor holds)");
  }
  if (node.IsScalar()) expansion->scalar_bytes += node.Scalar().size();
  if (expansion->scalar_bytes > kMaxExpandedScalarBytes) {
    return InvalidArgumentError(Where(node.Mark()) + ": the YAML expands to more than " +
                                std::to_string(kMaxExpandedScalarBytes) +
                                " bytes of scalars (aliases repeat what their anchor holds)");
  }
  return Status::Ok();
}

Result<nlohmann::json> Convert(const YAML::Node& node, int depth, Expansion* expansion) {
  if (depth > 200) return Err(InvalidArgumentError(Where(node.Mark()) + ": nested too deeply"));
  RETURN_IF_ERROR(Count(node, expansion));
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return nlohmann::json(nullptr);
    case YAML::NodeType::Scalar:
      // yaml-cpp tags quoted scalars "!" and leaves plain ones "?".
      if (node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str") return node.Scalar();
      return PlainScalar(node.Scalar());
    case YAML::NodeType::Sequence: {
      nlohmann::json out = nlohmann::json::array();
      for (const YAML::Node& item : node) {
        ASSIGN_OR_RETURN(nlohmann::json value, Convert(item, depth + 1, expansion));
        out.push_back(std::move(value));
      }
      return out;
    }
    case YAML::NodeType::Map: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) {
          return Err(
              InvalidArgumentError(Where(kv.first.Mark()) + ": mapping keys must be scalars"));
        }
        RETURN_IF_ERROR(Count(kv.first, expansion));
        const std::string& key = kv.first.Scalar();
        if (out.contains(key)) {
          return Err(
              InvalidArgumentError(Where(kv.first.Mark()) + ": duplicate key \"" + key + "\""));
        }
        ASSIGN_OR_RETURN(nlohmann::json value, Convert(kv.second, depth + 1, expansion));
        out[key] = std::move(value);
      }
      return out;
    }
  }
  return nlohmann::json(nullptr);
}

bool NeedsQuotes(const std::string& s) {
  if (s.empty()) return true;
  nlohmann::json plain = PlainScalar(s);
  if (!plain.is_string()) return true;
  static const std::string kSpecial = ":#{}[],&*!|>'\"%@`";
  if (kSpecial.find(s.front()) != std::string::npos || s.front() == '-' || s.front() == '?' ||
      s.front() == ' ' || s.back() == ' ')
    return true;
  return s.find(": ") != std::string::npos || s.find(" #") != std::string::npos ||
         s.find('\n') != std::string::npos || s.back() == ':';
}

std::string ScalarText(const nlohmann::json& v) {
  if (v.is_null()) return "null";
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    return NeedsQuotes(s) ? nlohmann::json(s).dump() : s;
  }
  return v.dump();
}

void Emit(const nlohmann::json& v, int indent, std::ostringstream& out);

void EmitValueAfterKey(const nlohmann::json& v, int indent, std::ostringstream& out) {
  if ((v.is_object() || v.is_array()) && !v.empty()) {
    out << "\n";
    Emit(v, v.is_array() ? indent : indent + 2, out);
  } else if (v.is_object()) {
    out << " {}\n";
  } else if (v.is_array()) {
    out << " []\n";
  } else {
    out << " " << ScalarText(v) << "\n";
  }
}

void Emit(const nlohmann::json& v, int indent, std::ostringstream& out) {
  std::string pad(indent, ' ');
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      out << pad << ScalarText(it.key()) << ":";
      EmitValueAfterKey(it.value(), indent, out);
    }
  } else if (v.is_array()) {
    for (const auto& item : v) {
      if (item.is_object() && !item.empty()) {
        // "- key: value" with the rest of the mapping aligned under the first key.
        std::ostringstream inner;
        Emit(item, indent + 2, inner);
        std::string text = inner.str();
        out << pad << "- " << text.substr(indent + 2);
      } else if (item.is_array() && !item.empty()) {
        out << pad << "-\n";
        Emit(item, indent + 2, out);
      } else {
        out << pad << "-";
        EmitValueAfterKey(item, indent, out);
      }
    }
  } else {
    out << pad << ScalarText(v) << "\n";
  }
}

// Records where each document of a stream starts, and nothing else.
class DocumentStarts : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override { last_ = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

  const YAML::Mark& last() const { return last_; }

 private:
  YAML::Mark last_;
};

// yaml-cpp 0.7 (Debian 12) loops forever, allocating, on a stray flow indicator after a
// document ("{a: 1},"): it reports empty documents without consuming input (upstream issue
// jbeder/yaml-cpp#1040). Walk the stream's documents first and fail at one that starts where
// the previous one did. yaml-cpp exceptions propagate to the caller's handler.
Status CheckDocumentsAdvance(std::string_view text) {
  std::istringstream in{std::string(text)};
  YAML::Parser parser(in);
  DocumentStarts starts;
  int previous = -1;
  while (parser.HandleNextDocument(starts)) {
    const YAML::Mark& mark = starts.last();
    if (mark.pos == previous) {
      std::string message = Where(mark) + ": unexpected character";
      if (mark.pos >= 0 && static_cast<size_t>(mark.pos) < text.size()) {
        message += " '" + std::string(1, text[mark.pos]) + "'";
      }
      return InvalidArgumentError(std::move(message));
    }
    previous = mark.pos;
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<YamlDocument>> ParseYamlDocuments(std::string_view text) {
  std::vector<YAML::Node> nodes;
  try {
    RETURN_IF_ERROR(CheckDocumentsAdvance(text));
    nodes = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    return Err(InvalidArgumentError(Where(e.mark) + ": " + e.msg));
  }
  std::vector<YamlDocument> docs;
  Expansion expansion;
  for (const YAML::Node& node : nodes) {
    if (node.IsNull()) continue;
    ASSIGN_OR_RETURN(nlohmann::json value, Convert(node, 0, &expansion));
    docs.push_back({std::move(value), node.Mark().line + 1});
  }
  return docs;
}

std::string ToYaml(const nlohmann::json& value) {
  std::ostringstream out;
  if ((value.is_object() || value.is_array()) && value.empty()) {
    out << (value.is_object() ? "{}\n" : "[]\n");
  } else {
    Emit(value, 0, out);
  }
  return out.str();
}

size_t InvalidUtf8Offset(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t length = c < 0x80           ? 1
                    : (c >> 5) == 0x6  ? 2
                    : (c >> 4) == 0xE  ? 3
                    : (c >> 3) == 0x1E ? 4
                                       : 0;
    if (length == 0 || i + length > text.size()) return i;
    for (size_t k = 1; k < length; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2) return i;
    }
    if (length == 2 && c < 0xC2) return i;  // overlong
    i += length;
  }
  return std::string_view::npos;
}

}  // namespace strata
