//===- trace/policy_decisions.cc - a policy over a recorded log -------------===//
#include "mlgo/trace/policy_decisions.h"

#include "mlgo/trace/log_reader.h"

#include <optional>
#include <string>

namespace mlgo::trace {
namespace {

class DecidingVisitor final : public LogVisitor {
public:
  DecidingVisitor(const policy::Policy& policy,
                  const std::function<Status(const PolicyDecision&)>& decided)
      : policy_(policy), decided_(decided) {}

  Status header(const protocol::LogHeader& header, std::string_view) override {
    auto bound = policy_.bind(header.features);
    if (!bound.ok())
      return bound.error();
    bound_.emplace(std::move(*bound));
    return Status::success();
  }
  Status context(std::string_view name) override {
    context_.assign(name);
    return Status::success();
  }
  Status observation(int64_t id, std::span<const std::span<const std::byte>> tensors) override {
    return decided_({context_, id, bound_->decide(tensors)});
  }
  Status outcome(int64_t, std::span<const std::byte>) override { return Status::success(); }

private:
  const policy::Policy& policy_;
  const std::function<Status(const PolicyDecision&)>& decided_;
  std::optional<policy::BoundPolicy> bound_;
  std::string context_;
};

} // namespace

Status decideOverLog(const std::filesystem::path& path, const policy::Policy& policy,
                     const std::function<Status(const PolicyDecision&)>& decided) {
  DecidingVisitor visitor(policy, decided);
  return readLog(path, visitor);
}

} // namespace mlgo::trace
