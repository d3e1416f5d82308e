//===- corpus/corpus.cc - a training corpus on disk -----------------------===//
#include "mlgo/corpus/corpus.h"

#include "mlgo/corpus/command_line.h"
#include "mlgo/corpus/description.h"

#include "file_util.h"

#include <algorithm>
#include <numeric>
#include <system_error>

#ifndef MLGO_CORPUS_BUILD_DIR
#error "MLGO_CORPUS_BUILD_DIR must be defined by the build"
#endif

namespace mlgo::corpus {

namespace fs = std::filesystem;

namespace {

Result<fs::path> canonicalRoot(const fs::path& root) {
  std::error_code ec;
  fs::path absolute = fs::absolute(root, ec);
  if (ec)
    return makeError(ErrorCode::kIo, "cannot resolve corpus directory '{}': {}", root.string(),
                     ec.message());
  if (!fs::exists(absolute, ec))
    return makeError(ErrorCode::kNotFound, "corpus directory '{}' does not exist", root.string());
  if (!fs::is_directory(absolute, ec))
    return makeError(ErrorCode::kInvalidArgument, "corpus path '{}' is not a directory",
                     root.string());
  fs::path canonical = fs::canonical(absolute, ec);
  if (ec)
    return makeError(ErrorCode::kIo, "cannot resolve corpus directory '{}': {}", root.string(),
                     ec.message());
  return canonical;
}

/// `<root>/<name><suffix>`, refusing names or symlinks that lead out of root.
Result<fs::path> memberPath(const fs::path& root, const std::string& name,
                            std::string_view suffix) {
  fs::path path = root / name;
  path += suffix;
  if (!detail::resolvesInside(root, path))
    return makeError(ErrorCode::kInvalidArgument,
                     "module '{}': '{}' resolves outside the corpus directory '{}' (through a "
                     "symlink); refusing to read it",
                     name, path.string(), root.string());
  return path;
}

Result<std::uint64_t> fileSize(const fs::path& path, std::string_view what,
                               const std::string& module) {
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status))
    return makeError(ErrorCode::kNotFound, "module '{}': {} '{}' does not exist", module, what,
                     path.string());
  if (!fs::is_regular_file(status))
    return makeError(ErrorCode::kIo, "module '{}': {} '{}' is not a regular file", module, what,
                     path.string());
  std::uintmax_t size = fs::file_size(path, ec);
  if (ec)
    return makeError(ErrorCode::kIo, "module '{}': cannot read the size of '{}': {}", module,
                     path.string(), ec.message());
  return static_cast<std::uint64_t>(size);
}

Result<ModuleSpec> loadModule(const fs::path& root, const CorpusDescription& description,
                              const std::string& name) {
  if (!detail::isSafeRelativeName(name))
    return makeError(ErrorCode::kInvalidArgument,
                     "module name '{}' is not a plain relative path (it must not be empty or "
                     "absolute, or contain '.', '..' or empty components)",
                     name);
  ModuleSpec module;
  module.name = name;
  Result<fs::path> bitcode = memberPath(root, name, ".bc");
  MLGO_TRY(bitcode);
  module.bitcodePath = std::move(*bitcode);
  Result<std::uint64_t> size = fileSize(module.bitcodePath, "bitcode file", name);
  MLGO_TRY(size);
  module.bitcodeSize = *size;

  if (description.globalCommandOverride) {
    module.args = *description.globalCommandOverride;
    module.argsFromOverride = true;
  } else {
    Result<fs::path> cmdPath = memberPath(root, name, ".cmd");
    MLGO_TRY(cmdPath);
    Result<std::string> contents = detail::readFile(*cmdPath, "module command file");
    MLGO_TRY(contents);
    Result<std::vector<std::string>> args = parseCommandFile(*contents, cmdPath->string());
    MLGO_TRY(args);
    module.args = std::move(*args);
  }

  if (description.hasThinLto) {
    Result<fs::path> index = memberPath(root, name, ".thinlto.bc");
    MLGO_TRY(index);
    MLGO_TRY(fileSize(*index,
                      "ThinLTO index (the corpus has has_thinlto; the link makes it with "
                      "-Wl,--thinlto-emit-index-files)",
                      name));
    module.thinLtoIndexPath = std::move(*index);
  }
  return module;
}

} // namespace

Result<Corpus> Corpus::open(const fs::path& root) {
  Result<fs::path> canonical = canonicalRoot(root);
  MLGO_TRY(canonical);
  Result<CorpusDescription> description = readDescription(*canonical);
  MLGO_TRY(description);

  fs::path descriptionPath = *canonical / kDescriptionFileName;
  if (description->modules.empty())
    return makeError(ErrorCode::kParse,
                     "{}: 'modules' is empty; a corpus needs at least one "
                     "module",
                     descriptionPath.string());
  if (description->globalCommandOverride &&
      std::any_of(description->globalCommandOverride->begin(),
                  description->globalCommandOverride->end(), [](const std::string& arg) {
                    return arg.find(kUnspecifiedOverride) != std::string::npos;
                  }))
    return makeError(ErrorCode::kParse,
                     "{}: 'global_command_override' still holds the \"<UNSPECIFIED>\" "
                     "placeholder; replace it with the clang arguments to compile every module "
                     "with (e.g. [\"-O2\", \"-c\"]) or remove the key to use the .cmd files",
                     descriptionPath.string());

  Corpus corpus;
  corpus.root_ = *canonical;
  corpus.hasThinLto_ = description->hasThinLto;
  corpus.hasOverride_ = description->globalCommandOverride.has_value();
  corpus.modules_.reserve(description->modules.size());
  for (const std::string& name : description->modules) {
    if (!corpus.index_.emplace(name, corpus.modules_.size()).second)
      return makeError(ErrorCode::kParse, "{}: module '{}' is listed twice",
                       descriptionPath.string(), name);
    Result<ModuleSpec> module = loadModule(corpus.root_, *description, name);
    if (!module)
      return std::move(module).error().withContext(
          fmt::format("corpus '{}'", corpus.root_.string()));
    corpus.modules_.push_back(std::move(*module));
  }
  return corpus;
}

Result<const ModuleSpec*> Corpus::find(std::string_view name) const {
  if (auto it = index_.find(std::string(name)); it != index_.end())
    return &modules_[it->second];
  return makeError(ErrorCode::kNotFound, "module '{}' is not in the corpus '{}'", name,
                   root_.string());
}

std::uint64_t Corpus::totalBitcodeBytes() const {
  return std::accumulate(
      modules_.begin(), modules_.end(), std::uint64_t{0},
      [](std::uint64_t sum, const ModuleSpec& m) { return sum + m.bitcodeSize; });
}

Result<fs::path> defaultDemoCorpusDir(std::string_view variant) {
  if (variant != "Oz" && variant != "O2")
    return makeError(ErrorCode::kInvalidArgument,
                     "unknown demo corpus variant '{}' (expected \"Oz\" or \"O2\")", variant);
  return fs::path(MLGO_CORPUS_BUILD_DIR) / fmt::format("demo-{}", variant);
}

} // namespace mlgo::corpus
