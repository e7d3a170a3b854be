// Leader election over a real coordination.k8s.io/v1 Lease: each candidate's time is a
// FakeClock, so the lease duration passes without waiting for it, while every read and write
// goes to the API server.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "kube/leader_election.h"
#include "kube_test_cluster.h"

namespace strata::kube::testing {
namespace {

using nlohmann::json;
using std::chrono::seconds;

LeaderElectionConfig Config(const std::string& ns, const std::string& identity) {
  LeaderElectionConfig config;
  config.lease_namespace = ns;
  config.lease_name = "strata-scheduler";
  config.identity = identity;
  return config;  // client-go's 15 s / 10 s / 2 s
}

json LeaseSpec(Client& client, const std::string& ns) {
  Result<json> lease = client.Get(resources::kLeases, ns, "strata-scheduler");
  EXPECT_TRUE(lease) << lease.error().ToString();
  return lease ? (*lease)["spec"] : json();
}

bool Acquired(LeaderElector& elector) {
  Result<bool> held = elector.TryAcquireOrRenew();
  EXPECT_TRUE(held) << held.error().ToString();
  return held && *held;
}

TEST(KubeLeaseTest, ASecondCandidateTakesOverOnceTheFirstStopsRenewing) {
  std::unique_ptr<Client> client = AdminClient();
  std::string ns = NewNamespace(*client, "lease");
  FakeClock clock_a, clock_b;
  LeaderElector a(client.get(), Config(ns, "scheduler-a"), &clock_a);
  LeaderElector b(client.get(), Config(ns, "scheduler-b"), &clock_b);

  ASSERT_TRUE(Acquired(a));  // creates the lease
  json spec = LeaseSpec(*client, ns);
  EXPECT_EQ(spec["holderIdentity"], "scheduler-a");
  EXPECT_EQ(spec["leaseDurationSeconds"], 15);
  EXPECT_EQ(spec["leaseTransitions"], 0);
  EXPECT_EQ(spec["acquireTime"], spec["renewTime"]);

  EXPECT_FALSE(Acquired(b));
  EXPECT_EQ(b.leader(), "scheduler-a");
  EXPECT_FALSE(b.IsLeader());

  // a renews every retry period; b, trying as often, never gets the lease while it does.
  for (int i = 0; i < 10; ++i) {
    clock_a.Advance(seconds(2));
    clock_b.Advance(seconds(2));
    ASSERT_TRUE(Acquired(a));
    EXPECT_FALSE(Acquired(b));
  }
  spec = LeaseSpec(*client, ns);
  EXPECT_NE(spec["renewTime"], spec["acquireTime"]);
  EXPECT_EQ(spec["holderIdentity"], "scheduler-a");

  // a stops renewing. b takes over at its first try once 15 s have passed since it last saw
  // the lease change, and not before.
  Duration waited{};
  while (!Acquired(b)) {
    clock_b.Advance(seconds(2));
    waited += seconds(2);
    ASSERT_LE(waited, seconds(20));
  }
  EXPECT_GE(waited, seconds(15));
  EXPECT_LT(waited, seconds(15) + seconds(2));
  spec = LeaseSpec(*client, ns);
  EXPECT_EQ(spec["holderIdentity"], "scheduler-b");
  EXPECT_EQ(spec["leaseTransitions"], 1);
  EXPECT_TRUE(b.IsLeader());

  // a, back, finds it lost the lease.
  clock_a.Advance(seconds(30));
  EXPECT_FALSE(Acquired(a));
  EXPECT_FALSE(a.IsLeader());
  EXPECT_EQ(a.leader(), "scheduler-b");
}

TEST(KubeLeaseTest, ARaceBetweenTwoCandidatesHasOneWinner) {
  std::unique_ptr<Client> client = AdminClient();
  std::string ns = NewNamespace(*client, "lease-race");
  FakeClock clock;
  LeaderElector a(client.get(), Config(ns, "scheduler-a"), &clock);
  ASSERT_TRUE(Acquired(a));
  ASSERT_TRUE(a.Release().ok());  // free: whoever writes first wins
  EXPECT_EQ(LeaseSpec(*client, ns)["holderIdentity"], "");

  FakeClock clock_b, clock_c;
  LeaderElector b(client.get(), Config(ns, "scheduler-b"), &clock_b);
  LeaderElector c(client.get(), Config(ns, "scheduler-c"), &clock_c);
  std::atomic<int> winners{0};
  std::thread tb([&] { winners += Acquired(b); });
  std::thread tc([&] { winners += Acquired(c); });
  tb.join();
  tc.join();
  // Both read the free lease; the update with the version they read succeeds for one only
  // (or, if one read after the other's write, it saw a live holder).
  EXPECT_EQ(winners.load(), 1);
  EXPECT_EQ(LeaseSpec(*client, ns)["leaseTransitions"], 1);
}

TEST(KubeLeaseTest, RunLeadsUntilStoppedAndReleasesForTheNext) {
  std::unique_ptr<Client> client = AdminClient();
  std::string ns = NewNamespace(*client, "lease-run");
  auto quick = [&](const std::string& identity) {
    LeaderElectionConfig config = Config(ns, identity);
    // Quick tries; a lease long enough that a loaded machine's slow renewal is not a loss.
    config.lease_duration = seconds(10);
    config.renew_deadline = seconds(8);
    config.retry_period = std::chrono::milliseconds(200);
    return config;
  };
  LeaderElector a(client.get(), quick("scheduler-a"), &RealClock::Instance());
  LeaderElector b(client.get(), quick("scheduler-b"), &RealClock::Instance());
  std::atomic<bool> a_leading{false}, b_leading{false}, a_stopped{false};
  std::atomic<bool> b_saw_a{false};
  LeaderCallbacks a_callbacks{[&] { a_leading = true; }, [&] { a_stopped = true; }, nullptr};
  LeaderCallbacks b_callbacks{
      [&] { b_leading = true; }, nullptr,
      [&](const std::string& who) { b_saw_a = b_saw_a || who == "scheduler-a"; }};
  Status a_outcome, b_outcome;
  std::thread ta([&] { a_outcome = a.Run(a_callbacks); });
  ASSERT_TRUE(WaitFor(30, [&] { return a_leading.load(); }));
  std::thread tb([&] { b_outcome = b.Run(b_callbacks); });
  ASSERT_TRUE(WaitFor(30, [&] { return b_saw_a.load(); }));
  EXPECT_FALSE(b_leading);

  a.Stop();  // releases the lease on its way out
  ta.join();
  EXPECT_TRUE(a_outcome.ok()) << a_outcome.ToString();
  EXPECT_TRUE(a_stopped);
  ASSERT_TRUE(WaitFor(30, [&] { return b_leading.load(); }));
  EXPECT_EQ(LeaseSpec(*client, ns)["holderIdentity"], "scheduler-b");
  b.Stop();
  tb.join();
  EXPECT_TRUE(b_outcome.ok()) << b_outcome.ToString();
}

TEST(KubeLeaseTest, LeadershipIsLostWhenAnotherTakesTheLease) {
  std::unique_ptr<Client> client = AdminClient();
  std::string ns = NewNamespace(*client, "lease-lost");
  LeaderElectionConfig config = Config(ns, "scheduler-a");
  config.retry_period = std::chrono::milliseconds(200);
  LeaderElector a(client.get(), config, &RealClock::Instance());
  std::atomic<bool> leading{false}, stopped{false};
  Status outcome;
  std::thread ta([&] {
    outcome = a.Run({[&] { leading = true; }, [&] { stopped = true; }, nullptr});
  });
  ASSERT_TRUE(WaitFor(30, [&] { return leading.load(); }));
  // Someone overwrites the lease (as a candidate whose clock ran fast would).
  ASSERT_TRUE(client->Patch(resources::kLeases, ns, "strata-scheduler", PatchType::kMerge,
                            {{"spec", {{"holderIdentity", "intruder"}}}}));
  ASSERT_TRUE(WaitFor(30, [&] { return stopped.load(); }));
  ta.join();
  EXPECT_EQ(outcome.code(), StatusCode::kUnavailable);
  EXPECT_THAT(outcome.message(), ::testing::HasSubstr("now held by intruder"));
}

}  // namespace
}  // namespace strata::kube::testing
