//===- server/step_reply_test.cc - both step-reply writers agree ----------===//
//
// The straight writer of intermediate steps must write what the llvm::json
// writer writes, byte for byte, and leave every other step to it.
//
#include "step_reply.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>

namespace mlgo::server {
namespace {

using protocol::ElementType;
using protocol::TensorEncoding;
using protocol::TensorSpec;

struct Fixture {
  env::EnvironmentDescription description;
  protocol::LogHeader visible;

  Fixture() {
    auto add = [&](const char* name, ElementType type, int64_t n) {
      auto spec = TensorSpec::create(name, type, {n});
      size_t at = description.observationSpecs.empty()
                      ? 0
                      : description.observationOffsets.back() +
                            description.observationSpecs.back().byteSize();
      description.observationOffsets.push_back(at);
      description.observationSpecs.push_back(*spec);
    };
    add("mask", ElementType::kInt64, 3);
    add("weight", ElementType::kFloat, 3);
    add("odd", ElementType::kUInt8, 2);
    description.defaultActionSource = "host-emulation-v2:default-eviction";
    visible.features = description.observationSpecs;
  }

  env::StepResult step() const {
    env::StepResult s;
    s.observation.context = "_ZN4main3fooEv";
    s.observation.id = 41;
    const int64_t mask[] = {1, 0, 1};
    const float weight[] = {0.25f, -1.5f, 3e-9f};
    const uint8_t odd[] = {7, 255};
    s.observation.bytes.resize(3 * 8 + 3 * 4 + 2);
    std::memcpy(s.observation.bytes.data(), mask, sizeof mask);
    std::memcpy(s.observation.bytes.data() + 24, weight, sizeof weight);
    std::memcpy(s.observation.bytes.data() + 36, odd, sizeof odd);
    s.defaultAction = env::ActionValue(int64_t{2});
    return s;
  }
};

TEST(StepReply, StraightWriterWritesWhatLlvmJsonWrites) {
  Fixture f;
  for (TensorEncoding encoding : {TensorEncoding::kJson, TensorEncoding::kBase64}) {
    for (bool withDefault : {true, false}) {
      env::StepResult s = f.step();
      if (!withDefault)
        s.defaultAction.reset();
      std::string fast;
      ASSERT_TRUE(appendIntermediateStepJson(fast, s, f.description,
                                             protocol::ObservationJsonWriter(f.visible), encoding));
      EXPECT_EQ(fast, generalStepJson(s, f.description, f.visible, encoding, nullptr));
    }
  }
}

TEST(StepReply, EveryOtherStepIsLeftToTheGeneralWriter) {
  Fixture f;
  auto refused = [&](auto change) {
    env::StepResult s = f.step();
    env::EnvironmentDescription d = f.description;
    change(s, d);
    std::string out;
    return !appendIntermediateStepJson(out, s, d, protocol::ObservationJsonWriter(f.visible),
                                       TensorEncoding::kBase64) &&
           out.empty();
  };
  EXPECT_TRUE(refused([](env::StepResult& s, auto&) { s.terminated = true; }));
  EXPECT_TRUE(refused([](env::StepResult& s, auto&) { s.truncated = true; }));
  EXPECT_TRUE(refused([](env::StepResult& s, auto&) { s.reward = 0.5; }));
  EXPECT_TRUE(refused([](env::StepResult& s, auto&) { s.reward = -0.0; }));
  EXPECT_TRUE(refused([](env::StepResult& s, auto&) { s.summary.emplace(); }));
  EXPECT_TRUE(refused([](env::StepResult& s, auto&) { s.defaultAction = env::ActionValue(0.5); }));
  EXPECT_TRUE(refused([](env::StepResult& s, auto&) { s.observation.context = "a\"b"; }));
  EXPECT_TRUE(refused([](env::StepResult& s, auto&) { s.observation.context = "caf\xc3\xa9"; }));
  EXPECT_TRUE(refused([](auto&, env::EnvironmentDescription& d) { d.defaultActionSource = "a\\b"; }));
  // The general writer escapes what the straight one refused.
  env::StepResult s = f.step();
  s.observation.context = "a\"b";
  EXPECT_NE(generalStepJson(s, f.description, f.visible, TensorEncoding::kJson, nullptr)
                .find(R"("context":"a\"b")"),
            std::string::npos);
}

TEST(StepReply, BothWritersWriteEveryInfoFieldAlike) {
  // A reset's final step with every field the info has (env/step_info.h):
  // the straight writer's fields are the general reply's info, byte for byte.
  Fixture f;
  env::ResetResult reset;
  reset.episode = 3;
  reset.module = "m.o";
  reset.moduleEmbedding = std::make_shared<const std::vector<double>>(
      std::vector<double>{0.1, -2.5e-7, 3.0, 1e300});
  reset.step = f.step();
  reset.step.terminated = true;
  reset.step.reward = 0.125;
  reset.step.defaultAction = env::ActionValue(0.3);
  auto& s = reset.step.summary.emplace();
  s.policyScore = 1234.5;
  s.defaultScore = 1240;
  s.observations = 7;
  s.agentSteps = 5;
  s.fallbackSteps = 1;
  s.prefixSteps = 1;
  s.channelOpened = true;
  s.compileSeconds = 0.0123456789;
  s.compilerCpuSeconds = 1.0 / 3;
  s.contexts = {{"f", 10.5, 11.0}, {"g", 2.0, std::nullopt}};
  std::string general =
      generalStepJson(reset.step, f.description, f.visible, TensorEncoding::kJson, &reset);
  std::string fields;
  appendStepInfoFields(fields, reset.step, &reset, f.description.defaultActionSource);
  EXPECT_EQ(general.substr(general.find("\"info\":{") + 8), fields + "}}");
  for (const char* key : {"\"module_embedding\":[", "\"default_action\":0.", "\"prefix_steps\":1",
                          "\"contexts\":[{\"name\":\"f\"", "{\"name\":\"g\",\"policy_score\":2}]"})
    EXPECT_NE(fields.find(key), std::string::npos) << key << " in " << fields;
}

} // namespace
} // namespace mlgo::server
