#include "node/env_references.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace strata::node {
namespace {

using ::testing::ElementsAre;

TEST(ExpandEnvReferencesTest, FollowsKubernetesRules) {
  api::Environment env = {{"A", "x"}, {"PORT", "80"}};
  std::set<std::string> referenced;
  EXPECT_EQ(ExpandEnvReferences("$(A):$(PORT) $(NOPE) $$(A) $$ $A $( $(A", env, &referenced),
            "x:80 $(NOPE) $(A) $ $A $( $(A");
  EXPECT_THAT(referenced, ElementsAre("A", "NOPE", "PORT"));
  EXPECT_EQ(ExpandEnvReferences("--port=$(PORT)$", env), "--port=80$");
}

}  // namespace
}  // namespace strata::node
