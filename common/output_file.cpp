// SPDX-License-Identifier: Apache-2.0
#include "common/output_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

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

constexpr std::string_view kPartialSuffix = ".partial";
constexpr std::string_view kLiveRun = "the file of another run writing there now";

// What stands at a ".partial" name that is not a file fabricbench left there (a regular file of one
// name, from a run that stopped); "" for that file or nothing.
std::string foreign_partial(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return {};
  if (S_ISLNK(st.st_mode)) return "a symlink";
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (st.st_nlink != 1) return "a file with other names (a hard link)";
  // A live run holds a lock on its .partial (open_partial); a stopped run's is free to replace.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return {};
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return held ? std::string(kLiveRun) : "";
}

// What to do about a ".partial" that is not a stopped run's.
std::string_view advice_about(std::string_view what) {
  return what == kLiveRun ? "wait for that run or choose another name" : "remove it or choose another name";
}

// Undoes a failed write (a full disk, a quota) so the file is as it was before it: on whole rows,
// never on a torn one. `overwritten`: the bytes from `offset` on that the write replaced; `size`:
// the file's size before it.
void restore_after_failed_write(int fd, off_t offset, std::string_view overwritten, off_t size) {
  if (!overwritten.empty()) {
    const ssize_t ignored = ::pwrite(fd, overwritten.data(), overwritten.size(), offset);
    (void)ignored;
  }
  if (::ftruncate(fd, size) == 0) ::lseek(fd, size, SEEK_SET);
}

// A FIFO or device opened for writing without waiting for a reader (-1 with errno ENXIO where a
// FIFO has none), then writing as a file does (blocking).
int open_in_place_writer(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

// "<target>.partial" is fabricbench's own name: a stale one of a run that stopped is replaced, but
// never followed: a symlink or hard link someone left there would have root write wherever it leads.
int open_partial(const std::string& path) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    // Read as well as written: a failed write puts back the bytes it overwrote (a document's
    // closing), which it reads first.
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::flock(fd, LOCK_EX | LOCK_NB);  // held until the file is renamed or the process ends
      return fd;
    }
    if (errno != EEXIST) throw Error(fmt::format("cannot create {}: {}", path, system_error_text(errno)));
    if (const std::string what = foreign_partial(path); !what.empty())
      throw Error(fmt::format("{} is {}: not a file a stopped run left there; {}", path, what, advice_about(what)));
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
      throw Error(fmt::format("cannot replace {}: {}", path, system_error_text(errno)));
  }
  throw Error(fmt::format("cannot create {}: something keeps creating it", path));
}

// The signal handler may only touch fixed storage: a few paths, written before any signal.
constexpr std::size_t kMaxPartialFiles = 4;
constexpr std::size_t kMaxPathLength = 1024;
std::array<std::array<char, kMaxPathLength>, kMaxPartialFiles> g_partial_paths{};
volatile std::sig_atomic_t g_partial_count = 0;
volatile std::sig_atomic_t g_always_say = 0;  // a tool run by hand: the notice even with no file open

void write_stderr(const char* text) {
  const ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

extern "C" void on_interrupt(int signal_number) {
  // Only a rank that writes files has something to say; the others die quietly, so a launcher's
  // SIGTERM to the peers of a failed rank adds no noise.
  if (g_partial_count > 0 || g_always_say) {
    write_stderr(signal_number == SIGINT    ? "fabricbench: interrupted (SIGINT)"
                 : signal_number == SIGHUP  ? "fabricbench: hung up (SIGHUP)"
                 : signal_number == SIGPIPE ? "fabricbench: its output was closed (SIGPIPE)"
                                            : "fabricbench: terminated (SIGTERM)");
    bool unfinished = false;  // a file already finished (renamed to its name) is no longer partial
    for (int i = 0; i < g_partial_count; ++i)
      unfinished = unfinished || g_partial_paths[static_cast<std::size_t>(i)][0];
    if (g_partial_count > 0)
      write_stderr(unfinished ? "; finished rows are kept in:" : " after its files were finished");
    for (int i = 0; i < g_partial_count; ++i) {
      if (!g_partial_paths[static_cast<std::size_t>(i)][0]) continue;
      write_stderr(" ");
      write_stderr(g_partial_paths[static_cast<std::size_t>(i)].data());
    }
    write_stderr("\n");
  }
  // Exit code 3 (a runtime failure, README's table), not death by the signal: a launcher that
  // forwards Ctrl-C as SIGTERM then reports the ranks' code (mpirun and srun do, where they can).
  ::_exit(3);
}

}  // namespace

