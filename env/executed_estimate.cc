//===- env/executed_estimate.cc - instructions an object executes ----------===//
#include "mlgo/env/executed_estimate.h"

#include "mlgo/support/llvm_targets.h"

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
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

#include <map>
#include <memory>
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
  /// For `object`'s triple, CPU and features (kUnsupported when LLVM has
  /// none for its target).
  static Result<std::unique_ptr<Disassembler>>
  forObject(const llvm::object::ELFObjectFileBase& object) {
    support::ensureNativeTargets();
    llvm::Triple triple = object.makeTriple();
    std::string why;
    const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, why);
    if (target == nullptr)
      return makeError(ErrorCode::kUnsupported, "no disassembler for {}: {}", triple.str(), why);
    std::string features;
    if (auto found = object.getFeatures())
      features = found->getString();
    else
      llvm::consumeError(found.takeError());
    std::string cpu = object.tryGetCPUName().value_or("").str();
    auto d = std::unique_ptr<Disassembler>(new Disassembler);
    d->registers_.reset(target->createMCRegInfo(triple));
    if (d->registers_)
      d->asmInfo_.reset(target->createMCAsmInfo(*d->registers_, triple, llvm::MCTargetOptions()));
    d->subtarget_.reset(target->createMCSubtargetInfo(triple, cpu, features));
    if (!d->registers_ || !d->asmInfo_ || !d->subtarget_)
      return makeError(ErrorCode::kUnsupported, "no disassembler for {}", triple.str());
    d->context_ = std::make_unique<llvm::MCContext>(triple, d->asmInfo_.get(), d->registers_.get(),
                                                    d->subtarget_.get());
    d->decoder_.reset(target->createMCDisassembler(*d->subtarget_, *d->context_));
    if (!d->decoder_)
      return makeError(ErrorCode::kUnsupported, "no disassembler for {}", triple.str());
    return d;
  }

  /// Instructions in `bytes` (which begin at `address`); kParse naming the
  /// address of the first that does not decode.
  Result<uint64_t> count(llvm::ArrayRef<uint8_t> bytes, uint64_t address) const {
    uint64_t instructions = 0;
    llvm::MCInst inst;
    for (uint64_t at = 0; at < bytes.size();) {
      uint64_t size = 0;
      auto status = decoder_->getInstruction(inst, size, bytes.slice(at), address + at,
                                             llvm::nulls());
      // SoftFail: decodes, with an operand the architecture calls unpredictable.
      if (status == llvm::MCDisassembler::Fail || size == 0)
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

/// The function symbols' names by (section index, address). Of symbols at
/// one place, one with a size wins over one without (an alias keeps the
/// first name met).
using FunctionNames = std::map<std::pair<uint64_t, uint64_t>, std::string>;
FunctionNames functionNames(const llvm::object::ELFObjectFileBase& object) {
  FunctionNames names;
  std::map<std::pair<uint64_t, uint64_t>, bool> sized;
  for (const llvm::object::ELFSymbolRef symbol : object.symbols()) {
    auto type = valueOf(symbol.getType());
    auto in = valueOf(symbol.getSection());
    auto address = valueOf(symbol.getValue());
    auto name = valueOf(symbol.getName());
    if (type != llvm::object::SymbolRef::ST_Function || !in || *in == object.section_end() ||
        !address || !name)
      continue;
    std::pair<uint64_t, uint64_t> at{(*in)->getIndex(), *address};
    bool hasSize = symbol.getSize() > 0;
    auto [it, inserted] = sized.emplace(at, hasSize);
    if (inserted || (hasSize && !it->second)) {
      names[at] = name->str();
      it->second = it->second || hasSize;
    }
  }
  return names;
}

/// What one executable section's functions are read with.
struct SectionView {
  const llvm::object::ELFObjectFileBase& object;
  const llvm::object::SectionRef& section;
  llvm::ArrayRef<uint8_t> bytes;
  const FunctionNames& names;
  const Disassembler& disassembler;
};

/// `map`'s function: the instructions one entry executes.
Result<FunctionRun> functionRun(const SectionView& view, const BBAddrMap& map,
                                const PGOAnalysisMap& profile) {
  FunctionRun run;
  uint64_t sectionAddress = view.object.isRelocatableObject() ? 0 : view.section.getAddress();
  auto named = view.names.find({view.section.getIndex(), map.getFunctionAddress()});
  run.name = named != view.names.end()
                 ? named->second
                 : fmt::format("{}+{:#x}", valueOf(view.section.getName()).value_or("?").str(),
                               map.getFunctionAddress() - sectionAddress);
  if (!profile.FeatEnable.BBFreq || profile.BBEntries.size() != map.getNumBBEntries())
    return makeError(ErrorCode::kParse, "function {}: its block map has no block frequencies "
                                        "(compiled without -pgo-analysis-map=...,bb-freq)",
                     run.name);
  // Blocks in other sections (-fsplit-machine-functions, basic-block
  // sections) are placed by relocations this reader does not follow.
  if (map.getBBRanges().size() > 1)
    return makeError(ErrorCode::kUnsupported,
                     "function {} is split into {} ranges (-fsplit-machine-functions or "
                     "basic-block sections): the executed score reads unsplit functions only",
                     run.name, map.getBBRanges().size());
  run.entryCount = profile.FeatEnable.FuncEntryCount ? profile.FuncEntryCount : 0;
  // The first block of the first range is the function's entry.
  double entryFrequency = static_cast<double>(profile.BBEntries.front().BlockFreq.getFrequency());
  if (!(entryFrequency > 0))
    return makeError(ErrorCode::kParse, "function {}: its entry block has frequency 0", run.name);
  const BBAddrMap::BBRangeEntry& range = map.getBBRanges().front();
  for (size_t k = 0; k < range.BBEntries.size(); ++k) {
    const BBAddrMap::BBEntry& block = range.BBEntries[k];
    uint64_t begin = range.BaseAddress + block.Offset - sectionAddress;
    if (begin > view.bytes.size() || block.Size > view.bytes.size() - begin)
      return makeError(ErrorCode::kParse, "a block of {} lies outside its section", run.name);
    auto n = view.disassembler.count(view.bytes.slice(begin, block.Size), begin);
    if (!n.ok())
      return n.error().withContext(run.name);
    double frequency = static_cast<double>(profile.BBEntries[k].BlockFreq.getFrequency());
    run.perEntry += frequency / entryFrequency * static_cast<double>(*n);
  }
  return run;
}

/// The machine functions of one executable section.
Result<std::vector<FunctionRun>> sectionRuns(const SectionView& view) {
  std::vector<PGOAnalysisMap> profiles;
  auto maps = view.object.readBBAddrMap(static_cast<unsigned>(view.section.getIndex()),
                                        &profiles);
  if (!maps)
    return makeError(ErrorCode::kParse, "its block map: {}", message(maps.takeError()));
  std::vector<FunctionRun> runs;
  for (size_t i = 0; i < maps->size(); ++i) {
    auto run = functionRun(view, (*maps)[i], profiles[i]);
    if (!run.ok())
      return run.error();
    runs.push_back(std::move(*run));
  }
  return runs;
}

/// Every machine function of `object` with a block map; none when it has no
/// code at all (a module without functions).
Result<std::vector<FunctionRun>> objectRuns(const llvm::object::ELFObjectFileBase& object) {
  std::unique_ptr<Disassembler> disassembler; // Made for the first section with code.
  FunctionNames names = functionNames(object);
  std::vector<FunctionRun> runs;
  for (const llvm::object::SectionRef& section : object.sections()) {
    if (!section.isText() || section.getSize() == 0)
      continue;
    if (!disassembler) {
      auto made = Disassembler::forObject(object);
      if (!made.ok())
        return made.error();
      disassembler = std::move(*made);
    }
    auto contents = section.getContents();
    if (!contents)
      return makeError(ErrorCode::kParse, "a section's bytes: {}", message(contents.takeError()));
    llvm::ArrayRef<uint8_t> bytes(reinterpret_cast<const uint8_t*>(contents->data()),
                                  contents->size());
    auto more = sectionRuns({object, section, bytes, names, *disassembler});
    if (!more.ok())
      return more.error();
    runs.insert(runs.end(), std::make_move_iterator(more->begin()),
                std::make_move_iterator(more->end()));
  }
  if (runs.empty() && disassembler)
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
