// SPDX-License-Identifier: Apache-2.0
// LD_PRELOAD shim (not shipped): live heap bytes per allocating call stack, dumped to
// $MALLOC_SITES_OUT every second, largest first: who holds the memory a long run grows by.
#include <dlfcn.h>
#include <execinfo.h>
#include <malloc.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void __libc_free(void*);
void* __libc_memalign(size_t, size_t);
}

namespace {
constexpr int kDepth = 7;
constexpr size_t kPtrSlots = 1 << 24;  // open addressing: pointer -> site
constexpr size_t kSiteSlots = 1 << 16;
struct Site {
  uint64_t hash;
  void* frames[kDepth];
  int depth;
  long long live_bytes, live_count, total_count;
};
struct Ptr {
  void* p;
  uint32_t site;
  uint32_t size;
};
Ptr* ptrs;
Site* sites;
pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
__attribute__((tls_model("initial-exec"))) thread_local bool busy = false;
std::atomic<bool> ready{false};

size_t slot_of(void* p) {
  return (reinterpret_cast<uintptr_t>(p) >> 4) * 0x9E3779B97F4A7C15ull >> 40 & (kPtrSlots - 1);
}

void track(void* p, size_t size) {
  if (!p || busy || !ready.load(std::memory_order_acquire)) return;
  busy = true;
  void* frames[kDepth + 2];
  int n = backtrace(frames, kDepth + 2);
  int skip = n > 2 ? 2 : 0;  // track() and the hook
  uint64_t h = 1469598103934665603ull;
  for (int i = skip; i < n; ++i) h = (h ^ reinterpret_cast<uintptr_t>(frames[i])) * 1099511628211ull;
  pthread_mutex_lock(&lock);
  size_t s = h & (kSiteSlots - 1);
  while (sites[s].hash && sites[s].hash != h) s = (s + 1) & (kSiteSlots - 1);
  if (!sites[s].hash) {
    sites[s].hash = h;
    sites[s].depth = n - skip;
    std::memcpy(sites[s].frames, frames + skip, sizeof(void*) * (n - skip));
  }
  sites[s].live_bytes += size;
  sites[s].live_count++;
  sites[s].total_count++;
  size_t i = slot_of(p);
  while (ptrs[i].p && ptrs[i].p != reinterpret_cast<void*>(1)) i = (i + 1) & (kPtrSlots - 1);
  ptrs[i] = {p, static_cast<uint32_t>(s), static_cast<uint32_t>(size)};
  pthread_mutex_unlock(&lock);
  busy = false;
}

void untrack(void* p) {
  if (!p || busy || !ready.load(std::memory_order_acquire)) return;
  pthread_mutex_lock(&lock);
  for (size_t i = slot_of(p), k = 0; ptrs[i].p && k < kPtrSlots; i = (i + 1) & (kPtrSlots - 1), ++k)
    if (ptrs[i].p == p) {
      Site& s = sites[ptrs[i].site];
      s.live_bytes -= ptrs[i].size;
      s.live_count--;
      ptrs[i].p = reinterpret_cast<void*>(1);  // tombstone
      break;
    }
  pthread_mutex_unlock(&lock);
}

void dump() {
  const char* out = getenv("MALLOC_SITES_OUT");
  if (!out) return;
  busy = true;
  // Copied under the lock, written after it: stdio and dladdr allocate and free.
  static Site top[12];
  int kept = 0;
  pthread_mutex_lock(&lock);
  for (size_t s = 0; s < kSiteSlots; ++s) {
    if (!sites[s].hash || sites[s].live_bytes <= 0) continue;
    int at = kept < 12 ? kept++ : 11;
    if (at == 11 && kept == 12 && top[11].live_bytes >= sites[s].live_bytes) continue;
    top[at] = sites[s];
    for (; at > 0 && top[at].live_bytes > top[at - 1].live_bytes; --at) {
      Site t = top[at];
      top[at] = top[at - 1];
      top[at - 1] = t;
    }
  }
  pthread_mutex_unlock(&lock);
  const std::string final_path = std::string(out) + "." + std::to_string(getpid());
  const std::string path = final_path + ".tmp";
  FILE* f = fopen(path.c_str(), "w");
  if (f) {
    for (int a = 0; a < kept; ++a) {
      const Site& s = top[a];
      fprintf(f, "site live_bytes %lld live_count %lld total_count %lld\n", s.live_bytes, s.live_count, s.total_count);
      for (int d = 0; d < s.depth; ++d) {
        Dl_info info{};
        if (dladdr(s.frames[d], &info) && info.dli_fname)
          fprintf(f, "    %s+0x%lx %s\n", info.dli_fname,
                  (unsigned long)(reinterpret_cast<char*>(s.frames[d]) - reinterpret_cast<char*>(info.dli_fbase)),
                  info.dli_sname ? info.dli_sname : "?");
        else
          fprintf(f, "    %p\n", s.frames[d]);
      }
    }
    fclose(f);
    rename(path.c_str(), final_path.c_str());
  }
  busy = false;
}

void* dumper(void*) {
  for (;;) {
    sleep(1);
    dump();
  }
  return nullptr;
}

__attribute__((constructor)) void start() {
  busy = true;
  ptrs = static_cast<Ptr*>(__libc_calloc(kPtrSlots, sizeof(Ptr)));
  sites = static_cast<Site*>(__libc_calloc(kSiteSlots, sizeof(Site)));
  void* warm[2];
  backtrace(warm, 2);  // loads the unwinder before any hook needs it
  pthread_t t;
  pthread_create(&t, nullptr, dumper, nullptr);
  pthread_detach(t);
  busy = false;
  ready.store(true, std::memory_order_release);
}
}  // namespace

extern "C" {
void* malloc(size_t n) {
  void* p = __libc_malloc(n);
  track(p, n);
  return p;
}
void* calloc(size_t a, size_t b) {
  void* p = __libc_calloc(a, b);
  track(p, a * b);
  return p;
}
void* realloc(void* old, size_t n) {
  untrack(old);
  void* p = __libc_realloc(old, n);
  track(p, n);
  return p;
}
void free(void* p) {
  untrack(p);
  __libc_free(p);
}
void* memalign(size_t a, size_t n) {
  void* p = __libc_memalign(a, n);
  track(p, n);
  return p;
}
void* aligned_alloc(size_t a, size_t n) {
  void* p = __libc_memalign(a, n);
  track(p, n);
  return p;
}
int posix_memalign(void** r, size_t a, size_t n) {
  void* p = __libc_memalign(a, n);
  if (!p) return 12;
  *r = p;
  track(p, n);
  return 0;
}
}