namespace {

// The descriptor of this process a path names: /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N.
// Opened by name, such a path gets the file behind the descriptor afresh (a log that standard output
// is appended to, taken for a regular file and replaced); written through the descriptor itself,
// the bytes go where the stream goes, after what it printed.
std::optional<int> stream_descriptor(const std::string& path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  const std::string own = fmt::format("/proc/{}/fd/", ::getpid());
  for (const std::string& prefix : {std::string("/dev/fd/"), std::string("/proc/self/fd/"), own}) {
    if (!path.starts_with(prefix)) continue;
    const std::string number = path.substr(prefix.size());
    if (number.empty() || number.size() > 6 || number.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    return std::stoi(number);
  }
  return std::nullopt;
}

// Whether descriptor `fd` is open for writing.
bool writable_descriptor(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && (flags & O_ACCMODE) != O_RDONLY;
}

// What kind of thing `path` is, following symlinks: none (absent, or a dangling link), a regular
// file, a folder, or something to write in place (character device, FIFO), or refused.
enum class Kind { kNone, kRegular, kFolder, kInPlace, kBlockDevice, kSocket };

Kind kind_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Kind::kNone;
  if (S_ISREG(st.st_mode)) return Kind::kRegular;
  if (S_ISDIR(st.st_mode)) return Kind::kFolder;
  if (S_ISBLK(st.st_mode)) return Kind::kBlockDevice;
  if (S_ISSOCK(st.st_mode)) return Kind::kSocket;
  return Kind::kInPlace;
}

bool is_symlink(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

// Where a symlink leads (the whole chain), or "" when it dangles.
std::string link_target(const std::string& path) {
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) ? std::string(resolved) : std::string();
}

// FIFOs a check found a reader on, held open from then on by their resolved path: a FIFO with no
// reader is refused before any work, and one opened and closed again would show its reader an
// end of file before the run wrote a byte.
std::mutex held_fifos_mutex;
std::map<std::string, int> held_fifos;

void hold_fifo(const std::string& path, std::string_view flag) {
  const std::string key = link_target(path);
  const std::lock_guard lock(held_fifos_mutex);
  if (key.empty() || held_fifos.contains(key)) return;
  const int fd = open_in_place_writer(key);
  if (fd < 0 && errno == ENXIO)
    throw UsageError(fmt::format("{}: '{}' is a FIFO with no reader: start its reader first", flag, path));
  if (fd < 0) throw UsageError(fmt::format("{}: cannot write '{}': {}", flag, path, system_error_text(errno)));
  held_fifos[key] = fd;
}

// The descriptor a check holds for this FIFO, handed over (-1 where none is held).
int take_held_fifo(const std::string& path) {
  const std::lock_guard lock(held_fifos_mutex);
  const auto found = held_fifos.find(link_target(path));
  if (found == held_fifos.end()) return -1;
  const int fd = found->second;
  held_fifos.erase(found);
  return fd;
}

}  // namespace

