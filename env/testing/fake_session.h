//===- env/testing/fake_session.h - one replayed compile --------*- C++ -*-===//
///
/// \file
/// Private to the fake driver: the CompilerSession of one fake interactive
/// compile (see fake_driver.h for how it plays its stream and faults).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_ENV_TESTING_FAKE_SESSION_H
#define MLGO_ENV_TESTING_FAKE_SESSION_H

#include "fake_driver.h"

namespace mlgo::env::testing {

/// Writes the fake's object file: a line holding `score`.
Status writeFakeObject(const std::filesystem::path& path, double score);

std::unique_ptr<CompilerSession> makeFakeSession(std::shared_ptr<FakeDriver::State> state,
                                                 support::TempDir dir, CompileCommand command,
                                                 const SessionLimits& limits, FakeModule module);

} // namespace mlgo::env::testing

#endif // MLGO_ENV_TESTING_FAKE_SESSION_H
