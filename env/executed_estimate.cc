//===- env/executed_estimate.cc - instructions an object executes ----------===//
#include "mlgo/env/executed_estimate.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>

namespace mlgo::env {
namespace {

using llvm::object::BBAddrMap;
using llvm::object::PGOAnalysisMap;

std::string message(llvm::Error error) {
  return llvm::toString(std::move(error));
}

/// LLVM's disassembler for one object's target, with what it needs alive.
class Disassembler {
public:
  static Result<std::unique_ptr<Disassembler>> forTriple(const llvm::Triple& triple) {
    static std::once_flag once;
    std::call_once(once, [] {
      llvm::InitializeNativeTarget();
      llvm::InitializeNativeTargetDisassembler();
    });
    std::string why;
    const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, why);
    if (target == nullptr)
      return makeError(ErrorCode::kUnsupported, "no disassembler for {}: {}", triple.str(), why);
    auto d = std::unique_ptr<Disassembler>(new Disassembler);
    d->registers_.reset(target->createMCRegInfo(triple));
    if (d->registers_)
      d->asmInfo_.reset(target->createMCAsmInfo(*d->registers_, triple, llvm::MCTargetOptions()));
    d->subtarget_.reset(target->createMCSubtargetInfo(triple, "", ""));
    if (!d->registers_ || !d->asmInfo_ || !d->subtarget_)
      return makeError(ErrorCode::kUnsupported, "no disassembler for {}", triple.str());
    d->context_ = std::make_unique<llvm::MCContext>(triple, d->asmInfo_.get(), d->registers_.get(),
                                                    d->subtarget_.get());
    d->decoder_.reset(target->createMCDisassembler(*d->subtarget_, *d->context_));
    if (!d->decoder_)
      return makeError(ErrorCode::kUnsupported, "no disassembler for {}", triple.str());
    return d;
  }

  /// Instructions in `bytes` (which begin at `address`); none when one does
  /// not decode: the address of the first that does not.
  Result<uint64_t> count(llvm::ArrayRef<uint8_t> bytes, uint64_t address) const {
    uint64_t instructions = 0;
    llvm::MCInst inst;
    for (uint64_t at = 0; at < bytes.size();) {
      uint64_t size = 0;
      auto status = decoder_->getInstruction(inst, size, bytes.slice(at), address + at,
                                             llvm::nulls());
      if (status != llvm::MCDisassembler::Success || size == 0)
        return makeError(ErrorCode::kParse, "no instruction decodes at offset {:#x}",
                         address + at);
      at += size;
      ++instructions;
    }
    return instructions;
  }

private:
  Disassembler() = default;