void check_writable_path(const std::string& path, std::string_view flag) {
  namespace fs = std::filesystem;
  if (path.empty()) throw UsageError(fmt::format("{}: empty path", flag));
  // ".partial" names are the files of runs in progress: one written as an output would be renamed
  // over a live run's rows (X.partial.partial -> X.partial), and that run's over it at its end.
  if (path.ends_with(kPartialSuffix))
    throw UsageError(
        fmt::format("{}: '{}' ends in '{}', the name fabricbench keeps for the file of a run in "
                    "progress: choose another name",
                    flag, path, kPartialSuffix));
  if (const auto fd = stream_descriptor(path)) {
    if (!writable_descriptor(*fd))
      throw UsageError(fmt::format("{}: '{}' names descriptor {}, which is not open for writing", flag, path, *fd));
    return;
  }
  switch (kind_of(path)) {
    case Kind::kFolder: throw UsageError(fmt::format("{}: '{}' is a folder; give a file name", flag, path));
    case Kind::kBlockDevice:
      throw UsageError(fmt::format("{}: '{}' is a block device: fabricbench never writes to a disk", flag, path));
    case Kind::kSocket:
      throw UsageError(fmt::format("{}: '{}' is a socket; give a file, a FIFO or a device", flag, path));
    case Kind::kInPlace: {
      if (::access(path.c_str(), W_OK) != 0)
        throw UsageError(fmt::format("{}: '{}' is not writable ({})", flag, path, system_error_text(errno)));
      struct stat st {};
      if (::stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode)) hold_fifo(path, flag);
      return;
    }
    case Kind::kRegular:
    case Kind::kNone: break;
  }
  // A regular target is written beside itself (.partial, then rename): its folder must take it.
  const std::string target = is_symlink(path) && !link_target(path).empty() ? link_target(path) : path;
  if (is_symlink(path) && link_target(path).empty())
    throw UsageError(fmt::format("{}: '{}' is a symlink to nothing; give the file itself", flag, path));
  if (const std::string what = foreign_partial(target + ".partial"); !what.empty())
    throw UsageError(fmt::format("{}: '{}.partial', where the rows go until the run ends, is {}; {}", flag, target,
                                 what, advice_about(what)));
  std::error_code ec;
  fs::path folder = fs::path(target).parent_path();
  if (folder.empty()) folder = ".";
  if (!fs::is_directory(folder, ec))
    throw UsageError(
        fs::exists(folder, ec)
            ? fmt::format("{}: '{}' is not a folder, so nothing can be written inside it", flag, folder.string())
            : fmt::format("{}: folder '{}' does not exist; create it first", flag, folder.string()));
  if (::access(folder.c_str(), W_OK) != 0)
    throw UsageError(
        fmt::format("{}: folder '{}' is not writable ({})", flag, folder.string(), system_error_text(errno)));
  // Root may write anywhere but a kernel filesystem, which takes no new file: found before any work.
  struct statfs where {};
  if (::statfs(folder.c_str(), &where) == 0 &&
      (where.f_type == PROC_SUPER_MAGIC || where.f_type == SYSFS_MAGIC || where.f_type == CGROUP_SUPER_MAGIC ||
       where.f_type == CGROUP2_SUPER_MAGIC))
    throw UsageError(fmt::format("{}: folder '{}' is a kernel filesystem (/proc, /sys): no file can be made there",
                                 flag, folder.string()));
  if (const std::string leaf = fs::path(target).filename().string() + ".partial"; leaf.size() > NAME_MAX)
    throw UsageError(
        fmt::format("{}: '{}' is too long a name for the '.partial' written beside it ({} bytes of at "
                    "most {}): shorten it",
                    flag, path, leaf.size(), NAME_MAX));
  // The whole path too: the kernel refuses one of PATH_MAX bytes or more (ENAMETOOLONG).
  if (const std::string partial = target + ".partial"; partial.size() >= PATH_MAX)
    throw UsageError(
        fmt::format("{}: '{}' is too long a path for the '.partial' written beside it ({} bytes of "
                    "fewer than {}): shorten it",
                    flag, path, partial.size(), PATH_MAX));
  if (fs::exists(target, ec) && ::access(target.c_str(), W_OK) != 0)
    throw UsageError(fmt::format("{}: '{}' exists and is not writable", flag, path));
}

