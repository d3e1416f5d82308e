//===- corpus/corpus_tools.cc - make and combine corpora ------------------===//
#include "mlgo/corpus/corpus_tools.h"

#include <algorithm>
#include <system_error>

namespace mlgo::corpus {

namespace fs = std::filesystem;

namespace {

Result<std::vector<fs::path>> findBitcode(const fs::path& inputDir) {
  std::error_code ec;
  std::vector<fs::path> files;
  fs::recursive_directory_iterator it(inputDir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code statusError;
    if (it->path().extension() == ".bc" && it->is_regular_file(statusError))
      files.push_back(it->path().lexically_relative(inputDir));
  }
  if (ec)
    return makeError(ErrorCode::kIo, "cannot walk '{}': {}", inputDir.string(), ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

bool isWithin(const fs::path& inner, const fs::path& outer) {
  fs::path relative = inner.lexically_relative(outer);
  return !relative.empty() && *relative.begin() != "..";
}

} // namespace

Result<CorpusDescription> makeCorpus(const fs::path& inputDir, const fs::path& outputDir,
                                     const std::vector<std::string>& defaultArgs) {
  std::error_code ec;
  if (!fs::is_directory(inputDir, ec))
    return makeError(ErrorCode::kNotFound, "input directory '{}' does not exist",
                     inputDir.string());
  fs::path input = fs::weakly_canonical(inputDir, ec);
  fs::path output = fs::weakly_canonical(fs::absolute(outputDir, ec), ec);
  if (ec)
    return makeError(ErrorCode::kIo, "cannot resolve '{}': {}", outputDir.string(), ec.message());
  if (isWithin(output, input))
    return makeError(ErrorCode::kInvalidArgument,
                     "output directory '{}' must not be inside the input directory '{}'",
                     outputDir.string(), inputDir.string());
  Result<std::vector<fs::path>> files = findBitcode(input);
  MLGO_TRY(files);
  if (files->empty())
    return makeError(ErrorCode::kNotFound, "no .bc files under '{}'", inputDir.string());

  CorpusDescription description;
  description.globalCommandOverride = defaultArgs;
  for (const fs::path& relative : *files) {
    fs::path target = output / relative;
    fs::create_directories(target.parent_path(), ec);
    if (!ec)
      fs::copy_file(input / relative, target, fs::copy_options::overwrite_existing, ec);
    if (ec)
      return makeError(ErrorCode::kIo, "cannot copy '{}' to '{}': {}", (input / relative).string(),
                       target.string(), ec.message());
    fs::path name = relative;
    name.replace_extension();
    description.modules.push_back(name.generic_string());
  }
  MLGO_TRY(writeDescription(output, description));
  return description;
}

Result<CorpusDescription> combineCorpora(const fs::path& rootDir) {
  std::error_code ec;
  if (!fs::is_directory(rootDir, ec))
    return makeError(ErrorCode::kNotFound, "root directory '{}' does not exist", rootDir.string());
  std::vector<fs::path> subdirs;
  for (fs::directory_iterator it(rootDir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    std::error_code statusError;
    if (it->is_directory(statusError) && fs::exists(it->path() / kDescriptionFileName, statusError))
      subdirs.push_back(it->path());
  }
  if (ec)
    return makeError(ErrorCode::kIo, "cannot list '{}': {}", rootDir.string(), ec.message());
  if (subdirs.empty())
    return makeError(ErrorCode::kNotFound, "no subdirectory of '{}' holds a {}", rootDir.string(),
                     kDescriptionFileName);
  std::sort(subdirs.begin(), subdirs.end());

  CorpusDescription combined;
  fs::path first;
  for (const fs::path& dir : subdirs) {
    Result<CorpusDescription> part = readDescription(dir);
    MLGO_TRY(part);
    if (first.empty()) {
      first = dir;
      combined.hasThinLto = part->hasThinLto;
      combined.globalCommandOverride = part->globalCommandOverride;
    } else if (part->hasThinLto != combined.hasThinLto ||
               part->globalCommandOverride != combined.globalCommandOverride) {
      return makeError(ErrorCode::kParse,
                       "corpora '{}' and '{}' differ by more than their modules (has_thinlto or "
                       "global_command_override); they cannot be combined",
                       first.string(), dir.string());
    }
    std::string prefix = dir.filename().string();
    for (const std::string& name : part->modules)
      combined.modules.push_back(prefix + "/" + name);
  }
  MLGO_TRY(writeDescription(rootDir, combined));
  return combined;
}

} // namespace mlgo::corpus
