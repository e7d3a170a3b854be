#include "server/list_pages.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace strata::server {
namespace {

constexpr char kHex[] = "0123456789abcdef";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

Status Malformed(std::string_view why) {
  return InvalidArgumentError("continue: not a token this server issued (" + std::string(why) +
                              "); list again without it");
}

}  // namespace

std::string EncodeContinue(const ListCursor& cursor) {
  const std::string text = nlohmann::json{
      {"v", cursor.first_page_version},
      {"ns", cursor.after_namespace},
      {"n", cursor.after_name}}.dump();
  std::string out;
  out.reserve(text.size() * 2);
  for (unsigned char c : text) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 0xf]);
  }
  return out;
}

Result<ListCursor> DecodeContinue(std::string_view token) {
  if (token.empty() || token.size() % 2 != 0) return Err(Malformed("odd length"));
  std::string text;
  text.reserve(token.size() / 2);
  for (size_t i = 0; i < token.size(); i += 2) {
    const int high = HexValue(token[i]);
    const int low = HexValue(token[i + 1]);
    if (high < 0 || low < 0) return Err(Malformed("not hex at offset " + std::to_string(i)));
    text.push_back(static_cast<char>(high << 4 | low));
  }
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("v") || !json["v"].is_number_integer() ||
      !json.contains("ns") || !json["ns"].is_string() || !json.contains("n") ||
      !json["n"].is_string()) {
    return Err(Malformed("bad contents"));
  }
  ListCursor cursor{json["v"].get<int64_t>(), json["ns"].get<std::string>(),
                    json["n"].get<std::string>()};
  if (cursor.first_page_version < 0) return Err(Malformed("negative version"));
  return cursor;
}

ListPage CutPage(std::vector<store::Object> items, const std::optional<ListCursor>& after,
                 int64_t limit, int64_t first_page_version) {
  auto begin = items.begin();
  if (after) {
    begin = std::upper_bound(items.begin(), items.end(), *after,
                             [](const ListCursor& cursor, const store::Object& object) {
                               return std::tie(cursor.after_namespace, cursor.after_name) <
                                      std::tie(object.key.namespace_name, object.key.name);
                             });
  }
  const int64_t available = items.end() - begin;
  const int64_t taken = limit > 0 ? std::min(limit, available) : available;
  ListPage page;
  page.items.assign(std::make_move_iterator(begin), std::make_move_iterator(begin + taken));
  page.remaining = available - taken;
  if (page.remaining > 0 && !page.items.empty()) {
    const store::ObjectKey& last = page.items.back().key;
    page.next = ListCursor{first_page_version, last.namespace_name, last.name};
  }
  return page;
}

}  // namespace strata::server
