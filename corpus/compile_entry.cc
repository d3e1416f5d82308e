//===- corpus/compile_entry.cc - compile_commands.json entries ------------===//
///
/// \file
/// The database half of compile_entry.h: shell words, response files and
/// entries (the objects they write: compile_args.cc).
///
//===----------------------------------------------------------------------===//
#include "mlgo/corpus/compile_entry.h"

#include "file_util.h"

#include <llvm/Support/Error.h>
#include <llvm/Support/JSON.h>

namespace mlgo::corpus {

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

Status expandInto(std::vector<std::string>& out, std::vector<std::string> args,
                  const fs::path& directory, int depth) {
  for (std::string& arg : args) {
    if (arg.size() < 2 || arg.front() != '@') {
      out.push_back(std::move(arg));
      continue;
    }
    if (depth >= kMaxResponseFileDepth)
      return makeError(ErrorCode::kInvalidArgument,
                       "response file '{}' is nested more than {} levels deep (does it include "
                       "itself?)",
                       arg.substr(1), kMaxResponseFileDepth);
    fs::path path = (directory / arg.substr(1)).lexically_normal();
    Result<std::string> contents = detail::readFile(path, "response file");
    MLGO_TRY(contents);
    // Like clang-22's driver: nested response files are relative to the
    // working directory too, not to the file naming them.
    MLGO_TRY(expandInto(out, splitShellWords(*contents), directory, depth + 1));
  }
  return Status::success();
}

} // namespace

Result<std::vector<std::string>> expandResponseFiles(std::vector<std::string> args,
                                                     const fs::path& directory) {
  std::vector<std::string> out;
  out.reserve(args.size());
  MLGO_TRY(expandInto(out, std::move(args), directory, 0));
  return out;
}

namespace {

Result<std::vector<std::string>> entryArguments(const llvm::json::Object& entry,
                                                std::string_view where) {
  if (const llvm::json::Array* array = entry.getArray("arguments")) {
    std::vector<std::string> args;
    args.reserve(array->size());
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

Result<CompileEntry> parseEntry(const llvm::json::Value& value, std::size_t index,
                                std::string_view source) {
  std::string where = fmt::format("{}: entry {}", source, index);
  const llvm::json::Object* object = value.getAsObject();
  if (!object)
    return makeError(ErrorCode::kParse, "{}: not a JSON object", where);
  std::optional<llvm::StringRef> directory = object->getString("directory");
  if (!directory)
    return makeError(ErrorCode::kParse, "{}: missing the 'directory' string", where);
  Result<std::vector<std::string>> args = entryArguments(*object, where);
  MLGO_TRY(args);
  if (args->empty())
    return makeError(ErrorCode::kParse, "{}: the command is empty", where);

  CompileEntry entry;
  entry.index = index;
  std::error_code ec;
  entry.directory = fs::absolute(fs::path(directory->str()), ec).lexically_normal();
  if (ec)
    entry.directory = fs::path(directory->str()).lexically_normal();
  std::string file = object->getString("file").value_or("").str();
  entry.file = file;
  fs::path shown = file.empty() ? fs::path(where) : entry.directory / file;

  Result<std::vector<std::string>> expanded =
      expandResponseFiles(std::move(*args), entry.directory);
  if (!expanded) {
    entry.issue = ObjectIssue{shown, ObjectProblem::kBadResponseFile,
                              fmt::format("{}: {}", where, expanded.error().message())};
    return entry;
  }
  entry.args = std::move(*expanded);
  std::string why;
  entry.objects = objectOutputs(entry.args, entry.directory,
                                object->getString("output").value_or("").str(), file, &why);
  if (entry.objects.empty())
    entry.issue = ObjectIssue{shown, ObjectProblem::kNoOutputInCommand,
                              fmt::format("{} ({}): not a compile to an object file: {}", where,
                                          file.empty() ? "no file" : file, why)};
  return entry;
}

} // namespace

Result<std::vector<CompileEntry>> parseCompileCommands(std::string_view json,
                                                       std::string_view source) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(llvm::StringRef(json));
  if (!parsed)
    return makeError(ErrorCode::kParse, "{}: malformed JSON: {}", source,
                     llvm::toString(parsed.takeError()));
  const llvm::json::Array* entries = parsed->getAsArray();
  if (!entries)
    return makeError(ErrorCode::kParse, "{}: a compilation database must be a JSON array", source);
  std::vector<CompileEntry> result;
  result.reserve(entries->size());
  for (std::size_t i = 0; i < entries->size(); ++i) {
    Result<CompileEntry> entry = parseEntry((*entries)[i], i, source);
    MLGO_TRY(entry);
    result.push_back(std::move(*entry));
  }
  return result;
}

} // namespace mlgo::corpus
