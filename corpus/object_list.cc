//===- corpus/object_list.cc - which objects to extract -------------------===//
#include "object_list.h"

#include "file_util.h"

#include <llvm/Support/Error.h>
#include <llvm/Support/JSON.h>

#include <algorithm>
#include <system_error>
#include <unordered_set>

namespace mlgo::corpus::detail {

namespace fs = std::filesystem;

std::vector<std::string> splitShellWords(std::string_view command) {
  std::vector<std::string> words;
  std::string word;
  bool inWord = false;
  char quote = 0;
  for (std::size_t i = 0; i < command.size(); ++i) {
    char c = command[i];
    if (quote == '\'') {
      if (c == '\'')
        quote = 0;
      else
        word.push_back(c);
    } else if (quote == '"') {
      if (c == '"')
        quote = 0;
      else if (c == '\\' && i + 1 < command.size() &&
               std::string_view("\"\\$`").find(command[i + 1]) != std::string_view::npos)
        word.push_back(command[++i]);
      else
        word.push_back(c);
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (inWord)
        words.push_back(std::move(word));
      word.clear();
      inWord = false;
    } else {
      inWord = true;
      if (c == '\'' || c == '"')
        quote = c;
      else if (c == '\\' && i + 1 < command.size())
        word.push_back(command[++i]);
      else
        word.push_back(c);
    }
  }
  if (inWord)
    words.push_back(std::move(word));
  return words;
}

namespace {

/// The value of `-o` in `args` (both `-o x` and `-ox`), if any.
std::optional<std::string> outputOf(const std::vector<std::string>& args) {
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "-o" && i + 1 < args.size())
      return args[i + 1];
    if (args[i].size() > 2 && args[i].starts_with("-o"))
      return args[i].substr(2);
  }
  return std::nullopt;
}

/// Names `object` relative to `base`; an issue if it leaves `base`.
ObjectJob makeJob(const fs::path& givenBase, const fs::path& object) {
  std::error_code ec;
  fs::path base = fs::absolute(givenBase, ec).lexically_normal();
  if (ec)
    base = givenBase.lexically_normal();
  ObjectJob job;
  job.object = (base / object).lexically_normal();
  fs::path relative = job.object.lexically_relative(base);
  std::string name = relative.generic_string();
  if (relative.empty() || !isSafeRelativeName(name)) {
    job.issue = ObjectIssue{job.object, ObjectProblem::kBadName,
                            fmt::format("object '{}' is not inside its base directory '{}'; "
                                        "cannot name it as a module",
                                        job.object.string(), base.string())};
    return job;
  }
  job.name = std::move(name);
  return job;
}

Result<std::vector<std::string>> entryArguments(const llvm::json::Object& entry,
                                                std::string_view where) {
  if (const llvm::json::Array* array = entry.getArray("arguments")) {
    std::vector<std::string> args;
    for (const llvm::json::Value& value : *array) {
      std::optional<llvm::StringRef> arg = value.getAsString();
      if (!arg)
        return makeError(ErrorCode::kParse, "{}: 'arguments' must hold strings", where);
      args.push_back(arg->str());
    }
    return args;
  }
  if (std::optional<llvm::StringRef> command = entry.getString("command"))
    return splitShellWords(*command);
  return makeError(ErrorCode::kParse, "{}: the entry has neither 'arguments' nor 'command'", where);
}

} // namespace

Result<std::vector<ObjectJob>>
objectsFromCompileCommands(std::string_view json, std::string_view source,
                           const std::optional<fs::path>& objBaseDir) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(llvm::StringRef(json));
  if (!parsed)
    return makeError(ErrorCode::kParse, "{}: malformed JSON: {}", source,
                     llvm::toString(parsed.takeError()));
  const llvm::json::Array* entries = parsed->getAsArray();
  if (!entries)
    return makeError(ErrorCode::kParse, "{}: a compilation database must be a JSON array", source);
  std::vector<ObjectJob> jobs;
  jobs.reserve(entries->size());
  for (std::size_t i = 0; i < entries->size(); ++i) {
    std::string where = fmt::format("{}: entry {}", source, i);
    const llvm::json::Object* entry = (*entries)[i].getAsObject();
    if (!entry)
      return makeError(ErrorCode::kParse, "{}: not a JSON object", where);
    std::optional<llvm::StringRef> directory = entry->getString("directory");
    if (!directory)
      return makeError(ErrorCode::kParse, "{}: missing the 'directory' string", where);
    Result<std::vector<std::string>> args = entryArguments(*entry, where);
    MLGO_TRY(args);
    std::optional<std::string> output = outputOf(*args);
    fs::path base = objBaseDir ? *objBaseDir : fs::path(directory->str());
    if (!output) {
      ObjectJob job;
      job.object = entry->getString("file").value_or("").str();
      job.issue = ObjectIssue{job.object, ObjectProblem::kNoOutputInCommand,
                              fmt::format("{}: the command has no -o; not a compile to an "
                                          "object file",
                                          where)};
      jobs.push_back(std::move(job));
      continue;
    }
    jobs.push_back(makeJob(base, *output));
  }
  return jobs;
}

Result<std::vector<ObjectJob>> objectsFromDirectory(const fs::path& dir,
                                                    const std::optional<fs::path>& objBaseDir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return makeError(ErrorCode::kNotFound,
                     "input directory '{}' does not exist or is not a "
                     "directory",
                     dir.string());
  std::vector<fs::path> objects;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code statusError;
    if (it->path().extension() == ".o" && it->is_regular_file(statusError))
      objects.push_back(it->path());
  }
  if (ec)
    return makeError(ErrorCode::kIo, "cannot walk input directory '{}': {}", dir.string(),
                     ec.message());
  std::sort(objects.begin(), objects.end());
  fs::path base = objBaseDir ? *objBaseDir : dir;
  std::vector<ObjectJob> jobs;
  jobs.reserve(objects.size());
  for (const fs::path& object : objects)
    jobs.push_back(makeJob(base, object));
  return jobs;
}

void markDuplicates(std::vector<ObjectJob>& jobs) {
  std::unordered_set<std::string> seen;
  for (ObjectJob& job : jobs) {
    if (job.issue || seen.insert(job.name).second)
      continue;
    job.issue = ObjectIssue{job.object, ObjectProblem::kDuplicate,
                            fmt::format("'{}' gives module name '{}', already taken by an "
                                        "earlier object",
                                        job.object.string(), job.name)};
  }
}

} // namespace mlgo::corpus::detail
