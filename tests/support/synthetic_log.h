//===- tests/support/synthetic_log.h - generated TrainingLogger streams -*- C++ -*-===//
///
/// \file
/// Builds well-formed streams for tests and benchmarks: a regalloc-shaped
/// header (20 tensors [1,33] + progress [1] = 3436 bytes per observation), or
/// a small one with a score, filled with seeded pseudo-random bytes (so 0x0a
/// appears inside tensors).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TESTS_SUPPORT_SYNTHETIC_LOG_H
#define MLGO_TESTS_SUPPORT_SYNTHETIC_LOG_H

#include "mlgo/protocol/stream_writer.h"

#include <random>
#include <string>

namespace mlgo::testing {

/// The eviction problem's header as clang-22 sends it.
inline protocol::LogHeader regallocHeader() {
  using protocol::ElementType;
  const char* names[] = {"mask", "is_free", "nr_urgent", "nr_broken_hints", "is_hint", "is_local",
                         "nr_rematerializable", "nr_defs_and_uses", "weighed_reads_by_max",
                         "weighed_writes_by_max", "weighed_read_writes_by_max",
                         "weighed_indvars_by_max", "hint_weights_by_max", "start_bb_freq_by_max",
                         "end_bb_freq_by_max", "hottest_bb_freq_by_max", "liverange_size",
                         "use_def_density", "max_stage", "min_stage"};
  protocol::LogHeader header;
  for (const char* name : names) {
    std::string n = name;
    bool isInt = n == "mask" || n == "is_free" || n == "is_hint" || n == "is_local" ||
                 n == "max_stage" || n == "min_stage";
    header.features.push_back(
        *protocol::TensorSpec::create(n, isInt ? ElementType::kInt64 : ElementType::kFloat, {1, 33}));
  }
  header.features.push_back(*protocol::TensorSpec::create("progress", ElementType::kFloat, {1}));
  header.advice = *protocol::TensorSpec::create("index_to_evict", ElementType::kInt64, {1});
  return header;
}

/// A small header with a float score (training-log shaped).
inline protocol::LogHeader scoredHeader() {
  using protocol::ElementType;
  protocol::LogHeader header;
  header.features.push_back(*protocol::TensorSpec::create("a", ElementType::kInt64, {2}));
  header.features.push_back(*protocol::TensorSpec::create("b", ElementType::kFloat, {3}));
  header.features.push_back(*protocol::TensorSpec::create("c", ElementType::kUInt8, {5}));
  header.score = *protocol::TensorSpec::create("reward", ElementType::kFloat, {1});
  return header;
}

/// `contexts` contexts of `perContext` observations (context i gets
/// perContext + i % 3 - 1 observations, so some are empty when perContext is
/// small), with an outcome after each observation when the header has a
/// score.
inline std::string syntheticStream(const protocol::LogHeader& header, int contexts, int perContext,
                                   uint32_t seed = 1) {
  std::mt19937 rng(seed);
  protocol::StreamWriter writer(header);
  std::string out;
  writer.writeHeader(out);
  std::string obs(header.observationBytes(), '\0');
  std::string score(header.score ? header.score->byteSize() : 0, '\0');
  for (int c = 0; c < contexts; ++c) {
    writer.writeContext(out, "_Z8functionv" + std::to_string(c));
    int n = std::max(0, perContext + c % 3 - 1);
    for (int i = 0; i < n; ++i) {
      for (auto& ch : obs)
        ch = static_cast<char>(rng() & 0xff);
      obs[i % obs.size()] = '\n';
      (void)writer.writeObservation(out, std::as_bytes(std::span(obs.data(), obs.size())));
      if (header.score) {
        for (auto& ch : score)
          ch = static_cast<char>(rng() & 0xff);
        (void)writer.writeOutcome(out, std::as_bytes(std::span(score.data(), score.size())));
      }
    }
  }
  return out;
}

} // namespace mlgo::testing

#endif // MLGO_TESTS_SUPPORT_SYNTHETIC_LOG_H
