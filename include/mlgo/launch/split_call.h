//===- mlgo/launch/split_call.h - several sources in one compiler call -*- C++ -*-===//
///
/// \file
/// A build may compile several sources in one call (`cc -c a.c b.c`: objects
/// `a.o` and `b.o` in the working directory) or compile and link in one
/// (`cc -O2 -shared -fPIC a.c b.c -o lib.so`, `cc -Oz x.c y.o -o prog`: the
/// compiler's objects are temporaries). The launcher takes such a call apart,
/// so that every source gets its module's decisions:
///
/// - each C/C++ source (isSupportedSource) is compiled alone: the call's
///   arguments in their order without its inputs and `-o`, then
///   `-c SOURCE -o OBJECT` (compileAlone);
/// - `-c`: OBJECT is where the compiler puts it, the source's file name with
///   `.o` for its extension, in the working directory (objectName);
/// - a compile-and-link: OBJECT is a temporary; the compile also gets the
///   `-dumpdir` the compiler gives its own compile jobs in such a call (the
///   link's output and `-`, else `a-`), so that its `-cc1` command is the
///   one the call would have run, and `-Qunused-arguments` (the link's
///   options are unused in a compile). Then the call runs as given with each
///   source replaced by its object, in place (linkWith). The source's module
///   is named as a `-c` of it in the same directory names it (objectName):
///   `mlgo-env corpus build` captures no compile-and-link call, so the module
///   a tuning table can have for it is that of the same source compiled with
///   `-c` there (a project building a static and a shared library from the
///   same sources), and that name is what the launcher's stale route finds
///   its entry by (tuned_launch.h) when the compile-and-link's flags (say
///   `-fPIC -fvisibility=hidden`) change its decisions' stream.
///
/// What cannot be taken apart safely passes through untouched, with the
/// reason (planSplit): `-x LANG` (it applies to every input after it), an
/// input that is neither a source nor, in a link, an object or a library
/// (`.o`, `.obj`, `.a`, `.so`, `.so.N`, `.dylib`; assembly, headers,
/// linker scripts and other extensions are refused), standard input, `-o`
/// with several `-c` sources (the compiler refuses it), dependency files
/// named for the whole call (`-MF`, `-MT`, `-MQ`, `-MJ`, `-Wp,-M...`;
/// `-MD`/`-MMD` in a compile-and-link, whose file the compiler names after
/// the output), precompiled headers (`-include-pch`, `-emit-pch`,
/// `-fpch-...`), files named after the object or the output
/// (`-gsplit-dwarf`, `-ftime-trace`, `--coverage`, `-fprofile-arcs`,
/// `-ftest-coverage`, `-fstack-usage`, `-fsave-optimization-record`,
/// `-foptimization-record-file`, `-dumpdir`, `-dumpbase`), modules
/// (`-fmodule...`), `-emit-...`, and any of these given through `-Xclang`.
/// (`-E`, `-S`, `-M`, `-save-temps` and response files pass through before:
/// compile_args.h.)
///
/// Pure functions, no I/O; thread-safe.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_LAUNCH_SPLIT_CALL_H
#define MLGO_LAUNCH_SPLIT_CALL_H

#include "mlgo/launch/compile_args.h"

#include <span>
#include <string>
#include <vector>

namespace mlgo::launch {

/// For classifyCall: a call with `kind.roles` set that is not one source's
/// compile (`compile`: it has `-c`; `languageGiven`: some input has a `-x`
/// language) is split (sets `kind.split`, `kind.link`, `kind.sources`) or
/// refused (sets `kind.reason`).
void planSplit(std::span<const std::string> args, bool compile, bool languageGiven,
               CallKind& kind);

/// Where the compiler puts the object of `-c SOURCE` without `-o`: the file
/// name of `source` with `.o` for its extension (`src/a.c` -> `a.o`).
std::string objectName(const std::string& source);

/// The arguments (without the compiler) that compile `kind.sources[k]` of
/// the split call `args` alone into `object` (see the file comment).
std::vector<std::string> compileAlone(std::span<const std::string> args, const CallKind& kind,
                                      size_t k, const std::string& object);

/// The link of a split compile-and-link: `args` with each source replaced by
/// its object (`objects[k]` for `kind.sources[k]`), in place.
std::vector<std::string> linkWith(std::span<const std::string> args, const CallKind& kind,
                                  std::span<const std::string> objects);

/// The file a compile-and-link writes: its `-o`, else `a.out`.
std::string linkOutput(const CallKind& kind);

} // namespace mlgo::launch

#endif // MLGO_LAUNCH_SPLIT_CALL_H
