//===- env/testing/fake_compiler.cc - a scripted stand-in for clang ---------===//
///
/// \file
/// A test program that speaks clang's side of the interactive protocol from
/// a recorded stream, and misbehaves on request. It accepts a clang-like
/// command line and uses only: the `...-interactive-channel-base=B` options
/// (channel i = the i-th in argv order), `-o OUT`, `-opt-record-file F`, and
/// the input after `-x ir`, which is a script (so a corpus module's .bc can be
/// a script):
///
///   mlgo-fake-compiler
///   stream <file>       replay this recorded stream (header and records) on
///                       the last channel named
///   streams <f0> <f1>.. instead: one recorded stream per channel (`-`: never
///                       open that channel); all are opened first, in order
///   order <c> <c> ...   with `streams`: the channel of each question in turn;
///                       a channel's records up to its next question go out
///                       when its turn comes, the rest of each stream at the end
///   object <file>       copy to OUT at the end
///   remarks <file>      copy to F at the end
///   answers <file>      append each answer as a line "<context> <id> <value>"
///                       ("<channel> <context> <id> <value>" with `streams`)
///   fault <kind> [N]    misbehave when observation N+1 has been sent, before
///                       reading its answer (or at the end if there are fewer):
///                         crash      raise SIGSEGV
///                         hang       sleep forever (pause)
///                         exit       exit with code 3
///                         garbage    write a line that is not a record
///                         spam       repeat the last observation forever
///                         never-open never touch the fifos (N ignored)
///                         never-open-hang   never touch the fifos, sleep forever
///                         double     (`streams`) also send the next turn's
///                                    question before reading this answer
///                         double-late  the same, once the `go` file exists
///   go <file>           double-late: the file whose existence lets the second
///                       question out (the test creates it; so the first one
///                       is surely read alone)
///   sent <file>         double, double-late: created once the second question
///                       is out (the test waits for it; no guessed sleeps)
///   exit <code>         exit code at the end (default 0)
///
/// Relative paths are relative to the script's directory. Anything it does
/// not understand is an error on stderr and exit code 2.
///
//===----------------------------------------------------------------------===//
#include "mlgo/protocol/stream_reader.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Script {
  fs::path stream, object, remarks, answers, go, sent;
  std::vector<fs::path> streams; ///< Empty path: a channel never opened.
  std::vector<size_t> order;
  std::string fault = "none";
  uint64_t faultAfter = 0;
  int exitCode = 0;
};

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "fake-compiler: %s\n", message.c_str());
  std::fflush(stderr);
  std::_Exit(2);
}

std::string readAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    die("cannot read " + path.string());
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

Script parseScript(const fs::path& path) {
  std::istringstream in(readAll(path));
  std::string line;
  if (!std::getline(in, line) || line != "mlgo-fake-compiler")
    die("error: " + path.string() + " is not a fake-compiler script (corrupt input)");
  Script script;
  auto resolve = [&](const std::string& p) { return path.parent_path() / p; };
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string key, value;
    words >> key >> value;
    if (key.empty())
      continue;
    if (key == "stream")
      script.stream = resolve(value);
    else if (key == "object")
      script.object = resolve(value);
    else if (key == "remarks")
      script.remarks = resolve(value);
    else if (key == "answers")
      script.answers = resolve(value);
    else if (key == "go")
      script.go = resolve(value);
    else if (key == "sent")
      script.sent = resolve(value);
    else if (key == "streams")
      for (std::string name = value; !name.empty(); name.clear(), words >> name)
        script.streams.push_back(name == "-" ? fs::path() : resolve(name));
    else if (key == "order")
      for (std::string c = value; !c.empty(); c.clear(), words >> c)
        script.order.push_back(std::stoul(c));
    else if (key == "exit")
      script.exitCode = std::stoi(value);
    else if (key == "fault") {
      script.fault = value;
      words >> script.faultAfter;
    } else
      die("unknown script line: " + line);
  }
  return script;
}

void copyFile(const fs::path& from, const fs::path& to) {
  if (from.empty() || to.empty())
    return;
  std::error_code ec;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec)
    die("cannot copy " + from.string() + " to " + to.string() + ": " + ec.message());
}

void writeAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0)
      die(std::string("write: ") + std::strerror(errno));
    data += n;
    size -= static_cast<size_t>(n);
  }
}

void readExactly(int fd, std::byte* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::read(fd, data, size);
    if (n == 0)
      die("the host closed the channel");
    if (n < 0)
      die(std::string("read: ") + std::strerror(errno));
    data += n;
    size -= static_cast<size_t>(n);
  }
}

