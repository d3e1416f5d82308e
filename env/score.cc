//===- env/score.cc - measuring a compile with LLVM's libraries -------------===//
#include "mlgo/env/score.h"

#include "mlgo/corpus/executable_sections.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/Remarks/Remark.h>
#include <llvm/Remarks/RemarkFormat.h>
#include <llvm/Remarks/RemarkParser.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>

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
  return makeError(ErrorCode::kInvalidArgument,
                   "unknown regalloc score '{}' (expected llvm or instructions)", name);
}

Status checkRegallocScore(std::string_view name) {
  for (std::string_view known : kRegallocScores)
    if (name == known)
      return Status::success();
  return makeError(ErrorCode::kInvalidArgument,
                   "unknown regalloc score '{}' (expected llvm, instructions or executed)", name);
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

} // namespace mlgo::env
