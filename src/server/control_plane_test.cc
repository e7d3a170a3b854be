#include "server/control_plane.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <sstream>

namespace strata::server {
namespace {

class ControlPlaneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("strata-control-plane-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    ControlPlaneOptions options;
    options.data_dir = dir_.string();
    options.listen = "127.0.0.1:0";
    options.simulate = "1x1:H100-80GB";
    std::ostringstream out;
    Result<std::unique_ptr<ControlPlane>> plane = ControlPlane::Start(options, out);
    ASSERT_TRUE(plane.has_value()) << plane.error().ToString();
    plane_ = std::move(*plane);
  }
  void TearDown() override {
    if (plane_) plane_->Stop();
    plane_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::filesystem::path dir_;
  std::unique_ptr<ControlPlane> plane_;
};

// A loop that ticks once an hour runs again as soon as an object of a kind it wakes on changes.
TEST_F(ControlPlaneTest, LoopWakesOnChangesToItsKinds) {
  std::mutex mutex;
  std::condition_variable ran;
  int runs = 0;
  plane_->AddLoop("counter", std::chrono::hours(1),
                  [&] {
                    {
                      std::lock_guard<std::mutex> lock(mutex);
                      ++runs;
                    }
                    ran.notify_all();
                    return Status::Ok();
                  },
                  {"Service"});
  auto wait_for_runs = [&](int n) {
    std::unique_lock<std::mutex> lock(mutex);
    return ran.wait_for(lock, std::chrono::seconds(30), [&] { return runs >= n; });
  };
  ASSERT_TRUE(wait_for_runs(1)) << "the first run comes at start";

  store::Object service;
  service.key = {"Service", "default", "chat"};
  service.body = {{"spec", {{"model", "chat"}}}};
  ASSERT_TRUE(plane_->store().Create(service).has_value());
  EXPECT_TRUE(wait_for_runs(2)) << "a Service change wakes the loop";
}

}  // namespace
}  // namespace strata::server
