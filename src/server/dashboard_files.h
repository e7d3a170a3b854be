#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "net/http_message.h"
#include "server/api_listener.h"

namespace strata::server {

// One file of the dashboard, embedded in the binary at build time (web/ and the uPlot files
// vendored from npm; see web/dashboard.cmake).
struct DashboardFile {
  std::string_view path;  // "/ui/app.js"; "/" is the page itself
  std::string_view content_type;
  std::string_view body;
};

// The embedded files, generated at build time. Immutable; thread-safe.
std::span<const DashboardFile> EmbeddedDashboardFiles();

// Serves the dashboard: GET / answers the page, GET /ui/<file> its scripts, styles and vendored
// libraries, all from memory (no file system, no network, no Node.js at run time). The files
// are public (the API calls they make carry the user's token). Owned by the control plane;
// immutable after construction, so Handle is thread-safe.
class DashboardFiles {
 public:
  explicit DashboardFiles(std::span<const DashboardFile> files = EmbeddedDashboardFiles());

  // The reply for "/" or a path under "/ui/" (404 with a Status object for a file that is not
  // embedded, Unimplemented for a method other than GET or HEAD), or nullopt for any other
  // path.
  std::optional<ApiReply> Handle(const net::HttpRequest& request) const;

 private:
  std::span<const DashboardFile> files_;
};

}  // namespace strata::server