namespace {

/// One file however it is named: the resolved path, and the device and inode where it exists
/// (where it does not yet, its folder's, and its name there: one folder reached through a bind
/// mount under two paths is still one folder).
struct FileIdentity {
  std::string resolved;
  dev_t device = 0;
  ino_t inode = 0;
  bool exists = false;
  bool null_device = false;  // /dev/null: any number of outputs may discard into it
  nlink_t links = 0;
  dev_t folder_device = 0;
  ino_t folder_inode = 0;
  bool folder_exists = false;
  std::string leaf;

  bool same_as(const FileIdentity& other) const {
    if (exists && other.exists) return device == other.device && inode == other.inode;
    if (!exists && !other.exists && folder_exists && other.folder_exists)
      return folder_device == other.folder_device && folder_inode == other.folder_inode && leaf == other.leaf;
    return resolved == other.resolved;
  }
};

FileIdentity identity_of(const std::string& path) {
  FileIdentity id;
  std::error_code ec;
  const auto resolved = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  id.resolved = ec ? path : resolved.string();
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    id.exists = true;
    id.device = st.st_dev;
    id.inode = st.st_ino;
    id.null_device = S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);
    id.links = S_ISREG(st.st_mode) ? st.st_nlink : 0;
  } else if (!ec) {
    const std::filesystem::path p(id.resolved);
    id.leaf = p.filename().string();
    if (::stat(p.parent_path().c_str(), &st) == 0) {
      id.folder_exists = true;
      id.folder_device = st.st_dev;
      id.folder_inode = st.st_ino;
    }
  }
  return id;
}

// Whether `resolved` (identity_of's path) lies in the folder of device and inode `folder` at any
// depth, by the identity of each folder above it: a bind mount of the folder is the folder under
// another path.
bool inside_by_identity(const std::string& resolved, const struct stat& folder) {
  std::filesystem::path at(resolved);
  for (int depth = 0; depth < 4096 && !at.empty(); ++depth) {
    struct stat st {};
    if (::stat(at.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_dev == folder.st_dev && st.st_ino == folder.st_ino)
      return true;
    if (at == at.parent_path()) break;
    at = at.parent_path();
  }
  return false;
}

// An entry inside `folder` (walked without following links) that is `file` under another name: a
// hard link to it, or a symbolic link leading to it (a trace's rank file linked in from
// elsewhere is read, so it is one of the folder's files wherever it lies). The walk is bounded
// (recorded trees hold thousands of files, not millions).
std::optional<std::string> other_name_inside(const FileIdentity& file, const std::string& folder) {
  if (!file.exists) return std::nullopt;
  constexpr std::size_t kMostEntries = 1'000'000;
  std::error_code ec;
  std::size_t seen = 0;
  for (std::filesystem::recursive_directory_iterator
           it(folder, std::filesystem::directory_options::skip_permission_denied, ec),
       end;
       !ec && it != end && seen < kMostEntries; it.increment(ec), ++seen) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0) continue;
    if (S_ISLNK(st.st_mode) && ::stat(it->path().c_str(), &st) != 0) continue;  // a link to nothing
    if (S_ISREG(st.st_mode) && st.st_dev == file.device && st.st_ino == file.inode) return it->path().string();
  }
  return std::nullopt;
}

// Whether `path` is `folder` or lies under it (both resolved).
bool inside(const std::string& path, const std::string& folder) {
  const std::filesystem::path p(path), f(folder);
  auto pi = p.begin();
  for (auto fi = f.begin(); fi != f.end(); ++fi, ++pi) {
    if (fi->empty() && std::next(fi) == f.end()) break;  // a trailing separator
    if (pi == p.end() || *pi != *fi) return false;
  }
  return true;
}

}  // namespace

