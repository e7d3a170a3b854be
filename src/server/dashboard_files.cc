#include "server/dashboard_files.h"

#include <string>

#include "api/api_status.h"

namespace strata::server {
namespace {

ApiReply ErrorReply(const Status& status) {
  return ApiReply{net::HttpResponse::Text(HttpStatusFor(status.code()), "application/json",
                                          api::StatusObject(status).dump()),
                  nullptr};
}

}  // namespace

DashboardFiles::DashboardFiles(std::span<const DashboardFile> files) : files_(files) {}

std::optional<ApiReply> DashboardFiles::Handle(const net::HttpRequest& request) const {
  std::string_view path = request.Path();
  if (path != "/" && path.substr(0, 4) != "/ui/") return std::nullopt;
  if (request.method != "GET" && request.method != "HEAD") {
    return ErrorReply(
        UnimplementedError("method " + request.method + " is not allowed on " + std::string(path)));
  }
  for (const DashboardFile& file : files_) {
    if (file.path != path) continue;
    ApiReply reply{
        net::HttpResponse::Text(200, std::string(file.content_type), std::string(file.body)),
        nullptr};
    // The files change only with the binary; revalidating keeps an upgraded server's page fresh.
    reply.response.headers.emplace_back("Cache-Control", "no-cache");
    return reply;
  }
  return ErrorReply(NotFoundError("the dashboard has no file " + std::string(path)));
}

}  // namespace strata::server
