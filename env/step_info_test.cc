//===- env/step_info_test.cc - the fields of a step's info ----------------===//
#include "mlgo/env/step_info.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace mlgo::env {
namespace {

/// Records "key:type" per field; contexts as "[" their fields "]".
struct KeyRecorder {
  std::vector<std::string> keys;

  void add(std::string_view key, const char* type) { keys.push_back(std::string(key) + ":" + type); }
  void field(std::string_view key, std::string_view) { add(key, "text"); }
  void field(std::string_view key, int64_t) { add(key, "int"); }
  void field(std::string_view key, uint64_t) { add(key, "count"); }
  void field(std::string_view key, double) { add(key, "number"); }
  void field(std::string_view key, bool) { add(key, "bool"); }
  void field(std::string_view key, const ActionValue&) { add(key, "action"); }
  void field(std::string_view key, std::span<const double>) { add(key, "numbers"); }
  void field(std::string_view key, std::span<const ContextScore> contexts) {
    add(key, "contexts");
    for (const auto& c : contexts) {
      keys.push_back("[");
      visitContextScore(c, *this);
      keys.push_back("]");
    }
  }
};

std::vector<std::string> keysOf(const StepResult& step, const ResetResult* reset = nullptr) {
  KeyRecorder recorder;
  visitStepInfo(step, reset, "host-emulation-v2:default-eviction", recorder);
  return recorder.keys;
}

using Keys = std::vector<std::string>;

TEST(StepInfo, AStepThatAsksCarriesItsContextAndDefault) {
  StepResult step;
  EXPECT_EQ(keysOf(step), (Keys{"context:text", "observation_id:int"}));
  step.defaultAction = ActionValue(int64_t{1});
  EXPECT_EQ(keysOf(step), (Keys{"context:text", "observation_id:int", "default_action:action",
                                "default_action_source:text"}));
}

TEST(StepInfo, TheFinalStepCarriesTheSummaryAndAResetItsEmbedding) {
  ResetResult reset;
  reset.step.truncated = true;
  reset.step.summary.emplace().contexts = {{"f", 1.0, 2.0}, {"g", 3.0, std::nullopt}};
  reset.moduleEmbedding = std::make_shared<const std::vector<double>>(3, 0.5);
  EXPECT_EQ(keysOf(reset.step, &reset),
            (Keys{"module_embedding:numbers", "policy_score:number", "default_score:number",
                  "observations:count", "agent_steps:count", "fallback_steps:count",
                  "prefix_steps:count", "channel_opened:bool", "baseline_cached:bool",
                  "compile_seconds:number", "compiler_cpu_seconds:number", "contexts:contexts",
                  "[", "name:text", "policy_score:number", "default_score:number", "]",
                  "[", "name:text", "policy_score:number", "]"}));
  // A step (no reset) never carries the embedding.
  EXPECT_EQ(keysOf(reset.step).front(), "policy_score:number");
}

} // namespace
} // namespace mlgo::env
