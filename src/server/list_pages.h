#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/object.h"

namespace strata::server {

// Where a paginated list resumes, as Kubernetes' `continue` token carries it: the resource
// version of the first page (the version a client watches from once it has every page) and the
// key of the last object sent (lists are ordered by namespace, then name). Plain data.
struct ListCursor {
  int64_t first_page_version = 0;
  std::string after_namespace;
  std::string after_name;
};

// The token for `cursor`: opaque to clients, URL-safe (lowercase hex).
std::string EncodeContinue(const ListCursor& cursor);

// The cursor `token` encodes. InvalidArgument naming `continue` when it is not one
// EncodeContinue made.
Result<ListCursor> DecodeContinue(std::string_view token);

// One page of a list: the objects after the cursor (or from the start), at most `limit` of them
// (0: no limit), and the cursor of the next page when objects remain.
struct ListPage {
  std::vector<store::Object> items;
  std::optional<ListCursor> next;
  int64_t remaining = 0;  // objects after this page
};

// Cuts `items` (ordered by namespace, then name, as Store::List returns them) into the page
// that starts after `after` (nullopt: the first page) and holds at most `limit` objects.
// `first_page_version` goes into the next cursor.
ListPage CutPage(std::vector<store::Object> items, const std::optional<ListCursor>& after,
                 int64_t limit, int64_t first_page_version);

}  // namespace strata::server
