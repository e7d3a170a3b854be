#include "node/env_references.h"

namespace strata::node {

std::string ExpandEnvReferences(std::string_view text, const api::Environment& env,
                                std::set<std::string>* referenced) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '$' || i + 1 == text.size()) {
      out += text[i++];
      continue;
    }
    if (text[i + 1] == '$') {
      out += '$';
      i += 2;
      continue;
    }
    size_t close = text[i + 1] == '(' ? text.find(')', i + 2) : std::string_view::npos;
    if (close == std::string_view::npos) {
      out += text[i++];
      continue;
    }
    std::string name(text.substr(i + 2, close - i - 2));
    if (referenced != nullptr) referenced->insert(name);
    auto value = env.find(name);
    out += value != env.end() ? std::string_view(value->second) : text.substr(i, close + 1 - i);
    i = close + 1;
  }
  return out;
}

}  // namespace strata::node
