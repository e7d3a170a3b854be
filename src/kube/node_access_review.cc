#include "kube/node_access_review.h"

#include <nlohmann/json.hpp>

namespace strata::kube {
namespace {

constexpr Duration kAllowedFor = std::chrono::minutes(5);
constexpr Duration kDeniedFor = std::chrono::seconds(30);
constexpr size_t kMaxAnswers = 4096;

}  // namespace

NodeAccessReviewer::NodeAccessReviewer(Client* client, const Clock* clock)
    : client_(client), clock_(clock) {}

Status NodeAccessReviewer::Review(const KubeletCaller& caller, const std::string& node_name,
                                  const std::string& subresource) {
  const TimePoint now = clock_->Now();
  Key key{caller.user, caller.groups, node_name, subresource};
  {
    std::lock_guard lock(mutex_);
    auto found = answers_.find(key);
    if (found != answers_.end() && found->second.until > now) return found->second.status;
  }
  const std::string asked = "user \"" + caller.user + "\" cannot get nodes/" + subresource +
                            " of node \"" + node_name + "\"";
  nlohmann::json review = {{"apiVersion", "authorization.k8s.io/v1"},
                           {"kind", "SubjectAccessReview"},
                           {"spec",
                            {{"user", caller.user},
                             {"groups", caller.groups},
                             {"resourceAttributes",
                              {{"verb", "get"},
                               {"resource", "nodes"},
                               {"subresource", subresource},
                               {"name", node_name}}}}}};
  Result<nlohmann::json> answered = client_->Create(resources::kSubjectAccessReviews, "", review);
  if (!answered) return answered.error().WithPrefix("reviewing access to node " + node_name);
  const nlohmann::json status = answered->value("status", nlohmann::json::object());
  Answer answer;
  if (status.is_object() && status.value("allowed", false)) {
    answer = {Status::Ok(), now + kAllowedFor};
  } else {
    std::string reason = status.is_object() ? status.value("reason", std::string()) : "";
    answer = {PermissionDeniedError(asked + (reason.empty() ? "" : ": " + reason)),
              now + kDeniedFor};
  }
  std::lock_guard lock(mutex_);
  if (answers_.size() >= kMaxAnswers) answers_.clear();
  answers_[key] = answer;
  return answer.status;
}

}  // namespace strata::kube
