#include "kubesched/scheduler_service.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <utility>

namespace strata::kubesched {

Result<std::unique_ptr<SchedulerService>> SchedulerService::Start(SchedulerServiceOptions options,
                                                                  std::ostream& out) {
  kube::ClientOptions client_options;
  client_options.qps = options.qps;
  client_options.burst = options.burst;
  client_options.user_agent = "strata-scheduler/0.1";
  ASSIGN_OR_RETURN(std::unique_ptr<kube::Client> client,
                   kube::Client::FromKubeconfig(options.kubeconfig, client_options));
  // Fails early, naming the server, when it cannot be reached or does not accept us.
  ASSIGN_OR_RETURN(nlohmann::json version, client->GetPath("/version"));
  std::unique_ptr<SchedulerService> service(new SchedulerService());
  service->options_ = std::move(options);
  service->out_ = &out;
  service->identity_ = kube::CandidateIdentity();
  service->client_ = std::move(client);
  out << "strata: scheduling pods with schedulerName " << service->options_.scheduler.scheduler_name
      << " on " << service->client_->server() << " (Kubernetes " << version.value("gitVersion", "?")
      << ") as " << service->identity_ << std::endl;
  if (!service->options_.leader_elect) {
    service->Lead();
    return service;
  }
  kube::LeaderElectionConfig lease = service->options_.election;
  lease.identity = service->identity_;
  service->elector_ =
      std::make_unique<kube::LeaderElector>(service->client_.get(), lease, &RealClock::Instance());
  SchedulerService* self = service.get();
  service->campaign_ = std::thread([self] { self->Campaign(); });
  return service;
}

void SchedulerService::Lead() {
  scheduler_ =
      std::make_unique<KubeScheduler>(client_.get(), RealClock::Instance(), options_.scheduler);
  scheduling_ = std::thread([this] {
    Status status = scheduler_->Run();
    if (!status.ok()) {
      std::lock_guard lock(mutex_);
      ended_ = status;
      done_ = true;
    }
  });
}

void SchedulerService::Campaign() {
  *out_ << "strata: waiting for the lease " << options_.election.lease_namespace << "/"
        << options_.election.lease_name << std::endl;
  kube::LeaderCallbacks callbacks;
  callbacks.on_started_leading = [this] {
    *out_ << "strata: leading (lease " << options_.election.lease_namespace << "/"
          << options_.election.lease_name << ")" << std::endl;
    Lead();
  };
  callbacks.on_stopped_leading = [this] {
    if (scheduler_) scheduler_->Stop();
  };
  callbacks.on_new_leader = [this](const std::string& leader) {
    if (leader != identity_) *out_ << "strata: the leader is " << leader << std::endl;
  };
  Status status = elector_->Run(callbacks);
  std::lock_guard lock(mutex_);
  if (!status.ok()) {
    ended_ = status.WithPrefix("leader election lost");
    *out_ << "strata: " << ended_.message() << std::endl;
  }
  done_ = true;
}

Status SchedulerService::Stop() {
  if (elector_) elector_->Stop();
  if (campaign_.joinable()) campaign_.join();
  if (scheduler_) scheduler_->Stop();
  if (scheduling_.joinable()) scheduling_.join();
  if (scheduler_) {
    KubeScheduler::Stats stats = scheduler_->stats();
    *out_ << fmt::format(
                 "strata: scheduler stopped: {} cycles, {} pods bound, {} binds refused, {} "
                 "gangs released, {} pods preempted ({} evictions refused by a disruption budget)",
                 stats.cycles, stats.bound, stats.bind_failures, stats.gangs_released,
                 stats.preempted, stats.preemptions_refused)
          << std::endl;
    scheduler_.reset();  // Stop again (the destructor's) says nothing twice
  }
  std::lock_guard lock(mutex_);
  return ended_;
}

SchedulerService::~SchedulerService() { Stop().IgnoreError(); }

}  // namespace strata::kubesched
