//===- corpus/object_list.cc - which objects to extract -------------------===//
#include "object_list.h"

#include "compile_entry.h"
#include "file_util.h"

#include <algorithm>
#include <system_error>
#include <unordered_map>

namespace mlgo::corpus::detail {

namespace fs = std::filesystem;

namespace {

fs::path absoluteNormal(const fs::path& path) {
  std::error_code ec;
  fs::path absolute = fs::absolute(path, ec);
  return (ec ? path : absolute).lexically_normal();
}

/// `object` (absolute, normalised) relative to `base`, or empty if it is
/// not inside `base`.
std::string nameInside(const fs::path& base, const fs::path& object) {
  fs::path relative = object.lexically_relative(base);
  std::string name = relative.generic_string();
  return relative.empty() || !isSafeRelativeName(name) ? std::string() : name;
}

/// Names `object` relative to `givenBase`; an issue if it leaves the base.
ObjectJob makeJob(const fs::path& givenBase, const fs::path& object, std::string_view hint) {
  fs::path base = absoluteNormal(givenBase);
  ObjectJob job;
  job.object = (base / object).lexically_normal();
  job.name = nameInside(base, job.object);
  if (job.name.empty())
    job.issue = ObjectIssue{job.object, ObjectProblem::kBadName,
                            fmt::format("object '{}' is not inside '{}'; cannot name it as a "
                                        "module{}",
                                        job.object.string(), base.string(), hint)};
  return job;
}

} // namespace

fs::path commonRoot(const std::vector<fs::path>& paths) {
  if (paths.empty())
    return {};
  fs::path root = paths.front().parent_path();
  for (const fs::path& path : paths) {
    fs::path parent = path.parent_path();
    fs::path shared;
    auto a = root.begin();
    auto b = parent.begin();
    for (; a != root.end() && b != parent.end() && *a == *b; ++a, ++b)
      shared /= *a;
    root = shared;
  }
  return root.empty() ? fs::path("/") : root;
}

Result<ObjectList> objectsFromCompileCommands(std::string_view json, std::string_view source,
                                              const std::optional<fs::path>& objBaseDir) {
  Result<std::vector<CompileEntry>> entries = parseCompileCommands(json, source);
  MLGO_TRY(entries);
  ObjectList list;
  list.jobs.resize(entries->size());
  std::vector<std::size_t> outside; // jobs whose object is outside its entry's directory
  for (std::size_t i = 0; i < entries->size(); ++i) {
    CompileEntry& entry = (*entries)[i];
    ObjectJob& job = list.jobs[i];
    if (entry.issue) {
      job.object = entry.issue->object;
      job.issue = std::move(entry.issue);
      continue;
    }
    if (objBaseDir) {
      job = makeJob(*objBaseDir, *entry.object, "");
      continue;
    }
    job.object = *entry.object;
    job.name = nameInside(entry.directory, job.object);
    if (job.name.empty())
      outside.push_back(i);
  }
  if (outside.empty())
    return list;
  std::vector<fs::path> objects;
  for (std::size_t i : outside)
    objects.push_back(list.jobs[i].object);
  fs::path root = commonRoot(objects);
  for (std::size_t i : outside)
    list.jobs[i] = makeJob(root, list.jobs[i].object, "; pass --obj_base_dir");
  list.notes.push_back(fmt::format(
      "{} of {} objects are outside their entry's directory; they are named relative to their "
      "common root {} (--obj_base_dir=DIR names every object relative to DIR instead)",
      outside.size(), entries->size(), root.string()));
  return list;
}

Result<ObjectList> objectsFromDirectory(const fs::path& dir,
                                        const std::optional<fs::path>& objBaseDir,
                                        std::string_view suffix, std::string_view stripSuffix) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return makeError(ErrorCode::kNotFound,
                     "input directory '{}' does not exist or is not a "
                     "directory",
                     dir.string());
  std::vector<fs::path> objects;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::string file = it->path().filename().string();
    std::error_code statusError;
    if (file.size() > suffix.size() && file.ends_with(suffix) && it->is_regular_file(statusError))
      objects.push_back(it->path());
  }
  if (ec)
    return makeError(ErrorCode::kIo, "cannot walk input directory '{}': {}", dir.string(),
                     ec.message());
  std::sort(objects.begin(), objects.end());
  fs::path base = objBaseDir ? *objBaseDir : dir;
  ObjectList list;
  list.jobs.reserve(objects.size());
  for (fs::path& object : objects) {
    std::string path = object.string();
    if (!stripSuffix.empty() && path.ends_with(stripSuffix))
      object = path.substr(0, path.size() - stripSuffix.size());
    list.jobs.push_back(
        makeJob(base, absoluteNormal(object), objBaseDir ? "" : "; pass --obj_base_dir"));
  }
  return list;
}

void markDuplicates(std::vector<ObjectJob>& jobs) {
  std::unordered_map<std::string, std::size_t> byObject;
  std::unordered_map<std::string, std::size_t> byName;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    ObjectJob& job = jobs[i];
    if (job.issue)
      continue;
    if (auto [it, fresh] = byObject.emplace(job.object.string(), i); !fresh) {
      job.issue = ObjectIssue{job.object, ObjectProblem::kDuplicate,
                              fmt::format("'{}' is written by more than one command (inputs {} "
                                          "and {}); extracted once",
                                          job.object.string(), it->second, i)};
      continue;
    }
    if (auto [it, fresh] = byName.emplace(job.name, i); !fresh)
      job.issue =
          ObjectIssue{job.object, ObjectProblem::kDuplicate,
                      fmt::format("'{}' gives module name '{}', already taken by '{}'",
                                  job.object.string(), job.name, jobs[it->second].object.string())};
  }
}

} // namespace mlgo::corpus::detail
