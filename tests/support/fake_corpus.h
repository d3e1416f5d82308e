//===- tests/support/fake_corpus.h - a corpus the fake compiler plays -*- C++ -*-===//
///
/// \file
/// Test and benchmark helper: records real clang-22's interactive stream for
/// one demo-corpus module (answering clang's default for inlining, "evict
/// nothing / first valid" for eviction), then builds a one-module corpus
/// `replay` whose "bitcode" is a fake-compiler script replaying it (the fake
/// reads each answer, then sends the next recorded observation at once),
/// and a `clang-wrapper` that hands such scripts to the fake compiler and
/// everything else (--version, the start-up probe) to the real clang. A
/// server on this corpus pays next to nothing per compile.
///
/// Needs MLGO_CLANG and MLGO_FAKE_COMPILER defined, and links mlgo::corpus,
/// mlgo::env and mlgo::protocol.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_TESTS_SUPPORT_FAKE_CORPUS_H
#define MLGO_TESTS_SUPPORT_FAKE_CORPUS_H

#include "support/fifo_host.h"

#include "mlgo/corpus/command_line.h"
#include "mlgo/corpus/corpus.h"
#include "mlgo/env/problem.h"
#include "mlgo/env/score.h"
#include "mlgo/protocol/advice.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace mlgo::testing {

struct FakeCorpusSetup {
  std::string problem = "inlining";
  std::string module = "sha256.o";
  std::string variant = "Oz"; ///< Demo corpus variant.
};

struct FakeCorpus {
  std::filesystem::path dir;          ///< Everything lives here.
  std::filesystem::path corpus;       ///< dir/corpus: the module `replay`.
  std::filesystem::path clangWrapper; ///< Pass as --clang.
  int observations = 0;               ///< In the recorded stream.
  size_t streamBytes = 0;             ///< Size of the recorded stream.
  std::string error;                  ///< Empty on success.
};

inline void writeBinaryFile(const std::filesystem::path& path, std::string_view data) {
  std::ofstream out(path, std::ios::binary);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

/// The recording answer: clang's default (inlining), else the first valid
/// eviction candidate, preferring "evict nothing" (32).
inline std::vector<std::byte> answerDefault(const protocol::LogHeader& header,
                                            const protocol::LogEvent& event) {
  int64_t choice = 0;
  if (auto d = header.featureIndex("inlining_default"))
    choice = protocol::loadElement<int64_t>(event.tensors[*d].data(), 0);
  if (auto m = header.featureIndex("mask")) {
    choice = -1;
    for (int64_t i = 32; i >= 0 && choice < 0; i = (i == 32 ? 0 : i + 1))
      if (protocol::loadElement<int64_t>(event.tensors[*m].data(), i) == 1)
        choice = i;
  }
  return *protocol::encodeScalarAdvice(*header.advice, choice);
}

/// Records and builds the corpus in a fresh directory under $TMPDIR (the
/// caller removes `dir`).
inline FakeCorpus makeFakeCorpus(const FakeCorpusSetup& setup) {
  namespace fs = std::filesystem;
  FakeCorpus out;
  auto fail = [&out](std::string why) {
    out.error = std::move(why);
    return out;
  };
  std::string tmpl = (fs::temp_directory_path() / "mlgo-fake-corpus-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr)
    return fail("mkdtemp failed");
  out.dir = tmpl;
  out.corpus = out.dir / "corpus";
  out.clangWrapper = out.dir / "clang-wrapper";
  auto demo = corpus::defaultDemoCorpusDir(setup.variant);
  if (!demo)
    return fail(demo.error().message());
  auto corpus = corpus::Corpus::open(*demo);
  if (!corpus)
    return fail(corpus.error().message());
  auto module = corpus->find(setup.module);
  auto problem = env::findProblem(setup.problem);
  if (!module || !problem)
    return fail("unknown module or problem");
  fs::create_directories(out.corpus);
  auto args = *corpus::recompileArgs(**module, out.corpus / "replay.o");
  std::vector<std::string> argv = {MLGO_CLANG};
  argv.insert(argv.end(), args.begin(), args.end());
  std::string base = (out.dir / "ch").string();
  for (auto& a : (*problem)->interactiveArgs(base, env::ProblemOptions()))
    argv.push_back(a);
  for (auto& a : env::scoreArgs((*problem)->scoreKind(), out.corpus / "replay.remarks", true))
    argv.push_back(a);
  auto capture = runInteractive(argv, base, answerDefault);
  if (!capture.error.empty() || capture.exitCode != 0)
    return fail("recording failed: " + capture.error);
  out.observations = capture.answers;
  out.streamBytes = capture.stream.size();
  writeBinaryFile(out.corpus / "replay.stream", capture.stream);
  std::string script = "mlgo-fake-compiler\nstream replay.stream\nobject replay.o\n";
  if (fs::exists(out.corpus / "replay.remarks"))
    script += "remarks replay.remarks\n";
  writeBinaryFile(out.corpus / "replay.bc", script);
  writeBinaryFile(out.corpus / "replay.cmd", std::string("-cc1\0-O2\0", 9));
  writeBinaryFile(out.corpus / "corpus_description.json",
                  R"({"modules":["replay"],"has_thinlto":false})");
  writeBinaryFile(out.clangWrapper,
                  std::string("#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in *.bc) "
                              "if head -c 18 \"$a\" | grep -q mlgo-fake-compiler; then exec ") +
                      MLGO_FAKE_COMPILER + " \"$@\"; fi;; esac; done\nexec " + MLGO_CLANG +
                      " \"$@\"\n");
  fs::permissions(out.clangWrapper, fs::perms::owner_all);
  return out;
}

} // namespace mlgo::testing

#endif // MLGO_TESTS_SUPPORT_FAKE_CORPUS_H
