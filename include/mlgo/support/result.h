//===- mlgo/support/result.h - the project's error-as-value type -*- C++ -*-===//
///
/// \file
/// Errors inside mlgo-env's libraries are values: a function that can fail
/// returns `Result<T>` (or `Status` when there is no value), and the boundary
/// (CLI, server reply, test) decides what to do with the error. Library code
/// never exits and never lets an exception escape.
///
/// An `Error` carries a stable `ErrorCode` (the server maps it to a JSON-RPC
/// code) and a human message that names the problem; it is meant to be shown
/// to a user as is.
///
//===----------------------------------------------------------------------===//
#ifndef MLGO_SUPPORT_RESULT_H
#define MLGO_SUPPORT_RESULT_H

#include <fmt/format.h>

#include <cassert>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace mlgo {

/// Broad error categories; stable, because they reach agents as error codes.
enum class ErrorCode {
  kInvalidArgument, ///< Caller passed something malformed (bad flag, bad action).
  kParse,           ///< Malformed input data (stream, JSON, corpus files).
  kNotFound,        ///< A file, module, episode or program does not exist.
  kIo,              ///< An operating-system call failed.
  kTimeout,         ///< A deadline passed.
  kCompiler,        ///< The compiler failed, crashed or misbehaved.
  kUnsupported,     ///< The request is valid but this build/clang cannot do it.
  kBusy,            ///< A configured limit is reached (open episodes, queue); retry later.
  kInternal,        ///< A broken invariant of our own.
  kInterrupted,     ///< The caller asked a blocking call to stop (support/interrupt.h).
};

/// A failure: what category, and a message naming the problem.
class Error {
public:
  Error(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  /// Returns a copy whose message is prefixed with `context: `.
  [[nodiscard]] Error withContext(std::string_view context) const {
    return Error(code_, fmt::format("{}: {}", context, message_));
  }

private:
  ErrorCode code_;
  std::string message_;
};

/// Builds an Error with a fmt-formatted message.
template <typename... Args>
[[nodiscard]] Error makeError(ErrorCode code, fmt::format_string<Args...> format, Args&&... args) {
  return Error(code, fmt::format(format, std::forward<Args>(args)...));
}

/// Either a T or an Error. Check with `ok()` (or `if (result)`) before `*`.
template <typename T> class [[nodiscard]] Result {
public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(state_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(state_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(state_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const& {
    assert(!ok());
    return std::get<1>(state_);
  }
  Error&& error() && {
    assert(!ok());
    return std::get<1>(std::move(state_));
  }

private:
  std::variant<T, Error> state_;
};

/// Success or an Error, for operations without a value.
class [[nodiscard]] Status {
public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), failed_(true) {}

  static Status success() { return Status(); }

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const {
    assert(failed_);
    return error_;
  }

private:
  Error error_{ErrorCode::kInternal, {}};
  bool failed_ = false;
};

} // namespace mlgo

/// Evaluates `expr` (a Status or Result); returns its error from the enclosing
/// function if it failed.
#define MLGO_TRY(expr)                                                                             \
  do {                                                                                             \
    auto&& mlgo_try_result_ = (expr);                                                              \
    if (!mlgo_try_result_.ok())                                                                    \
      return std::move(mlgo_try_result_).error();                                                  \
  } while (false)

#endif // MLGO_SUPPORT_RESULT_H
