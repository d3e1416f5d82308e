//===- env/score.cc - measuring a compile with LLVM's libraries -------------===//
#include "mlgo/env/score.h"

#include "mlgo/corpus/executable_sections.h"
#include "mlgo/env/executed_estimate.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/Remarks/Remark.h>
#include <llvm/Remarks/RemarkFormat.h>
#include <llvm/Remarks/RemarkParser.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>

#include <span>

namespace mlgo::env {
namespace {

std::string message(llvm::Error error) {
  return llvm::toString(std::move(error));
}

Result<std::unique_ptr<llvm::MemoryBuffer>> readFile(const std::filesystem::path& path,
                                                     std::string_view what) {
  auto buffer = llvm::MemoryBuffer::getFile(path.string(), /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    std::error_code ec = buffer.getError();
    ErrorCode code =
        ec == std::errc::no_such_file_or_directory ? ErrorCode::kNotFound : ErrorCode::kIo;
    return makeError(code, "cannot read {} {}: {}", what, path.string(), ec.message());
  }
  return std::move(*buffer);
}

/// Adds a remark argument's value to the matching cost field.
void addCost(RegallocCosts& costs, llvm::StringRef key, double value) {
  if (key == "TotalSpillsCost")
    costs.spills += value;
  else if (key == "TotalReloadsCost")
    costs.reloads += value;
  else if (key == "TotalFoldedSpillsCost")
    costs.foldedSpills += value;
  else if (key == "TotalFoldedReloadsCost")
    costs.foldedReloads += value;
  else if (key == "TotalCopiesCost")
    costs.copies += value;
}

/// The names as a reader lists them: "a, b or c".
std::string choices(std::span<const std::string_view> names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0)
      text += i + 1 == names.size() ? " or " : ", ";
    text += names[i];
  }
  return text;
}

} // namespace

Result<uint64_t> executableSectionBytes(const std::filesystem::path& object) {
  auto sections = corpus::readExecutableSections(object);
  if (!sections.ok())
    return sections.error();
  uint64_t bytes = 0;
  for (const corpus::ExecutableSection& section : *sections)
    bytes += section.contents.size();
  return bytes;
}

Result<std::vector<RegallocCosts>> readRegallocRemarks(const std::filesystem::path& remarks) {
  auto buffer = readFile(remarks, "remarks file");
  if (!buffer.ok())
    return buffer.error();
  auto parser = llvm::remarks::createRemarkParserFromMeta(llvm::remarks::Format::Bitstream,
                                                          (*buffer)->getBuffer());
  if (!parser)
    return makeError(ErrorCode::kParse, "{} is not a bitstream remarks file: {}", remarks.string(),
                     message(parser.takeError()));
  std::vector<RegallocCosts> functions;
  llvm::StringMap<size_t> index;
  for (;;) {
    auto remark = (*parser)->next();
    if (!remark) {
      llvm::Error error = remark.takeError();
      if (error.isA<llvm::remarks::EndOfFileError>()) {
        llvm::consumeError(std::move(error));
        break;
      }
      return makeError(ErrorCode::kParse, "malformed remarks file {}: {}", remarks.string(),
                       message(std::move(error)));
    }
    const llvm::remarks::Remark& r = **remark;
    if (r.PassName != "regalloc" || r.RemarkName != "SpillReloadCopies")
      continue;
    auto [it, inserted] = index.try_emplace(r.FunctionName, functions.size());
    if (inserted)
      functions.push_back(RegallocCosts{r.FunctionName.str()});
    RegallocCosts& costs = functions[it->second];
    for (const llvm::remarks::Argument& arg : r.Args) {
      double value = 0;
      if (!arg.Key.starts_with("Total"))
        continue;
      if (arg.Val.getAsDouble(value))
        return makeError(ErrorCode::kParse, "remarks file {}: {} of {} is not a number: '{}'",
                         remarks.string(), arg.Key.str(), r.FunctionName.str(), arg.Val.str());
      addCost(costs, arg.Key, value);
    }
  }
  return functions;
}

Result<RegallocWeights> regallocWeights(std::string_view name) {
  if (name == "llvm")
    return kLlvmWeights;
  if (name == "instructions")
    return kInstructionWeights;
  return makeError(ErrorCode::kInvalidArgument, "unknown regalloc score '{}' (expected {})", name,
                   choices(kRegallocWeightings));
}

Result<ScoreKind> regallocScoreKind(std::string_view name) {
  if (name == "llvm")
    return ScoreKind::kRegallocCost;
  if (name == "instructions")
    return ScoreKind::kRegallocInstructions;
  if (name == "executed")
    return ScoreKind::kRegallocExecuted;
  return makeError(ErrorCode::kInvalidArgument, "unknown regalloc score '{}' (expected {})", name,
                   choices(kRegallocScores));
}

Status checkRegallocScore(std::string_view name) {
  auto kind = regallocScoreKind(name);
  if (!kind.ok())
    return kind.error();
  return Status::success();
}

ModuleScore regallocScore(const std::vector<RegallocCosts>& costs, const RegallocWeights& weights) {
  ModuleScore score;
  for (const RegallocCosts& c : costs) {
    double value = c.score(weights);
    score.total += value;
    score.contexts.emplace_back(c.function, value);
  }
  return score;
}

double relativeReward(double policy, double baseline) {
  if (baseline == 0)
    return policy == 0 ? 0.0 : -1.0;
  return 1.0 - policy / baseline;
}

Result<ScoreKind> compileScoreKind(const Problem& problem, std::string_view regallocScore) {
  auto named = regallocScoreKind(regallocScore);
  if (!named.ok())
    return named.error();
  if (problem.scoreKind() != ScoreKind::kRegallocCost)
    return problem.scoreKind();
  return *named;
}

bool scoreReadsRemarks(ScoreKind kind) {
  return kind == ScoreKind::kRegallocCost || kind == ScoreKind::kRegallocInstructions;
}

std::vector<std::string> scoreArgs(ScoreKind kind, const std::filesystem::path& remarks, bool cc1) {
  if (kind == ScoreKind::kRegallocExecuted)
    return executedScoreArgs(cc1);
  if (!scoreReadsRemarks(kind))
    return {};
  if (cc1)
    return {"-opt-record-file", remarks.string(),     "-opt-record-passes",
            "regalloc",         "-opt-record-format", "bitstream"};
  return {"-fsave-optimization-record=bitstream", "-foptimization-record-passes=regalloc",
          "-foptimization-record-file=" + remarks.string()};
}

Result<ModuleScore> scoreCompile(ScoreKind kind, const CompileCommand& command) {
  if (kind == ScoreKind::kTextBytes) {
    auto bytes = executableSectionBytes(command.objectPath);
    if (!bytes.ok())
      return bytes.error();
    return ModuleScore{static_cast<double>(*bytes), {}};
  }
  if (kind == ScoreKind::kRegallocExecuted)
    return executedEstimate(command.objectPath);
  auto costs = readRegallocRemarks(command.remarksPath);
  if (!costs.ok())
    return costs.error();
  return regallocScore(*costs, kind == ScoreKind::kRegallocInstructions ? kInstructionWeights
                                                                        : kLlvmWeights);
}

} // namespace mlgo::env
