// SPDX-License-Identifier: Apache-2.0
#include "common/input_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.hpp"

namespace fabricbench {
namespace {

class OpenFile {
 public:
  explicit OpenFile(int fd) noexcept : fd_(fd) {}
  ~OpenFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  int get() const noexcept { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::string read_input_file(const std::string& path, std::string_view flag, std::size_t max_bytes) {
  // O_NONBLOCK: a FIFO opens without waiting for a writer, and is then refused as not regular.
  const OpenFile file(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (file.get() < 0) throw UsageError(fmt::format("{} {}: {}", flag, path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(file.get(), &st) != 0) throw UsageError(fmt::format("{} {}: {}", flag, path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) throw UsageError(fmt::format("{} {}: not a regular file", flag, path));
  if (static_cast<std::size_t>(st.st_size) > max_bytes)
    throw UsageError(fmt::format("{} {}: {} bytes, more than the {} this reads", flag, path, st.st_size, max_bytes));
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t got = ::read(file.get(), text.data() + done, text.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw UsageError(fmt::format("{} {}: {}", flag, path, std::strerror(errno)));
    if (got == 0) break;  // shrank while read
    done += static_cast<std::size_t>(got);
  }
  text.resize(done);
  return text;
}

std::optional<std::string> regular_file_head(const std::string& path, std::size_t bytes) {
  const OpenFile file(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  struct stat st {};
  if (file.get() < 0 || ::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  std::string head(bytes, '\0');
  ssize_t got = -1;
  do got = ::read(file.get(), head.data(), head.size());
  while (got < 0 && errno == EINTR);
  if (got < 0) return std::nullopt;
  head.resize(static_cast<std::size_t>(got));
  return head;
}

}  // namespace fabricbench
