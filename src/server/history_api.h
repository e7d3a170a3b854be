#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "common/clock.h"
#include "history/series_store.h"
#include "net/http_message.h"
#include "server/api_listener.h"
#include "server/user_access.h"

namespace strata::server {

// The history endpoint of the control plane: what the dashboard's pages plot, for the hours
// the store keeps (HistoryRecorder says which series each scope has):
//
//   GET /apis/strata.dev/v1alpha1/history/cluster
//   GET /apis/strata.dev/v1alpha1/history/queues[/NAME]
//   GET /apis/strata.dev/v1alpha1/history/namespaces/NS/services/NAME
//   GET /apis/strata.dev/v1alpha1/history/namespaces/NS/jobs/NAME
//
// with an optional `window` (a Go duration such as 1h: the samples from that long ago on;
// default: all kept). The body:
//
//   {"kind": "History", "apiVersion": "strata.dev/v1alpha1", "scope": "services/NS/NAME",
//    "stepSeconds": 15, "windowSeconds": 21600, "times": [unix seconds...],
//    "series": [{"scope", "name", "labels": {...}, "values": [number or null per time]}],
//    "events": [{"time": RFC 3339, "scope", "kind": "scale", "fields": {...}}]}
//
// A scope with nothing recorded answers empty series, not 404 (a service just created has no
// history yet). Access follows the users' token rules: an admin reads every scope; a user
// scoped to namespaces reads the services and jobs of those namespaces and the queues (which
// it may read as objects), and gets 403 naming its namespaces for the others and for the
// cluster's. A bad window or an unknown path under /history gets 400 or 404 as a Status.
//
// Owned by the control plane. Thread-safe (the store is).
class HistoryApi {
 public:
  static constexpr std::string_view kPath = "/apis/strata.dev/v1alpha1/history";

  HistoryApi(std::shared_ptr<const history::SeriesStore> store,
             const Clock* clock = &RealClock::Instance());

  // The reply for a request under kPath from user `caller`, or nullopt for any other path.
  // REQUIRES: caller.kind == kUser.
  std::optional<ApiReply> Handle(const net::HttpRequest& request, const Caller& caller) const;

 private:
  const std::shared_ptr<const history::SeriesStore> store_;
  const Clock* clock_;
};

}  // namespace strata::server