void misbehave(const std::string& fault, int out) {
  if (fault == "crash") {
    ::signal(SIGSEGV, SIG_DFL);
    ::raise(SIGSEGV);
  } else if (fault == "hang") {
    for (;;)
      ::pause();
  } else if (fault == "exit") {
    std::fprintf(stderr, "fake-compiler: exiting early as scripted\n");
    std::_Exit(3);
  } else if (fault == "garbage") {
    const char junk[] = "this is not a record\n";
    writeAll(out, junk, sizeof junk - 1);
  }
}

/// Opens channel `base` as clang does: B.in for reading, then B.out for writing.
void openChannel(const std::string& base, int& in, int& out) {
  in = ::open((base + ".in").c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0)
    die("Cannot open inbound file " + base + ".in");
  out = ::open((base + ".out").c_str(), O_WRONLY | O_CLOEXEC);
  if (out < 0)
    die("Cannot open outbound file " + base + ".out");
}

/// The `spam` fault: after answering the current question, asks the same
/// one again under new ids forever (never returns).
[[noreturn]] void spamForever(int in, int out, std::vector<std::byte>& advice, int64_t id,
                              const std::string& lastObservation) {
  readExactly(in, advice.data(), advice.size());
  for (++id;; ++id) {
    std::string again = "{\"observation\":" + std::to_string(id) + "}\n" + lastObservation;
    writeAll(out, again.data(), again.size());
    readExactly(in, advice.data(), advice.size());
  }
}

/// Appends "CONTEXT ID VALUE" for an answer to the script's answers file.
void logAnswer(std::FILE* answers, const mlgo::protocol::StreamReader& reader, int64_t id,
               const std::vector<std::byte>& advice) {
  std::string value;
  mlgo::protocol::appendElementText(value, reader.header().advice->type(), advice.data(), 0);
  std::fprintf(answers, "%s %lld %s\n", reader.context().c_str(), static_cast<long long>(id),
               value.c_str());
  std::fflush(answers);
}

/// Replays the stream; returns after the last record.
void replay(const Script& script, const std::string& base) {
  std::string recorded = readAll(script.stream);
  int in = -1, out = -1;
  openChannel(base, in, out);
  std::FILE* answers = script.answers.empty() ? nullptr : std::fopen(script.answers.c_str(), "a");

  mlgo::protocol::StreamReader reader;
  reader.feed(recorded);
  reader.finish();
  mlgo::protocol::LogEvent event;
  uint64_t answered = 0;
  bool triggered = false;
  std::vector<std::byte> advice;
  std::string lastObservation;
  for (;;) {
    auto status = reader.next(event);
    if (!status.ok())
      die("bad recorded stream: " + status.error().message());
    if (*status != mlgo::protocol::ReadStatus::kEvent)
      break;
    std::string_view record(recorded.data() + event.offset, reader.offset() - event.offset);
    writeAll(out, record.data(), record.size());
    if (event.kind == mlgo::protocol::EventKind::kHeader)
      advice.resize(reader.header().advice ? reader.header().advice->byteSize() : 0);
    if (event.kind != mlgo::protocol::EventKind::kObservation)
      continue;
    lastObservation = std::string(record.substr(record.find('\n') + 1));
    if (!triggered && script.fault != "none" && answered == script.faultAfter) {
      triggered = true;
      if (script.fault == "spam")
        spamForever(in, out, advice, event.id, lastObservation);
      misbehave(script.fault, out);
    }
    readExactly(in, advice.data(), advice.size());
    if (answers != nullptr)
      logAnswer(answers, reader, event.id, advice);
    ++answered;
  }
  if (!triggered && script.fault != "none")
    misbehave(script.fault, out);
  if (answers != nullptr)
    std::fclose(answers);
  ::close(out);
  ::close(in);
}

/// One channel of a `streams` replay.
struct Player {
  std::string recorded;
  mlgo::protocol::StreamReader reader;
  int in = -1, out = -1;
  std::vector<std::byte> advice;
};

/// Writes `player`'s records up to and including its next question (in
/// `event`); false when none is left (then everything left is written).
bool playToQuestion(Player& player, mlgo::protocol::LogEvent& event) {
  for (;;) {
    auto status = player.reader.next(event);
    if (!status.ok())
      die("bad recorded stream: " + status.error().message());
    if (*status != mlgo::protocol::ReadStatus::kEvent)
      return false;
    std::string_view record(player.recorded.data() + event.offset,
                            player.reader.offset() - event.offset);
    writeAll(player.out, record.data(), record.size());
    if (event.kind == mlgo::protocol::EventKind::kHeader)
      player.advice.resize(player.reader.header().advice ? player.reader.header().advice->byteSize()
                                                         : 0);
    if (event.kind == mlgo::protocol::EventKind::kObservation)
      return true;
  }
}