  std::unique_ptr<llvm::MCRegisterInfo> registers_;
  std::unique_ptr<llvm::MCAsmInfo> asmInfo_;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget_;
  std::unique_ptr<llvm::MCContext> context_;
  std::unique_ptr<llvm::MCDisassembler> decoder_;
};

/// One machine function: its name, profile entry count and the instructions
/// one entry executes (blocks weighed by their frequency relative to the
/// entry block's).
struct FunctionRun {
  std::string name;
  uint64_t entryCount = 0;
  double perEntry = 0;
};

/// The value of `expected`, or none (its error dropped: a symbol LLVM cannot
/// read is a symbol without a name here).
template <typename T> std::optional<T> valueOf(llvm::Expected<T> expected) {
  if (!expected) {
    llvm::consumeError(expected.takeError());
    return std::nullopt;
  }
  return std::move(*expected);
}

/// The names of the function symbols of section `section`, by address.
std::map<uint64_t, std::string> functionNames(const llvm::object::ELFObjectFileBase& object,
                                              const llvm::object::SectionRef& section) {
  std::map<uint64_t, std::string> names;
  for (const llvm::object::ELFSymbolRef symbol : object.symbols()) {
    auto type = valueOf(symbol.getType());
    auto in = valueOf(symbol.getSection());
    if (type != llvm::object::SymbolRef::ST_Function || !in || **in != section)
      continue;
    auto address = valueOf(symbol.getValue());
    auto name = valueOf(symbol.getName());
    if (address && name)
      names.emplace(*address, name->str());
  }
  return names;
}

/// The machine functions of one executable section.
Result<std::vector<FunctionRun>> sectionRuns(const llvm::object::ELFObjectFileBase& object,
                                             const llvm::object::SectionRef& section,
                                             const Disassembler& disassembler) {
  std::vector<PGOAnalysisMap> profiles;
  auto maps = object.readBBAddrMap(static_cast<unsigned>(section.getIndex()), &profiles);
  if (!maps)
    return makeError(ErrorCode::kParse, "its block map: {}", message(maps.takeError()));
  auto contents = section.getContents();
  if (!contents)
    return makeError(ErrorCode::kParse, "a section's bytes: {}", message(contents.takeError()));
  llvm::ArrayRef<uint8_t> bytes(reinterpret_cast<const uint8_t*>(contents->data()),
                                contents->size());
  uint64_t sectionAddress = object.isRelocatableObject() ? 0 : section.getAddress();
  auto names = functionNames(object, section);
  std::vector<FunctionRun> runs;
  for (size_t i = 0; i < maps->size(); ++i) {
    const BBAddrMap& map = (*maps)[i];
    const PGOAnalysisMap& profile = profiles[i];
    if (!profile.FeatEnable.BBFreq || profile.BBEntries.size() != map.getNumBBEntries())
      return makeError(ErrorCode::kParse, "its block map has no block frequencies");
    FunctionRun run;
    auto named = names.find(map.getFunctionAddress());
    run.name = named != names.end() ? named->second
                                    : fmt::format("{:#x}", map.getFunctionAddress());
    run.entryCount = profile.FeatEnable.FuncEntryCount ? profile.FuncEntryCount : 0;
    double entryFrequency = 0;
    size_t k = 0;
    for (const BBAddrMap::BBRangeEntry& range : map.getBBRanges())
      for (const BBAddrMap::BBEntry& block : range.BBEntries) {
        double frequency = static_cast<double>(profile.BBEntries[k++].BlockFreq.getFrequency());
        if (block.ID == 0)
          entryFrequency = frequency;
        uint64_t begin = range.BaseAddress + block.Offset - sectionAddress;
        if (begin > bytes.size() || block.Size > bytes.size() - begin)
          return makeError(ErrorCode::kParse, "a block of {} lies outside its section", run.name);
        auto n = disassembler.count(bytes.slice(begin, block.Size), begin);
        if (!n.ok())
          return n.error().withContext(run.name);
        run.perEntry += frequency * static_cast<double>(*n);
      }
    run.perEntry = entryFrequency > 0 ? run.perEntry / entryFrequency : 0;
    runs.push_back(std::move(run));
  }
  return runs;
}

/// Every machine function of `object` with a block map; none when it has no
/// code at all (a module without functions).
Result<std::vector<FunctionRun>> objectRuns(const llvm::object::ELFObjectFileBase& object) {
  auto disassembler = Disassembler::forTriple(object.makeTriple());
  if (!disassembler.ok())
    return disassembler.error();
  std::vector<FunctionRun> runs;
  uint64_t codeBytes = 0;
  for (const llvm::object::SectionRef& section : object.sections()) {
    if (!section.isText())
      continue;
    codeBytes += section.getSize();
    auto more = sectionRuns(object, section, **disassembler);
    if (!more.ok())
      return more.error();
    runs.insert(runs.end(), std::make_move_iterator(more->begin()),
                std::make_move_iterator(more->end()));
  }
  if (runs.empty() && codeBytes > 0)
    return makeError(ErrorCode::kParse, "it has no block map with block frequencies (compiled "
                                        "without -fbasic-block-address-map -mllvm "
                                        "-pgo-analysis-map=func-entry-count,bb-freq)");
  return runs;
}

} // namespace

std::vector<std::string> executedScoreArgs(bool /*cc1*/) {
  return {"-fbasic-block-address-map", "-mllvm", "-pgo-analysis-map=func-entry-count,bb-freq"};
}

Result<ModuleScore> executedEstimate(const std::filesystem::path& object) {
  auto fail = [&](Error error) {
    return error.withContext(fmt::format("object {}", object.string()));
  };
  auto buffer = llvm::MemoryBuffer::getFile(object.string(), /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    std::error_code ec = buffer.getError();
    return fail(Error(ec == std::errc::no_such_file_or_directory ? ErrorCode::kNotFound
                                                                 : ErrorCode::kIo,
                      fmt::format("cannot read it: {}", ec.message())));
  }
  auto file = llvm::object::ObjectFile::createObjectFile((*buffer)->getMemBufferRef());
  if (!file)
    return fail(Error(ErrorCode::kParse, message(file.takeError())));
  const auto* elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(file->get());
  if (elf == nullptr)
    return fail(Error(ErrorCode::kParse, "not an ELF object"));
  auto runs = objectRuns(*elf);
  if (!runs.ok())
    return fail(runs.error());
  bool profiled = false;
  for (const FunctionRun& run : *runs)
    profiled = profiled || run.entryCount > 0;
  ModuleScore score;
  for (const FunctionRun& run : *runs) {
    double weight = profiled ? static_cast<double>(run.entryCount) : 1.0;
    double value = weight * run.perEntry;
    score.total += value;
    score.contexts.emplace_back(run.name, value);
  }
  return score;
}

} // namespace mlgo::env
