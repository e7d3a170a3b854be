#include "engine/profile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace strata::engine {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

TEST(ProfileTest, EightBOnH100MatchesPublicFiguresAtBatchOne) {
  Result<EngineProfile> profile = ProfileByName("8b-h100");
  ASSERT_TRUE(profile.has_value());
  // 1000-token prompt: 30 ms + 1000 x 250 us.
  EXPECT_EQ(profile->StepDuration(1000, 0, 0), milliseconds(280));
  EXPECT_EQ(profile->StepDuration(0, 1, 0), milliseconds(12));
}

TEST(ProfileTest, DecodeSlowsAsBatchAndContextGrow) {
  EngineProfile profile = *ProfileByName("8b-h100");
  Duration one = profile.StepDuration(0, 1, 1000);
  Duration many = profile.StepDuration(0, 64, 64000);
  Duration long_context = profile.StepDuration(0, 1, 100000);
  EXPECT_GT(many, one);
  EXPECT_GT(long_context, one);
  // 64 sequences: 12 ms x 1.63 + 64k tokens x 40 ns.
  EXPECT_EQ(many, microseconds(19560) + microseconds(2560));
}

TEST(ProfileTest, ReloadingFromHostMemoryIsFarCheaperThanPrefill) {
  EngineProfile profile = *ProfileByName("8b-h100");
  // 8,000 tokens: 24 ms copied back from host memory against 2.03 s computed again.
  EXPECT_EQ(profile.StepDuration(0, 0, 0, 8000), milliseconds(24));
  EXPECT_EQ(profile.StepDuration(16, 0, 0, 8000), milliseconds(24 + 30 + 4));
}

TEST(ProfileTest, HostMemoryHoldsBlocksAtTheModelsKvSize) {
  EngineProfile profile = *ProfileByName("8b-h100");
  // 128 KiB per token x 16 tokens = 2 MiB per block.
  EXPECT_EQ(profile.HostBlocksIn(1), 512);
  EXPECT_EQ(profile.HostBlocksIn(200), 102400);
  EXPECT_EQ(profile.HostBlocksIn(1, 32), 256);
  EXPECT_EQ(profile.HostBlocksIn(0), 0);
}

TEST(ProfileTest, KvBlocksFollowTheShareOfGpuMemory) {
  EngineProfile profile = *ProfileByName("8b-h100");
  EXPECT_EQ(profile.GpuBlocksAt(kDefaultGpuMemoryUtilization), profile.num_kv_blocks);
  EXPECT_EQ(profile.GpuBlocksAt(0.9, 32), profile.num_kv_blocks / 2);
  // Half the card: the weights and activations are there in full, the KV cache shrinks.
  Result<int> half = profile.GpuBlocksAt(0.45);
  ASSERT_TRUE(half.has_value()) << half.error().ToString();
  EXPECT_EQ(*half, 7649);
  EXPECT_GT(*profile.GpuBlocksAt(0.95), profile.num_kv_blocks);
  Result<int> tiny = profile.GpuBlocksAt(0.2);
  ASSERT_FALSE(tiny.has_value());
  EXPECT_THAT(tiny.error().message(),
              ::testing::HasSubstr("the model needs 20.9 GiB besides its cache"));
  EXPECT_FALSE(profile.GpuBlocksAt(0).has_value());
  EXPECT_FALSE(profile.GpuBlocksAt(1.5).has_value());
}

TEST(ProfileTest, UnknownNameListsKnownProfiles) {
  Result<EngineProfile> profile = ProfileByName("70b-a100");
  ASSERT_FALSE(profile.has_value());
  EXPECT_THAT(profile.error().message(), ::testing::HasSubstr("known: 8b-h100"));
}

}  // namespace
}  // namespace strata::engine
