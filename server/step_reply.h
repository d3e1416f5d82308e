//===- server/step_reply.h - the JSON of a step or reset reply ------------===//
///
/// A step's reply, the hot path of serving: most replies are intermediate
/// steps (no reset, no summary, reward 0), written by appending strings;
/// the rest go through llvm::json. Both write the same bytes for the same
/// step (step_reply_test.cc checks it). Internal to the server library.
///
//===----------------------------------------------------------------------===//
#pragma once

#include "mlgo/env/environment.h"
#include "mlgo/protocol/observation_codec.h"

#include <string>
#include <string_view>

namespace mlgo::server {

/// Appends the reply of an intermediate step to `out` without llvm::json;
/// false (and `out` untouched) when the step needs generalStepJson: an
/// episode's last step or one with a reward or summary, a context or
/// default-action source that JSON would escape, a floating default action.
/// `writer`: of the observation specs as a header.
/// Appends a binary observation's frame: the visible tensors as the reply's
/// `{"$frame":N}` counts them (N bytes), concatenated in spec order.
void appendObservationFrame(std::string& out, const env::StepResult& step,
                            const env::EnvironmentDescription& d);

bool appendIntermediateStepJson(std::string& out, const env::StepResult& step,
                                const env::EnvironmentDescription& description,
                                const protocol::ObservationJsonWriter& writer,
                                protocol::TensorEncoding encoding);

/// Appends the fields of a step's info (env/step_info.h), without the
/// braces, as generalStepJson writes them - for a context and default-action
/// source that JSON would not escape (the caller checks).
void appendStepInfoFields(std::string& out, const env::StepResult& step,
                          const env::ResetResult* reset, std::string_view defaultActionSource);

/// Any step's or reset's reply (`reset` set for reset replies: episode,
/// module, module embedding). `visible`: the observation specs as a header.
std::string generalStepJson(const env::StepResult& step,
                            const env::EnvironmentDescription& description,
                            const protocol::LogHeader& visible, protocol::TensorEncoding encoding,
                            const env::ResetResult* reset);

} // namespace mlgo::server
