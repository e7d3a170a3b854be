#include "api/explain.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "api/kinds.h"

namespace strata::api {
namespace {

using ::testing::HasSubstr;

TEST(ExplainTest, ExplainsANativeKind) {
  Result<std::string> text = Explain("job");
  ASSERT_TRUE(text.has_value()) << text.error().message();
  EXPECT_THAT(*text, HasSubstr("KIND:       Job\nVERSION:    strata.dev/v1alpha1\n"));
  EXPECT_THAT(*text, HasSubstr("DESCRIPTION:\n    A distributed training job"));
  EXPECT_THAT(*text, HasSubstr("  spec\t<JobSpec> -required-\n"));
  EXPECT_THAT(*text, HasSubstr("  metadata\t<ObjectMeta> -required-\n"));
}

TEST(ExplainTest, ExplainsAFieldPath) {
  Result<std::string> text = Explain("Job.spec.resources");
  ASSERT_TRUE(text.has_value()) << text.error().message();
  EXPECT_THAT(*text, HasSubstr("FIELD: resources <ResourceRequest>"));
  EXPECT_THAT(*text, HasSubstr("  gpu\t<Quantity>\n    Whole GPUs"));
  Result<std::string> leaf = Explain("job.spec.topology.mode");
  ASSERT_TRUE(leaf.has_value());
  EXPECT_THAT(*leaf, HasSubstr("Values: Required, Preferred"));
  Result<std::string> replicas = Explain("job.spec.replicas");
  ASSERT_TRUE(replicas.has_value());
  EXPECT_THAT(*replicas, HasSubstr("At most 10000."));
  // A field described as its type is: said once.
  Result<std::string> autoscaling = Explain("Service.spec.autoscaling");
  ASSERT_TRUE(autoscaling.has_value());
  EXPECT_THAT(*autoscaling,
              HasSubstr("DESCRIPTION:\n    How the replica count follows load.\n\nFIELDS"));
  EXPECT_THAT(*autoscaling, HasSubstr("  maxScaleDownRate\t<number>"));
}

TEST(ExplainTest, ExplainsCompatibleKindsAndWhatTheyBecome) {
  Result<std::string> text = Explain("pytorchjob.spec.elasticPolicy");
  ASSERT_TRUE(text.has_value()) << text.error().message();
  EXPECT_THAT(*text, HasSubstr("VERSION:    kubeflow.org/v1\nDECODES TO: a Job"));
  EXPECT_THAT(*text, HasSubstr("  rdzvBackend\t<unsupported>\n    Not supported by strata"));
  Result<std::string> core_pod = Explain("pod", "v1");
  ASSERT_TRUE(core_pod.has_value());
  EXPECT_THAT(*core_pod, HasSubstr("VERSION:    v1\n"));
  Result<std::string> native_pod = Explain("pod");
  ASSERT_TRUE(native_pod.has_value());
  EXPECT_THAT(*native_pod, HasSubstr("VERSION:    strata.dev/v1alpha1\n"));
}

TEST(ExplainTest, UnknownKindOrFieldSuggests) {
  Result<std::string> kind = Explain("jbo");
  ASSERT_FALSE(kind.has_value());
  EXPECT_EQ(kind.error().code(), StatusCode::kNotFound);
  EXPECT_THAT(kind.error().message(), HasSubstr("unknown kind \"jbo\"; did you mean \"Job\"?"));
  Result<std::string> field = Explain("job.spec.replcas");
  ASSERT_FALSE(field.has_value());
  EXPECT_EQ(field.error().message(),
            "field \"replcas\" does not exist in Job.spec; did you mean \"replicas\"?");
  Result<std::string> scalar = Explain("job.spec.replicas.x");
  ASSERT_FALSE(scalar.has_value());
  EXPECT_EQ(scalar.error().message(), "Job.spec.replicas is a <integer> and has no fields");
}

// The decoder and explain read the same tables; this keeps every entry documented.
void ExpectDocumented(const TypeSchema& schema, std::set<const TypeSchema*>& seen) {
  if (!seen.insert(&schema).second) return;
  EXPECT_FALSE(schema.doc.empty()) << schema.name;
  for (const FieldSpec& f : schema.fields) {
    EXPECT_FALSE(f.doc.empty()) << schema.name << "." << f.name;
    if (f.type == FieldType::kEnum) {
      EXPECT_FALSE(f.values.empty()) << f.name;
    }
    if (f.nested != nullptr) ExpectDocumented(*f.nested(), seen);
  }
}

TEST(ExplainTest, EveryFieldOfEveryKindIsDocumented) {
  std::set<const TypeSchema*> seen;
  for (const KindInfo& k : AllKinds()) {
    ExpectDocumented(*k.schema(), seen);
    EXPECT_TRUE(Explain(std::string(k.kind), k.api_version).has_value()) << k.kind;
    if (!k.native) {
      EXPECT_FALSE(k.maps_to.empty()) << k.kind;
    }
  }
  EXPECT_THAT(ListKinds(), HasSubstr("InferenceService\tserving.kserve.io/v1beta1"));
}

}  // namespace
}  // namespace strata::api
