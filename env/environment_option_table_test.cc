//===- env/environment_option_table_test.cc - the options, listed once -----===//
#include "mlgo/env/environment_option_table.h"

#include "mlgo/ir2vec/vocabulary.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <set>

namespace mlgo::env {
namespace {

/// A value of each option other than its default, and what get() then gives.
struct Change {
  OptionValue value;
  OptionValue expected;
};

std::map<std::string_view, Change> changes() {
  using Texts = std::vector<std::string>;
  auto same = [](OptionValue v) { return Change{v, v}; };
  return {
      {"problem", same(std::string("regalloc"))},
      {"corpus", same(std::string("/c"))},
      {"clang", same(std::string("/opt/clang-22"))},
      {"jobs", same(uint64_t{3})},
      {"seed", same(uint64_t{9})},
      {"sampler", same(std::string("uniform"))},
      {"cache_dir", same(std::string("/cache"))},
      {"disk_cache", same(false)},
      {"full_compile", same(true)},
      {"compile_timeout", Change{2.0001, 2.001}}, // whole milliseconds, rounded up
      {"max_observations", same(uint64_t{5})},
      {"max_episodes", same(uint64_t{6})},
      {"temp_dir", same(std::string("/tmp/x"))},
      {"priority_fallback", same(std::string("stage"))},
      {"regalloc_score", same(std::string("instructions"))},
      {"fixed_priorities", same(std::string("/p.json"))},
      {"include_default_feature", same(true)},
      {"ir2vec_vocab", Change{std::string("default"), ir2vec::defaultVocabularyPath().string()}},
      {"module_embeddings", same(false)},
      {"delete_flags", same(Texts{"-g"})},
      {"replace_flags", same(Texts{"-O2=-O3", "-march=x=y"})},
      {"add_flags", same(Texts{"-w"})},
  };
}

TEST(EnvironmentOptionTable, NamesAreUniqueAndSpelledAsTheirHostsWant) {
  std::set<std::string_view> keywords, flags;
  for (const auto& spec : environmentOptionTable()) {
    EXPECT_FALSE(spec.keyword.empty() && spec.flag.empty()) << spec.help;
    EXPECT_FALSE(spec.help.empty()) << spec.keyword;
    if (!spec.keyword.empty()) {
      EXPECT_TRUE(keywords.insert(spec.keyword).second) << spec.keyword;
      EXPECT_EQ(spec.keyword.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_"),
                std::string_view::npos) << spec.keyword;
      EXPECT_EQ(findEnvironmentOption(spec.keyword), &spec);
    }
    if (!spec.flag.empty()) {
      EXPECT_TRUE(flags.insert(spec.flag).second) << spec.flag;
      EXPECT_TRUE(spec.flag.starts_with("--")) << spec.flag;
      EXPECT_EQ(spec.flag.find_first_not_of("-abcdefghijklmnopqrstuvwxyz0123456789"),
                std::string_view::npos) << spec.flag;
    }
  }
  EXPECT_EQ(findEnvironmentOption("nosuch"), nullptr);
  EXPECT_EQ(findEnvironmentOption(""), nullptr);
}

TEST(EnvironmentOptionTable, EveryOptionSetsWhatItReads) {
  auto expected = changes();
  ASSERT_EQ(expected.size(), environmentOptionTable().size()) << "a new option needs a change";
  const EnvironmentOptions defaults = defaultEnvironmentOptions();
  EnvironmentOptions changed = defaults;
  for (const auto& spec : environmentOptionTable()) {
    ASSERT_TRUE(expected.contains(spec.keyword)) << spec.keyword;
    const Change& change = expected.at(spec.keyword);
    // Its default has the kind's alternative and sets the options unchanged.
    OptionValue before = spec.get(defaults);
    EXPECT_EQ(before.index(), change.value.index()) << spec.keyword;
    EnvironmentOptions same = defaults;
    ASSERT_TRUE(setEnvironmentOption(spec, same, before, spec.keyword).ok()) << spec.keyword;
    EXPECT_EQ(spec.get(same), before) << spec.keyword;
    // A changed value is read back, and changes nothing another option reads.
    ASSERT_NE(before, change.expected) << spec.keyword;
    EnvironmentOptions alone = defaults;
    ASSERT_TRUE(setEnvironmentOption(spec, alone, change.value, spec.keyword).ok())
        << spec.keyword;
    EXPECT_EQ(spec.get(alone), change.expected) << spec.keyword;
    for (const auto& other : environmentOptionTable())
      if (&other != &spec)
        EXPECT_EQ(other.get(alone), other.get(defaults)) << spec.keyword << " sets " << other.keyword;
    ASSERT_TRUE(setEnvironmentOption(spec, changed, change.value, spec.keyword).ok());
  }
  for (const auto& spec : environmentOptionTable())
    EXPECT_EQ(spec.get(changed), expected.at(spec.keyword).expected) << spec.keyword;
  EXPECT_TRUE(checkEnvironmentOptions(changed).ok());
}

TEST(EnvironmentOptionTable, TheDefaultsAreTheEnvironmentsWithTheConfiguredClang) {
  EnvironmentOptions d = defaultEnvironmentOptions(), plain;
  EXPECT_EQ(d.clang, std::filesystem::path(MLGO_CLANG));
  EXPECT_EQ(d.problem, plain.problem);
  EXPECT_EQ(d.compileTimeout, plain.compileTimeout);
  EXPECT_EQ(d.maxEpisodes, plain.maxEpisodes);
  EXPECT_EQ(d.useDiskCache, plain.useDiskCache);
  EXPECT_EQ(d.sampler.kind, plain.sampler.kind);
}

std::string refusal(std::string_view keyword, OptionValue value, std::string_view name) {
  EnvironmentOptions o;
  Status s = setEnvironmentOption(*findEnvironmentOption(keyword), o, std::move(value), name);
  return s.ok() ? "accepted" : s.error().message();
}

TEST(EnvironmentOptionTable, BadValuesAreRefusedNamingTheOptionAsGiven) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(refusal("compile_timeout", 0.0, "--compile-timeout"),
            "--compile-timeout: must be a positive number of seconds");
  EXPECT_EQ(refusal("compile_timeout", -1.0, "compile_timeout"),
            "compile_timeout: must be a positive number of seconds");
  EXPECT_EQ(refusal("compile_timeout", nan, "x"), "x: must be a positive number of seconds");
  EXPECT_EQ(refusal("compile_timeout", 1e300, "x"), "x: 1e+300 seconds is too long");
  EXPECT_EQ(refusal("sampler", std::string("nope"), "--sampler"),
            "--sampler: unknown sampler 'nope' (expected uniform, without-replacement or "
            "round-robin)");
  EXPECT_EQ(refusal("regalloc_score", std::string("copies"), "--regalloc-score"),
            "--regalloc-score: unknown regalloc score 'copies' (expected llvm, instructions or executed)");
  EXPECT_EQ(refusal("jobs", uint64_t{1} << 33, "jobs"), "jobs: 8589934592 compilers is too many");
  EXPECT_EQ(refusal("replace_flags", std::vector<std::string>{"-O2"}, "--replace-flag"),
            "--replace-flag: replace rule '-O2' must have the form FLAG=VALUE");
  // Rules that contradict each other show only together.
  EnvironmentOptions o;
  ASSERT_TRUE(setEnvironmentOption(*findEnvironmentOption("delete_flags"), o,
                                   std::vector<std::string>{"-O2"}, "delete_flags").ok());
  ASSERT_TRUE(setEnvironmentOption(*findEnvironmentOption("replace_flags"), o,
                                   std::vector<std::string>{"-O2=-O3"}, "replace_flags").ok());
  Status both = checkEnvironmentOptions(o);
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.error().message().find("-O2"), std::string::npos) << both.error().message();
}

} // namespace
} // namespace mlgo::env
