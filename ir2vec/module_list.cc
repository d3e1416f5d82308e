//===- ir2vec/module_list.cc - which modules to read ----------------------===//
#include "mlgo/ir2vec/module_list.h"

#include <algorithm>

namespace mlgo::ir2vec {
namespace {

namespace fs = std::filesystem;

Status addDirectory(const fs::path& dir, std::vector<fs::path>& out) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (std::error_code fileEc; it->is_regular_file(fileEc) && it->path().extension() == ".bc" &&
                                !it->path().string().ends_with(".thinlto.bc"))
      found.push_back(it->path());
  if (ec)
    return makeError(ErrorCode::kIo, "{}: cannot list: {}", dir.string(), ec.message());
  std::sort(found.begin(), found.end());
  out.insert(out.end(), found.begin(), found.end());
  return Status::success();
}

} // namespace

Result<std::vector<fs::path>> resolveModules(const std::vector<fs::path>& inputs) {
  std::vector<fs::path> modules;
  for (const fs::path& input : inputs) {
    std::error_code ec;
    fs::file_status status = fs::status(input, ec);
    if (ec || !fs::exists(status))
      return makeError(ErrorCode::kNotFound, "{}: no such file or directory", input.string());
    if (!fs::is_directory(status)) {
      modules.push_back(input);
      continue;
    }
    if (Status added = addDirectory(input, modules); !added)
      return added.error();
  }
  if (modules.empty())
    return makeError(ErrorCode::kInvalidArgument, "no modules found in the given inputs");
  return modules;
}

} // namespace mlgo::ir2vec
