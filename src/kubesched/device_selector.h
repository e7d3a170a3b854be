#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "common/quantity.h"
#include "common/status.h"

// The CEL expressions of Dynamic Resource Allocation's device selectors (a DeviceClass's or a
// ResourceClaim request's `selectors[].cel.expression`), in the subset strata evaluates. Pure;
// thread-compatible.
//
// Supported: the variable `device` with `driver`, `attributes["<domain>"].<name>` and
// `capacity["<domain>"].<name>` (members also as `["<name>"]`); string, integer, boolean and list
// literals; `== != < <= > >=` on integers and strings, `==`/`!=` on booleans; `&& || !` with
// CEL's rules for errors (`false && error` is false, `true || error` is true); `x in [..]`;
// `has(device.attributes["d"].n)`; `quantity("40Gi")` with `compareTo`, `isGreaterThan` and
// `isLessThan`; the string methods `startsWith`, `endsWith`, `contains`, `lowerAscii`.
// Anything else (other functions, macros, arithmetic, floats) is a compile error naming the
// offset, so that a selector strata cannot evaluate is never taken to match.

namespace strata::kubesched {

// A device attribute's value: bool, int, string or version (kept as text, compared as text).
using DeviceAttribute = std::variant<bool, int64_t, std::string>;

// A device of a ResourceSlice as selectors see it.
struct DeviceView {
  std::string driver;
  // By fully qualified name "<domain>/<name>"; a slice's unqualified name takes the driver as
  // its domain.
  std::map<std::string, DeviceAttribute, std::less<>> attributes;
  std::map<std::string, Quantity, std::less<>> capacity;
};

class DeviceSelector {
 public:
  // Compiles `expression`. InvalidArgument "offset N: ..." when it is not in the subset.
  static Result<DeviceSelector> Compile(std::string_view expression);

  // True when the expression is true for `device`; false when it is false, not a boolean, or
  // fails at run time (a missing attribute, a type mismatch), as a device that cannot be shown
  // to match.
  bool Matches(const DeviceView& device) const;

  struct Node;

 private:
  std::shared_ptr<const Node> root_;
};

}  // namespace strata::kubesched
