#include "kubesched/device_selector.h"

#include <gtest/gtest.h>

namespace strata::kubesched {
namespace {

DeviceView H100() {
  DeviceView device;
  device.driver = "gpu.nvidia.com";
  device.attributes = {{"gpu.nvidia.com/type", std::string("gpu")},
                       {"gpu.nvidia.com/productName", std::string("NVIDIA H100 80GB HBM3")},
                       {"gpu.nvidia.com/index", int64_t{3}},
                       {"gpu.nvidia.com/migEnabled", false},
                       {"gpu.strata.dev/nvlinkIsland", int64_t{0}}};
  device.capacity = {{"gpu.nvidia.com/memory", Quantity::Parse("80Gi").value()}};
  return device;
}

bool Matches(const std::string& expression, const DeviceView& device = H100()) {
  Result<DeviceSelector> selector = DeviceSelector::Compile(expression);
  EXPECT_TRUE(selector) << expression << ": " << selector.error().ToString();
  return selector && selector->Matches(device);
}

TEST(DeviceSelectorTest, TheShapesDeviceClassesAndClaimsUse) {
  EXPECT_TRUE(Matches(R"(device.driver == "gpu.nvidia.com")"));
  EXPECT_FALSE(Matches(R"(device.driver == "nic.example.com")"));
  EXPECT_TRUE(Matches(R"(device.attributes["gpu.nvidia.com"].type == "gpu")"));
  EXPECT_TRUE(
      Matches(R"(device.attributes["gpu.nvidia.com"]["productName"].startsWith("NVIDIA H100"))"));
  EXPECT_TRUE(
      Matches(R"(device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0)"));
  EXPECT_FALSE(
      Matches(R"(device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("80Gi")))"));
  EXPECT_TRUE(Matches(R"(device.attributes["gpu.nvidia.com"].index in [1, 2, 3])"));
  EXPECT_TRUE(Matches(
      R"(device.driver == 'gpu.nvidia.com' && !device.attributes["gpu.nvidia.com"].migEnabled)"));
  EXPECT_TRUE(Matches(R"(has(device.attributes["gpu.strata.dev"].nvlinkIsland))"));
  EXPECT_FALSE(Matches(R"(has(device.attributes["gpu.strata.dev"].pcieRoot))"));
  EXPECT_TRUE(
      Matches(R"(device.attributes["gpu.nvidia.com"].productName.lowerAscii().contains("h100"))"));
}

TEST(DeviceSelectorTest, AMissingAttributeDoesNotMatchUnlessTheOtherSideDecides) {
  EXPECT_FALSE(Matches(R"(device.attributes["gpu.nvidia.com"].architecture == "Hopper")"));
  EXPECT_FALSE(Matches(R"(device.attributes["gpu.nvidia.com"].architecture != "Hopper")"));
  EXPECT_TRUE(Matches(
      R"(device.attributes["gpu.nvidia.com"].architecture == "Hopper" || device.driver == "gpu.nvidia.com")"));
  EXPECT_FALSE(Matches(
      R"(device.attributes["gpu.nvidia.com"].architecture == "Hopper" && device.driver == "gpu.nvidia.com")"));
  // Types must agree: an int attribute is not a string.
  EXPECT_FALSE(Matches(R"(device.attributes["gpu.nvidia.com"].index == "3")"));
}

TEST(DeviceSelectorTest, WhatIsOutsideTheSubsetIsAnErrorNamingTheOffset) {
  for (const char* bad :
       {R"(device.driver == "a" &&)", R"(semver("1.0.0") == device.x)",
        R"(device.attributes["d"].n + 1 == 2)", R"(size(device.attributes) > 0)", R"(1.5 > 0)",
        R"(cluster.name == "x")", R"(device.driver.matches("a"))", R"("unterminated)"}) {
    Result<DeviceSelector> selector = DeviceSelector::Compile(bad);
    ASSERT_FALSE(selector) << bad;
    EXPECT_EQ(selector.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(selector.error().message().find("offset "), std::string::npos)
        << selector.error().message();
  }
}

}  // namespace
}  // namespace strata::kubesched
