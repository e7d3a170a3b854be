#include "scheduler/quota_ledger.h"

#include <gtest/gtest.h>

namespace strata::scheduler {
namespace {

ResourceVector Gpus(int64_t milli) {
  ResourceVector v;
  v[Resource::kGpu] = milli;
  return v;
}

Cluster TwoQueues(std::optional<int64_t> lending_a, std::optional<int64_t> borrowing_b) {
  Cluster cluster;
  cluster.flavors.push_back({"h100", {}, std::nullopt});
  for (const char* name : {"a", "b"}) {
    Queue q;
    q.name = name;
    q.cohort = "c";
    FlavorQuota fq;
    fq.resources[0] = ResourceQuota{16000, std::string(name) == "b" ? borrowing_b : std::nullopt,
                                    std::string(name) == "a" ? lending_a : std::nullopt};
    q.flavors.push_back(fq);
    cluster.queues.push_back(q);
  }
  return cluster;
}

TEST(QuotaLedgerTest, BorrowsWhatTheCohortLendsUpToLimits) {
  Cluster cluster = TwoQueues(std::nullopt, std::nullopt);
  QuotaLedger ledger(cluster);
  EXPECT_TRUE(ledger.Fits(1, 0, Gpus(32000)));
  EXPECT_FALSE(ledger.Fits(1, 0, Gpus(32001)));
  ledger.Add(1, 0, Gpus(24000));
  EXPECT_TRUE(ledger.IsBorrowing(1, 0));
  EXPECT_TRUE(ledger.Fits(0, 0, Gpus(8000)));
  EXPECT_FALSE(ledger.Fits(0, 0, Gpus(8001)));
  EXPECT_TRUE(ledger.WithinNominal(0, 0, Gpus(16000)));
  EXPECT_EQ(ledger.Explain(0, 0, Gpus(16000)),
            "queue a: 0/16 nvidia.com/gpu in use, cohort can lend 0");
  ledger.Subtract(1, 0, Gpus(24000));
  EXPECT_TRUE(ledger.Fits(0, 0, Gpus(32000)));
}

TEST(QuotaLedgerTest, LendingAndBorrowingLimits) {
  Cluster cluster = TwoQueues(/*lending_a=*/4000, /*borrowing_b=*/2000);
  QuotaLedger ledger(cluster);
  EXPECT_TRUE(ledger.Fits(1, 0, Gpus(18000)));  // b borrows 2, its limit
  EXPECT_FALSE(ledger.Fits(1, 0, Gpus(18001)));
  EXPECT_TRUE(ledger.Fits(0, 0, Gpus(32000)));  // a borrows b's whole nominal
  Cluster lend_only = TwoQueues(/*lending_a=*/4000, std::nullopt);
  QuotaLedger lending(lend_only);
  EXPECT_TRUE(lending.Fits(1, 0, Gpus(20000)));  // a lends at most 4
  EXPECT_FALSE(lending.Fits(1, 0, Gpus(20001)));
}

TEST(QuotaLedgerTest, WholeAndFractionalShareOneGpuQuota) {
  Workload w;
  PodSet whole;
  whole.count = 2;
  whole.gpu.count = 1;
  PodSet share;
  share.gpu.milli = 250;
  share.gpu.memory_mib = 10240;
  PodSet mig;
  mig.gpu.mig_profile = "3g.40gb";
  w.pod_sets = {whole, share, mig};
  ResourceVector charge = QuotaLedger::ChargeFor(w, nullptr);
  EXPECT_EQ(charge[Resource::kGpu], 2000 + 250 + 429);
  EXPECT_EQ(charge[Resource::kGpuMemory], 10240 + 40 * 1024);
}

}  // namespace
}  // namespace strata::scheduler