void check_distinct_files(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  struct Entry {
    const NamedPath* named;
    FileIdentity id;
    bool is_partial;
  };
  std::vector<Entry> written;
  for (const NamedPath& o : outputs) {
    if (o.path.empty()) continue;
    const FileIdentity id = identity_of(o.path);
    written.push_back({&o, id, false});
    const std::string target = is_symlink(o.path) ? link_target(o.path) : o.path;
    if (!target.empty() && (kind_of(target) == Kind::kRegular || kind_of(target) == Kind::kNone))
      written.push_back({&o, identity_of(target + ".partial"), true});
  }
  // A file a standard stream is redirected into, named by its own name, would be replaced under it.
  for (const Entry& w : written) {
    if (w.is_partial || stream_descriptor(w.named->path)) continue;
    for (const int fd : {STDOUT_FILENO, STDERR_FILENO}) {
      struct stat st {};
      if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && w.id.exists && w.id.device == st.st_dev &&
          w.id.inode == st.st_ino)
        throw UsageError(fmt::format("{} '{}' is the file standard {} goes to: give /dev/{} to write there",
                                     w.named->flag, w.named->path, fd == STDOUT_FILENO ? "output" : "error",
                                     fd == STDOUT_FILENO ? "stdout" : "stderr"));
    }
  }
  for (std::size_t i = 0; i < written.size(); ++i)
    for (std::size_t j = i + 1; j < written.size(); ++j) {
      const Entry &a = written[i], &b = written[j];
      if (a.named == b.named || !a.id.same_as(b.id) || (a.id.null_device && b.id.null_device)) continue;
      throw UsageError(fmt::format("{} '{}' and {} '{}' name the same file{}", a.named->flag, a.named->path,
                                   b.named->flag, b.named->path,
                                   a.is_partial || b.is_partial ? " (one's .partial is the other)" : ""));
    }
  for (const NamedPath& in : inputs) {
    if (in.path.empty()) continue;
    const FileIdentity id = identity_of(in.path);
    for (const Entry& w : written)
      if (w.id.same_as(id) && !id.null_device)
        throw UsageError(fmt::format("{} '{}' is the {} '{}': fabricbench never writes over what it reads",
                                     w.named->flag, w.named->path, in.flag, in.path));
    // A folder read (a trace, a recorded tree, dumps): nothing is written anywhere inside it.
    struct stat folder {};
    if (::stat(in.path.c_str(), &folder) != 0 || !S_ISDIR(folder.st_mode)) continue;
    for (const Entry& w : written) {
      if (inside(w.id.resolved, id.resolved) || inside_by_identity(w.id.resolved, folder))
        throw UsageError(fmt::format("{} '{}' lies inside the {} '{}': fabricbench never writes into what it reads",
                                     w.named->flag, w.named->path, in.flag, in.path));
      if (const auto other = other_name_inside(w.id, in.path))
        throw UsageError(
            fmt::format("{} '{}' is {} of the {} '{}' (another name of it): fabricbench never writes over "
                        "what it reads",
                        w.named->flag, w.named->path, *other, in.flag, in.path));
    }
  }
}

void check_distinct_inputs(const std::vector<NamedPath>& inputs, std::string_view why) {
  std::vector<FileIdentity> seen;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    seen.push_back(identity_of(inputs[i].path));
    for (std::size_t j = 0; j < i; ++j)
      if (seen[j].same_as(seen[i]))
        throw UsageError(fmt::format("{} '{}' and {} '{}' are one file: {}", inputs[j].flag, inputs[j].path,
                                     inputs[i].flag, inputs[i].path, why));
  }
}

