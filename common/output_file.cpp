// SPDX-License-Identifier: Apache-2.0
#include "common/output_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/error.hpp"

namespace fabricbench {
namespace {

std::string system_error_text(int err) { return std::strerror(err); }

void write_all(int fd, std::string_view text, const std::string& path) {
  while (!text.empty()) {
    const ssize_t written = ::write(fd, text.data(), text.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      throw Error(fmt::format("writing {} failed: {}", path, system_error_text(errno)));
    }
    text.remove_prefix(static_cast<std::size_t>(written));
  }
}

int open_for_write(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(fmt::format("cannot create {}: {}", path, system_error_text(errno)));
  return fd;
}

// The signal handler may only touch fixed storage: a few paths, written before any signal.
constexpr std::size_t kMaxPartialFiles = 4;
constexpr std::size_t kMaxPathLength = 1024;
std::array<std::array<char, kMaxPathLength>, kMaxPartialFiles> g_partial_paths{};
volatile std::sig_atomic_t g_partial_count = 0;

void write_stderr(const char* text) {
  const ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

extern "C" void on_interrupt(int signal_number) {
  // Only a rank that writes files has something to say; the others die quietly, so a launcher's
  // SIGTERM to the peers of a failed rank adds no noise.
  if (g_partial_count > 0) {
    write_stderr(signal_number == SIGINT ? "fabricbench: interrupted (SIGINT)" : "fabricbench: terminated (SIGTERM)");
    write_stderr("; finished rows are kept in:");
    for (int i = 0; i < g_partial_count; ++i) {
      write_stderr(" ");
      write_stderr(g_partial_paths[static_cast<std::size_t>(i)].data());
    }
    write_stderr("\n");
  }
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

}  // namespace

void check_writable_path(const std::string& path, std::string_view flag) {
  namespace fs = std::filesystem;
  if (path.empty()) throw UsageError(fmt::format("{}: empty path", flag));
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw UsageError(fmt::format("{}: '{}' is a folder; give a file name", flag, path));
  fs::path folder = fs::path(path).parent_path();
  if (folder.empty()) folder = ".";
  if (!fs::is_directory(folder, ec))
    throw UsageError(fmt::format("{}: folder '{}' does not exist; create it first", flag, folder.string()));
  if (::access(folder.c_str(), W_OK) != 0)
    throw UsageError(
        fmt::format("{}: folder '{}' is not writable ({})", flag, folder.string(), system_error_text(errno)));
  if (fs::exists(path, ec) && ::access(path.c_str(), W_OK) != 0)
    throw UsageError(fmt::format("{}: '{}' exists and is not writable", flag, path));
}

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  fd_ = open_for_write(partial_path());
  register_partial_file(partial_path());
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_), committed_(other.committed_) {
  other.fd_ = -1;
  other.committed_ = true;
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void OutputFile::append(std::string_view text) {
  if (fd_ < 0) throw Error(fmt::format("{} was replaced or committed; cannot append", partial_path()));
  write_all(fd_, text, partial_path());
}

void OutputFile::write_at(std::uint64_t offset, std::string_view text) {
  if (fd_ < 0) throw Error(fmt::format("{} was replaced or committed; cannot write to it", partial_path()));
  if (::lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0)
    throw Error(fmt::format("seeking in {} failed: {}", partial_path(), system_error_text(errno)));
  write_all(fd_, text, partial_path());
}

void OutputFile::replace(std::string_view text) {
  const std::string temporary = partial_path() + ".tmp";
  const int fd = open_for_write(temporary);
  try {
    write_all(fd, text, temporary);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  if (std::rename(temporary.c_str(), partial_path().c_str()) != 0)
    throw Error(fmt::format("renaming {} failed: {}", temporary, system_error_text(errno)));
  // A replaced file is never appended to: drop the descriptor of the original, now unlinked, inode.
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void OutputFile::commit() {
  if (committed_) return;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (std::rename(partial_path().c_str(), path_.c_str()) != 0)
    throw Error(fmt::format("renaming {} to {} failed: {}", partial_path(), path_, system_error_text(errno)));
  committed_ = true;
}

void register_partial_file(const std::string& partial_path) {
  if (g_partial_count >= static_cast<int>(kMaxPartialFiles) || partial_path.size() >= kMaxPathLength) return;
  auto& slot = g_partial_paths[static_cast<std::size_t>(g_partial_count)];
  std::memcpy(slot.data(), partial_path.c_str(), partial_path.size() + 1);
  g_partial_count = g_partial_count + 1;
}

void install_interrupt_notice() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

}  // namespace fabricbench
