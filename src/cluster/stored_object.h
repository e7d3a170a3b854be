#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "common/clock.h"
#include "common/status.h"
#include "store/object.h"
#include "store/store.h"

// Conversion between the store's generic objects (JSON bodies) and the api module's native
// objects, for the cache and the loops that write. Pure functions over values; thread-safe.
namespace strata::cluster {

// A native object as read from the store: the stored form (key, version, uid, the body) and its
// decoded value.
template <typename T>
struct Stored {
  store::Object raw;
  T value;
};

// Decodes a stored body, status included. Returns InvalidArgument naming the object and the
// field when the body does not decode.
Result<api::Object> DecodeStoredObject(const store::Object& object);

// The stored form of `value` as a write that replaces `previous`: the canonical body
// (api::EncodeObject), and previous's resource version and uid as preconditions, so that a
// concurrent write makes the write fail with Conflict rather than be lost. For a new object pass
// a default `previous`.
store::Object EncodeForStore(const api::Object& value, const store::Object& previous = {});

// Every stored object of `kind` (in every namespace), decoded as T. Returns the first decoding
// error, naming the object.
template <typename T>
Result<std::vector<Stored<T>>> ListStored(const store::Store& store, std::string_view kind) {
  store::Selection selection;
  selection.kind = std::string(kind);
  ASSIGN_OR_RETURN(store::ListResult listed, store.List(selection));
  std::vector<Stored<T>> out;
  out.reserve(listed.items.size());
  for (store::Object& raw : listed.items) {
    ASSIGN_OR_RETURN(api::Object decoded, DecodeStoredObject(raw));
    T* value = decoded.As<T>();
    if (value == nullptr) {
      return Err(
          InternalError(raw.key.Describe() + ": stored body is a " + std::string(decoded.kind())));
    }
    out.push_back(Stored<T>{std::move(raw), std::move(*value)});
  }
  return out;
}

}  // namespace strata::cluster
