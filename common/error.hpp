// SPDX-License-Identifier: Apache-2.0
// Error types shared by every fabricbench component, and the helpers that render them.
#pragma once

#include <exception>
#include <stdexcept>
#include <string>

namespace fabricbench {

/// Any failure the suite reports; messages are written for the person at the terminal.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A bad flag, file or value given by the user: the executable exits with code 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

/// A wait (collective, peer, device) that outlived its deadline.
class TimeoutError : public Error {
 public:
  using Error::Error;
};

/// A failure whose message was printed already (before a teardown that might block): the one
/// place that stops exceptions only exits with `code`.
class ReportedError : public Error {
 public:
  explicit ReportedError(int code) : Error("reported already"), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

/// Exit codes of every fabricbench executable.
enum ExitCode : int {
  kExitOk = 0,
  kExitWrongResults = 1,  ///< the run finished but the data check found wrong elements
  kExitUsage = 2,         ///< bad flags, sizes or files; nothing was measured or written
  kExitFailure = 3,       ///< runtime failure: device, peer, timeout
};

/// "outer: inner: innermost" for an exception and everything nested inside it.
std::string describe(const std::exception& e);

/// "" when `work` succeeds; when it fails and `tolerated`, its error's description (a setting the
/// library refuses, in a sweep that goes on past it). A UsageError, or any error not tolerated,
/// is thrown on.
template <class Work>
std::string error_of(bool tolerated, const Work& work) {
  try {
    work();
    return {};
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    if (!tolerated) throw;
    return describe(e);
  }
}

/// Throws `what` with the exception in flight nested inside it; use in catch blocks to add context.
[[noreturn]] void rethrow_with_context(const std::string& what);

}  // namespace fabricbench
