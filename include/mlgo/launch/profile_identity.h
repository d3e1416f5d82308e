//===- mlgo/launch/profile_identity.h - the profile a compile reads -*- C++ -*-===//
///
/// \file
/// A compile built with a profile (PGO) gives another object when the
/// profile's content changes, even where the compiler's questions stay the
/// same; so a tuning table's entry records the profile its module was tuned
/// with, and the launcher applies it only to a compile that reads the same
/// content (docs/tuning-format.md). This is the launcher's side of that
/// identity; python/mlgo_env/tuning/identity.py computes the same from a
/// corpus module's command.
///
/// Which files a compile reads, as clang-22's driver chooses them (the last
/// of each family wins):
///  - instrumentation profile: `-fprofile-instr-use=F`, `-fprofile-use=F`
///    (a directory F means `F/default.profdata`), bare `-fprofile-instr-use`
///    or `-fprofile-use` (`default.profdata`), the cc1 spelling
///    `-fprofile-instrument-use-path=F` (after `-Xclang`, or in a cc1
///    command); `-fno-profile-instr-use` / `-fno-profile-use` turn it off;
///  - sample profile: `-fprofile-sample-use=F`, `-fauto-profile=F`;
///    `-fno-profile-sample-use` / `-fno-auto-profile` turn it off.
/// Relative paths are the compile's own: relative to the working directory.
///
/// The profile identity: empty when the compile reads no profile; else the
/// SHA-256 (64 lower-case hex digits) of the profile file's bytes; a compile
/// reading both kinds has the SHA-256 of the two files' digests (32 bytes
/// each, the instrumentation profile's first).
///
/// Thread-safe; profileFiles() stats at most one path, profileIdentity()
/// reads the files (once each).
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_LAUNCH_PROFILE_IDENTITY_H
#define MLGO_LAUNCH_PROFILE_IDENTITY_H

#include "mlgo/support/result.h"

#include <span>
#include <string>
#include <string_view>

namespace mlgo::launch {

/// The profile files a compile reads; an empty path = none of that kind.
struct ProfileFiles {
  std::string instrumented;
  std::string sample;

  bool any() const { return !instrumented.empty() || !sample.empty(); }
  /// "'a.profdata'", "'a.profdata' and 'b.prof'", or "no profile".
  std::string describe() const;
};

/// The profiles the compiler arguments `args` (without the compiler) read.
/// Stats a `-fprofile-use=F` path to tell a directory; reads nothing.
ProfileFiles profileFiles(std::span<const std::string> args);

/// The profile identity of a compile reading `files` (see the file comment);
/// empty when it reads none. kNotFound / kIo naming the file that cannot be
/// read.
Result<std::string> profileIdentity(const ProfileFiles& files);

/// A profile identity as messages show it: "no profile" or "profile " and
/// its first 12 hex digits.
std::string describeProfile(std::string_view identity);

} // namespace mlgo::launch

#endif // MLGO_LAUNCH_PROFILE_IDENTITY_H