Player& playerOf(std::vector<Player>& players, size_t channel) {
  if (channel >= players.size() || players[channel].out < 0)
    die("the order names channel " + std::to_string(channel) + ", which has no stream");
  return players[channel];
}

/// The `double` and `double-late` faults: `next`'s question goes out too,
/// for `double-late` once the `go` file exists; then the `sent` file is made.
void sendDouble(const Script& script, Player& next) {
  if (script.fault == "double-late") {
    if (script.go.empty())
      die("double-late needs a `go` file");
    for (int waited = 0; !fs::exists(script.go); ++waited) {
      if (waited > 30'000)
        die("no " + script.go.string() + " within 60 s");
      ::usleep(2'000);
    }
  }
  mlgo::protocol::LogEvent second;
  playToQuestion(next, second);
  if (!script.sent.empty())
    std::ofstream(script.sent).put('\n');
}

/// Plays the `streams` in the script's `order`.
void replayChannels(const Script& script, const std::vector<std::string>& bases) {
  if (script.streams.size() > bases.size())
    die("the script has more streams than the command has channels");
  std::vector<Player> players(script.streams.size());
  for (size_t i = 0; i < players.size(); ++i) {
    if (script.streams[i].empty())
      continue;
    players[i].recorded = readAll(script.streams[i]);
    players[i].reader.feed(players[i].recorded);
    players[i].reader.finish();
    openChannel(bases[i], players[i].in, players[i].out);
  }
  std::FILE* answers = script.answers.empty() ? nullptr : std::fopen(script.answers.c_str(), "a");
  mlgo::protocol::LogEvent event;
  bool triggered = false;
  for (size_t step = 0; step < script.order.size(); ++step) {
    Player& player = playerOf(players, script.order[step]);
    if (!playToQuestion(player, event))
      die("channel " + std::to_string(script.order[step]) + " has no question left");
    if (!triggered && script.fault != "none" && step == script.faultAfter) {
      triggered = true;
      bool twice = script.fault == "double" || script.fault == "double-late";
      if (twice && step + 1 < script.order.size())
        sendDouble(script, playerOf(players, script.order[step + 1]));
      misbehave(script.fault, player.out);
    }
    readExactly(player.in, player.advice.data(), player.advice.size());
    if (answers != nullptr) {
      std::string value;
      mlgo::protocol::appendElementText(value, player.reader.header().advice->type(),
                                        player.advice.data(), 0);
      std::fprintf(answers, "%zu %s %lld %s\n", script.order[step], player.reader.context().c_str(),
                   static_cast<long long>(event.id), value.c_str());
      std::fflush(answers);
    }
  }
  for (Player& player : players)
    if (player.out >= 0 && playToQuestion(player, event))
      die("a stream has more questions than the order names");
  if (!triggered && script.fault != "none")
    misbehave(script.fault, players.empty() ? -1 : players[0].out);
  if (answers != nullptr)
    std::fclose(answers);
  for (Player& player : players)
    for (int fd : {player.out, player.in})
      if (fd >= 0)
        ::close(fd);
}

} // namespace

int main(int argc, char** argv) {
  std::vector<std::string> bases;
  std::string output, remarks, input;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto pos = arg.find("-interactive-channel-base=");
    if (pos != std::string::npos)
      bases.push_back(arg.substr(pos + std::strlen("-interactive-channel-base=")));
    else if (arg == "-o" && i + 1 < argc)
      output = argv[++i];
    else if (arg == "-opt-record-file" && i + 1 < argc)
      remarks = argv[++i];
    else if (arg == "-x" && i + 2 < argc) {
      ++i;
      input = argv[++i];
    }
  }
  if (input.empty())
    die("no input (-x ir FILE)");
  Script script = parseScript(input);
  if (script.fault == "never-open-hang")
    for (;;)
      ::pause();
  if (script.fault != "never-open" && !script.streams.empty())
    replayChannels(script, bases);
  else if (script.fault != "never-open" && !script.stream.empty() && !bases.empty())
    replay(script, bases.back());
  copyFile(script.object, output);
  copyFile(script.remarks, remarks);
  return script.exitCode;
}
