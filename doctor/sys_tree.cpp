// SPDX-License-Identifier: Apache-2.0
#include "doctor/sys_tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

#include "common/utf8.hpp"

namespace fabricbench::doctor {
namespace {

constexpr int kMaxLinks = 40;    // the kernel's own limit before ELOOP
constexpr int kMaxSteps = 4096;  // parts walked for one path, links' parts included

/// An open file descriptor, closed when this goes away.
class Fd {
 public:
  explicit Fd(int fd = -1) noexcept : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_;
};
static_assert(!std::is_copy_constructible_v<Fd> && std::is_nothrow_move_constructible_v<Fd>);

struct DirCloser {
  void operator()(DIR* dir) const noexcept { ::closedir(dir); }
};

/// The parts of a path, "" and "." dropped; ".." kept (it depends on where the walk is).
std::vector<std::string> parts_of(const std::string& path) {
  std::vector<std::string> parts;
  std::string part;
  for (const char c : path + "/") {
    if (c != '/') {
      part += c;
      continue;
    }
    if (!part.empty() && part != ".") parts.push_back(part);
    part.clear();
  }
  return parts;
}

std::string joined(const std::vector<std::string>& names) {
  std::string path;
  for (const std::string& name : names) path += "/" + name;
  return path.empty() ? "/" : path;
}

std::string what_it_is(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

std::string link_target(int folder, const std::string& name) {
  std::string target(PATH_MAX, '\0');
  const ssize_t length = ::readlinkat(folder, name.c_str(), target.data(), target.size());
  if (length <= 0 || static_cast<std::size_t>(length) >= target.size()) return {};
  target.resize(static_cast<std::size_t>(length));
  return target;
}

}  // namespace

/// Where a path ends: the folder holding its last part, which is not a link.
struct SysTree::Located {
  Fd folder;              ///< O_PATH descriptor of the folder holding `name`
  std::string name;       ///< the last part; "." when the path ends on a folder reached by ".."
  std::string canonical;  ///< the path of the live node it stands for
  bool found = false;
};

SysTree::SysTree(std::filesystem::path root) : root_(std::move(root)) {
  std::error_code ec;
  live_ = std::filesystem::equivalent(root_, "/", ec);
}

void SysTree::skip(const std::string& path, const std::string& why) const { skipped_.emplace(path, why); }

std::string SysTree::skip_reason(const std::string& path) const {
  const auto found = skipped_.find(path);
  return found == skipped_.end() ? std::string() : found->second;
}

std::vector<std::string> SysTree::skipped() const {
  std::vector<std::string> out;
  for (const auto& [path, why] : skipped_) out.push_back(path + ": " + why);
  return out;
}

// The kernel's own walk (openat2's RESOLVE_IN_ROOT) is not on every fleet's kernel (RHEL 8 has
// 4.18), so the walk is done here, one part at a time on descriptors: a link is read and its
// target walked in turn, and a recorded tree's links may not leave it (an absolute target, or ".."
// above its root), so none leads to /dev. The folders walked into are never links (O_NOFOLLOW),
// so a file swapped for a link while the walk goes on is not followed either.
SysTree::Located SysTree::locate(const std::string& path) const {
  Located at;
  at.canonical = path;
  const Fd root(::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root) return at;
  std::vector<std::string> names;  // the folders walked into below the root
  auto reopen = [&] {              // after ".." or an absolute link: the same folders from the root
    Fd folder(::openat(root.get(), ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
    for (const std::string& name : names)
      if (folder) folder = Fd(::openat(folder.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    return folder;
  };
  Fd folder = reopen();
  std::vector<std::string> pending = parts_of(path);
  std::reverse(pending.begin(), pending.end());  // the next part at the back
  int links = 0, steps = 0;
  while (!pending.empty() && folder) {
    const std::string part = std::move(pending.back());
    pending.pop_back();
    if (++steps > kMaxSteps) {
      skip(path, fmt::format("more than {} parts to walk (links that loop?)", kMaxSteps));
      return at;
    }
    if (part == "..") {
      if (names.empty() && !live_) {
        skip(path, "a link out of the recorded tree (.. above its root)");
        return at;
      }
      if (!names.empty()) names.pop_back();
      folder = reopen();
      continue;
    }
    struct stat status {};
    if (::fstatat(folder.get(), part.c_str(), &status, AT_SYMLINK_NOFOLLOW) != 0) {
      names.push_back(part);  // absent: the rest as written, for resolve()
      names.insert(names.end(), pending.rbegin(), pending.rend());
      at.canonical = joined(names);
      return at;
    }
    if (S_ISLNK(status.st_mode)) {
      const std::string target = link_target(folder.get(), part);
      if (target.empty()) return at;  // changed under us
      if (++links > kMaxLinks) {
        skip(path, fmt::format("more than {} links (a loop?)", kMaxLinks));
        return at;
      }
      if (target.front() == '/') {
        if (!live_) {
          skip(path, fmt::format("a link out of the recorded tree (-> {})", target));
          return at;
        }
        names.clear();
        folder = reopen();
      }
      const std::vector<std::string> more = parts_of(target);
      pending.insert(pending.end(), more.rbegin(), more.rend());
      continue;
    }
    names.push_back(part);
    if (pending.empty()) {
      at.folder = std::move(folder);
      at.name = part;
      at.canonical = joined(names);
      at.found = true;
      return at;
    }
    folder = Fd(::openat(folder.get(), part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  }
  if (!folder) return at;  // a part on the way is not a folder
  at.folder = std::move(folder);
  at.name.assign(1, '.');  // not = ".": GCC 12 at -O3 flags that with a false -Wrestrict
  at.canonical = joined(names);
  at.found = true;
  return at;
}

std::optional<std::string> SysTree::bytes(const std::string& path) const {
  const Located at = locate(path);
  if (!at.found) return std::nullopt;
  struct stat status {};
  if (::fstatat(at.folder.get(), at.name.c_str(), &status, AT_SYMLINK_NOFOLLOW) != 0 || S_ISDIR(status.st_mode))
    return std::nullopt;
  // Never opened: a FIFO blocks the reader, a device can act on open (a watchdog arms itself).
  if (!S_ISREG(status.st_mode)) {
    skip(path, what_it_is(status.st_mode) + ", not a regular file");
    return std::nullopt;
  }
  // O_NONBLOCK and O_NOFOLLOW: a file swapped for a FIFO or a link since neither blocks nor leaves.
  const Fd file(::openat(at.folder.get(), at.name.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC));
  if (!file) return std::nullopt;
  if (::fstat(file.get(), &status) != 0 || !S_ISREG(status.st_mode)) {
    skip(path, what_it_is(status.st_mode) + ", not a regular file");
    return std::nullopt;
  }
  // sysfs and procfs give no true size (4096 and 0), so the bound is on what is read.
  std::string content;
  char buffer[16384];
  while (content.size() <= kMaxFileBytes) {
    const ssize_t got = ::read(file.get(), buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return std::nullopt;  // an attribute the driver refuses to give (EIO)
    if (got == 0) return content;
    content.append(buffer, static_cast<std::size_t>(got));
  }
  skip(path, fmt::format("longer than {} bytes", kMaxFileBytes));
  return std::nullopt;
}

std::optional<std::string> SysTree::text(const std::string& path) const {
  auto content = bytes(path);
  if (!content) return std::nullopt;
  while (!content->empty() && std::isspace(static_cast<unsigned char>(content->back()))) content->pop_back();
  // Attributes are text; whatever a recorded tree holds instead is printed and stored harmlessly.
  return printable_utf8(*content);
}

std::vector<std::string> SysTree::list(const std::string& path) const {
  std::vector<std::string> names;
  const Located at = locate(path);
  if (!at.found) return names;
  struct stat status {};
  if (::fstatat(at.folder.get(), at.name.c_str(), &status, AT_SYMLINK_NOFOLLOW) != 0) return names;
  if (!S_ISDIR(status.st_mode)) {
    if (!S_ISREG(status.st_mode)) skip(path, what_it_is(status.st_mode) + " where a folder belongs");
    return names;
  }
  Fd folder(::openat(at.folder.get(), at.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!folder) return names;
  const std::unique_ptr<DIR, DirCloser> entries(::fdopendir(folder.get()));
  if (!entries) return names;
  folder.release();  // the DIR owns it now
  while (const dirent* entry = ::readdir(entries.get())) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    if (names.size() == kMaxFolderEntries) {
      skip(path, fmt::format("more than {} entries; the rest not listed", kMaxFolderEntries));
      break;
    }
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool SysTree::exists(const std::string& path) const {
  const Located at = locate(path);
  struct stat status {};
  return at.found && ::fstatat(at.folder.get(), at.name.c_str(), &status, AT_SYMLINK_NOFOLLOW) == 0;
}

std::string SysTree::resolve(const std::string& path) const { return locate(path).canonical; }

}  // namespace fabricbench::doctor
