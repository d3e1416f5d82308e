//===- corpus/object_list.cc - which objects to extract -------------------===//
#include "object_list.h"

#include "file_util.h"

#include <algorithm>
#include <system_error>
#include <unordered_map>

namespace mlgo::corpus {
namespace detail {

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

ObjectList objectsFromEntries(const std::vector<CompileEntry>& entries,
                              const std::optional<fs::path>& objBaseDir) {
  ObjectList list;
  std::vector<std::size_t> outside; // jobs whose object is outside its entry's directory
  for (const CompileEntry& entry : entries) {
    if (entry.issue) {
      ObjectJob& job = list.jobs.emplace_back();
      job.object = entry.issue->object;
      job.issue = entry.issue;
      job.entry = entry.index;
      continue;
    }
    for (std::size_t k = 0; k < entry.objects.size(); ++k) {
      const fs::path& object = entry.objects[k].object;
      ObjectJob& job = list.jobs.emplace_back();
      if (objBaseDir)
        job = makeJob(*objBaseDir, object, "");
      else
        job.object = object;
      job.entry = entry.index;
      job.output = k;
      if (objBaseDir)
        continue;
      job.name = nameInside(entry.directory, job.object);
      if (job.name.empty())
        outside.push_back(list.jobs.size() - 1);
    }
  }
  if (outside.empty())
    return list;
  std::vector<fs::path> objects;
  for (std::size_t i : outside)
    objects.push_back(list.jobs[i].object);
  fs::path root = commonRoot(objects);
  for (std::size_t i : outside) {
    ObjectJob named = makeJob(root, list.jobs[i].object, "; pass --obj_base_dir");
    list.jobs[i].name = std::move(named.name);
    list.jobs[i].issue = std::move(named.issue);
  }
  list.notes.push_back(fmt::format(
      "{} of {} objects are outside their entry's directory; they are named relative to their "
      "common root {} (--obj_base_dir=DIR names every object relative to DIR instead)",
      outside.size(), list.jobs.size(), root.string()));
  return list;
}

Result<ObjectList> objectsFromCompileCommands(std::string_view json, std::string_view source,
                                              const std::optional<fs::path>& objBaseDir) {
  Result<std::vector<CompileEntry>> entries = parseCompileCommands(json, source);
  MLGO_TRY(entries);
  return objectsFromEntries(*entries, objBaseDir);
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

} // namespace detail

Result<std::vector<ModuleCompile>> moduleCompiles(std::string_view json, std::string_view source) {
  Result<std::vector<CompileEntry>> entries = parseCompileCommands(json, source);
  MLGO_TRY(entries);
  detail::ObjectList list = detail::objectsFromEntries(*entries, std::nullopt);
  detail::markDuplicates(list.jobs);
  std::vector<ModuleCompile> compiles;
  for (detail::ObjectJob& job : list.jobs) {
    const CompileEntry& entry = (*entries)[job.entry];
    bool duplicate = job.issue && job.issue->problem == ObjectProblem::kDuplicate;
    if (entry.objects.empty() || (job.issue && !duplicate))
      continue;
    compiles.push_back({std::move(job.name), job.object, entry.directory,
                        recompileArguments(entry.args, entry.objects[job.output].sourceArg),
                        duplicate});
  }
  return compiles;
}

} // namespace mlgo::corpus