OutputFile::OutputFile(std::string path, Unfinished unfinished)
    : path_(std::move(path)), target_(path_), remove_unfinished_(unfinished == Unfinished::kRemove) {
  if (const auto stream = stream_descriptor(path_)) {
    in_place_ = stream_ = true;
    fd_ = ::fcntl(*stream, F_DUPFD_CLOEXEC, 3);
    if (fd_ < 0 || !writable_descriptor(fd_))
      throw UsageError(fmt::format("{}: descriptor {} is not open for writing", path_, *stream));
    return;
  }
  if (is_symlink(path_)) {
    const std::string resolved = link_target(path_);
    if (!resolved.empty()) target_ = resolved;  // the link stays; its file is what gets written
  }
  const Kind kind = kind_of(target_);
  if (kind == Kind::kBlockDevice || kind == Kind::kSocket || kind == Kind::kFolder)
    throw Error(fmt::format("{} is not a file fabricbench writes (a folder, block device or socket)", path_));
  in_place_ = kind == Kind::kInPlace;
  if (in_place_) {
    // A FIFO is opened now and held: one with no reader is refused before any work (ENXIO, not a
    // hang), not found at the end with every row measured; and its reader sees one writer to the end.
    struct stat st {};
    if (::stat(target_.c_str(), &st) != 0 || !S_ISFIFO(st.st_mode)) return;
    if ((fd_ = take_held_fifo(target_)) >= 0) return;  // opened when the outputs were checked
    fd_ = open_in_place_writer(target_);
    if (fd_ < 0 && errno == ENXIO)
      throw UsageError(fmt::format("{}: a FIFO with no reader: start its reader first", path_));
    if (fd_ < 0) throw Error(fmt::format("cannot write {}: {}", path_, system_error_text(errno)));
    return;
  }
  if (target_.ends_with(kPartialSuffix))
    throw Error(fmt::format("{}: a '{}' name is a run's file in progress, never an output", path_, kPartialSuffix));
  fd_ = open_partial(partial_path());
  register_partial_file(partial_path());
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : path_(std::move(other.path_)),
      target_(std::move(other.target_)),
      in_place_(other.in_place_),
      stream_(other.stream_),
      pending_(std::move(other.pending_)),
      fd_(other.fd_),
      done_(other.done_),
      remove_unfinished_(other.remove_unfinished_) {
  other.fd_ = -1;
  other.done_ = true;
}

OutputFile::~OutputFile() {
  if (fd_ < 0) return;
  // Neither committed nor kept: a write failed (a full disk). A document written whole has
  // nothing worth keeping.
  if (!done_ && remove_unfinished_) remove_partial();
  ::close(fd_);
}

void OutputFile::append(std::string_view text) {
  if (done_) throw Error(fmt::format("{} was already finished; cannot append", path_));
  if (in_place_) {
    pending_ += text;
    return;
  }
  const off_t end = ::lseek(fd_, 0, SEEK_CUR);
  try {
    write_all(fd_, text, partial_path());
  } catch (...) {
    if (end >= 0) restore_after_failed_write(fd_, end, {}, end);
    throw;
  }
}

void OutputFile::write_at(std::uint64_t offset, std::string_view text) {
  if (done_) throw Error(fmt::format("{} was already finished; cannot write to it", path_));
  if (in_place_) {  // as pwrite(2) on the file: the bytes there are overwritten, the rest kept
    const std::size_t at = std::min<std::size_t>(pending_.size(), offset);
    pending_.replace(at, std::min(text.size(), pending_.size() - at), text);
    return;
  }
  // The bytes the write replaces (a document's closing tail, or "false"), to put back if it fails:
  // only those, not the file from `offset` on.
  struct stat st {};
  const off_t size = ::fstat(fd_, &st) == 0 ? st.st_size : -1;
  std::string overwritten;
  if (size > static_cast<off_t>(offset)) {
    overwritten.resize(std::min(text.size(), static_cast<std::size_t>(size - static_cast<off_t>(offset))));
    if (::pread(fd_, overwritten.data(), overwritten.size(), static_cast<off_t>(offset)) !=
        static_cast<ssize_t>(overwritten.size()))
      overwritten.clear();
  }
  if (::lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0)
    throw Error(fmt::format("seeking in {} failed: {}", partial_path(), system_error_text(errno)));
  try {
    write_all(fd_, text, partial_path());
  } catch (...) {
    if (size >= 0) restore_after_failed_write(fd_, static_cast<off_t>(offset), overwritten, size);
    throw;
  }
}

void OutputFile::commit() {
  if (done_) return;
  if (outputs_held_partial()) return keep_incomplete();
  done_ = true;
  if (in_place_) {
    // A FIFO or a stream is held from the start; a device is opened now (O_NONBLOCK, as a FIFO
    // would be: ENXIO at once, never a hang).
    int fd = std::exchange(fd_, -1);
    if (fd < 0) {
      fd = open_in_place_writer(target_);
      if (fd < 0)
        throw Error(fmt::format("cannot write {}: {}{}", path_, system_error_text(errno),
                                errno == ENXIO ? " (a FIFO with no reader)" : ""));
    }
    if (stream_) {  // after what the stream printed; its own flags are left as they are
      std::fflush(stdout);
      std::fflush(stderr);
    }
    try {
      write_all(fd, pending_, path_);
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
    return;
  }
  // Renamed before it is closed: the lock that says a run is writing it lasts until it has its name.
  if (std::rename(partial_path().c_str(), target_.c_str()) != 0)
    throw Error(fmt::format("renaming {} to {} failed: {}", partial_path(), target_, system_error_text(errno)));
  ::close(fd_);
  fd_ = -1;
  forget_partial_file(partial_path());
}

void OutputFile::discard() noexcept {
  if (done_) return;
  done_ = true;
  if (fd_ < 0) return;
  remove_partial();
  ::close(fd_);
  fd_ = -1;
}

void OutputFile::remove_partial() noexcept {
  if (in_place_) return;  // a FIFO or a stream: nothing of ours to remove
  ::unlink(partial_path().c_str());
  forget_partial_file(partial_path());
}

void OutputFile::keep_incomplete() {
  if (done_) return;
  done_ = true;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void register_partial_file(const std::string& partial_path) {
  if (g_partial_count >= static_cast<int>(kMaxPartialFiles) || partial_path.size() >= kMaxPathLength) return;
  auto& slot = g_partial_paths[static_cast<std::size_t>(g_partial_count)];
  std::memcpy(slot.data(), partial_path.c_str(), partial_path.size() + 1);
  g_partial_count = g_partial_count + 1;
}

void forget_partial_file(const std::string& partial_path) {
  // Bounded by the array too: GCC 13 cannot see that the count never passes it (-Wstringop-overflow).
  const auto used = std::min(static_cast<std::size_t>(g_partial_count), g_partial_paths.size());
  for (std::size_t i = 0; i < used; ++i) {
    auto& slot = g_partial_paths[i];
    if (partial_path == slot.data()) slot[0] = '\0';  // the handler skips an emptied slot
  }
}

namespace {
std::atomic<bool> g_hold_partial{false};
}  // namespace

void hold_outputs_partial() noexcept { g_hold_partial.store(true); }
bool outputs_held_partial() noexcept { return g_hold_partial.load(); }

extern "C" void on_closed_output(int) {}  // the write that raised it fails with EPIPE instead

void carry_on_when_output_closes() {
  struct sigaction previous {};
  sigaction(SIGPIPE, nullptr, &previous);
  if (previous.sa_handler == SIG_IGN) return;
  struct sigaction action {};
  action.sa_handler = on_closed_output;
  sigemptyset(&action.sa_mask);
  sigaction(SIGPIPE, &action, nullptr);
}

void install_interrupt_notice(Notice when) {
  g_always_say = when == Notice::kAlways;
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  // A second signal waits while the first one's notice is written (and the process then exits):
  // two SIGTERMs printed the notice twice, interleaved.
  sigemptyset(&action.sa_mask);
  for (const int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) sigaddset(&action.sa_mask, s);
  // SIGHUP: the terminal or ssh session went; SIGPIPE: `| head` closed standard output. Either
  // used to kill the process with its .partial files left and nothing said.
  for (const int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) {
    struct sigaction previous {};
    sigaction(s, nullptr, &previous);
    if (previous.sa_handler != SIG_IGN) sigaction(s, &action, nullptr);  // nohup's SIG_IGN stays
  }
}

}  // namespace fabricbench
