//===- policy/fuzz_policy_file.cc - libFuzzer target for the policy reader -===//
///
/// The input is a policy file's text. The reader must never crash, hang or
/// leak. A policy it accepts is written (Policy::text) and read back: the
/// writer must not fail and the text must be a fixed point (what it writes
/// reads back to the same text). It is bound to a stream that has every
/// feature it names (inlining: int64 [1]; regalloc: the mask int64 [1,33],
/// the rest float [1,33]) and answers an all-zero observation: the answer
/// must be a decision its problem allows (inlining 0/1; regalloc 0..32).
///
//===----------------------------------------------------------------------===//
#include "mlgo/policy/policy_file.h"
#include "mlgo/policy/policy_runner.h"

#include <cstdlib>
#include <vector>

using mlgo::protocol::ElementType;
using mlgo::protocol::TensorSpec;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto policy = mlgo::policy::Policy::parse(text, "policy 'fuzz'");
  if (!policy.ok())
    return 0;
  auto written = policy->text();
  if (!written.ok())
    std::abort();
  auto again = mlgo::policy::Policy::parse(*written, "policy 'again'");
  if (!again.ok())
    std::abort();
  auto rewritten = again->text();
  if (!rewritten.ok() || *rewritten != *written)
    std::abort();
  bool regalloc = policy->problem() == "regalloc";
  std::vector<TensorSpec> specs;
  for (const std::string& name : policy->features()) {
    bool mask = regalloc && name == policy->maskFeature();
    auto spec = TensorSpec::create(name, regalloc && !mask ? ElementType::kFloat
                                                           : ElementType::kInt64,
                                   regalloc ? std::vector<int64_t>{1, 33}
                                            : std::vector<int64_t>{1});
    if (!spec.ok())
      return 0;
    specs.push_back(std::move(*spec));
  }
  auto bound = policy->bind(specs);
  if (!bound.ok())
    return 0; // e.g. a host feature this synthetic stream does not carry
  std::vector<std::vector<std::byte>> storage;
  std::vector<std::span<const std::byte>> tensors;
  storage.reserve(specs.size());
  for (const TensorSpec& spec : specs)
    storage.emplace_back(spec.byteSize(), std::byte{0});
  for (const auto& s : storage)
    tensors.emplace_back(s);
  int64_t answer = bound->decide(tensors);
  if (answer < 0 || answer > (regalloc ? 32 : 1))
    std::abort();
  return 0;
}
