#include "api/queue_names.h"

#include <gtest/gtest.h>

namespace strata::api {
namespace {

TEST(QueueNamesTest, AQueueByNameThenALocalQueueOfTheNamespace) {
  Queue research;
  research.metadata.name = "research-cq";
  research.spec.local_queues = {{"default", "research"}, {"default", "shared"}};
  Queue shared;
  shared.metadata.name = "shared";
  const QueueNames names({research, shared});
  EXPECT_EQ(names.Resolve("default", "research"), "research-cq");
  EXPECT_EQ(names.Resolve("lab", "research-cq"), "research-cq");
  // A Queue of the name wins over a LocalQueue of the same name, as admission decides.
  EXPECT_EQ(names.Resolve("default", "shared"), "shared");
  // A LocalQueue names its Queue only in its own namespace.
  EXPECT_EQ(names.Resolve("lab", "research"), std::nullopt);
  EXPECT_EQ(QueueNames().Resolve("default", "research"), std::nullopt);
}

}  // namespace
}  // namespace strata::api
