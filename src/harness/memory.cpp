// memory.cpp — buffers, free-memory checks.
#include "harness/memory.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <unistd.h>

namespace kbench {

std::size_t page_size() {
  static const std::size_t size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

std::uint64_t mem_available_bytes() {
  std::uint64_t kb = 0;
  if (FILE* f = simulated_missing("procfs") ? nullptr : std::fopen("/proc/meminfo", "re")) {
    char line[256];
    while (std::fgets(line, sizeof line, f)) {
      unsigned long long v = 0;
      if (std::sscanf(line, "MemAvailable: %llu kB", &v) == 1) {
        kb = v;
        break;
      }
    }
    std::fclose(f);
  }
  if (kb > 0) return kb * 1024;
  struct sysinfo si;
  if (::sysinfo(&si) != 0) return 0;
  return (static_cast<std::uint64_t>(si.freeram) + si.bufferram) * si.mem_unit;
}

bool no_huge_pages(void* addr, std::size_t bytes) {
  const int rc = simulated_missing("thp") ? (errno = EINVAL, -1) : ::madvise(addr, bytes, MADV_NOHUGEPAGE);
  if (rc == 0) return true;
  if (errno == EINVAL) return false;
  die_errno("madvise MADV_NOHUGEPAGE", errno);
}

void require_memory(std::uint64_t bytes, const std::string& what) {
  const std::uint64_t avail = mem_available_bytes();
  // Keep a margin for the rest of the system: 256 MB or an eighth of what
  // is available, whichever is more, so the case never drives reclaim.
  const std::uint64_t margin = std::max<std::uint64_t>(256ull << 20, avail / 8);
  if (avail == 0) skip("cannot tell how much memory is free: no MemAvailable in /proc/meminfo, sysinfo failed (" + what + ")");
  if (bytes + margin > avail)
    skip(what + " needs " + std::to_string(bytes >> 20) + " MB of free memory plus a " +
         std::to_string(margin >> 20) + " MB margin; " + std::to_string(avail >> 20) + " MB available");
}

Buffer::Buffer(std::size_t bytes, unsigned char fill, bool no_huge) {
  const std::size_t ps = page_size();
  mapped_ = (bytes + ps - 1) / ps * ps;
  if (mapped_ == 0) mapped_ = ps;
  void* p = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) die_errno("mmap buffer", errno);
  data_ = static_cast<char*>(p);
  size_ = bytes;
  if (no_huge) no_huge_pages(data_, mapped_);
  // Writing every byte faults every page in (as real, private pages: a read
  // would map the shared zero page) and gives the data a known value.
  std::memset(data_, fill, mapped_);
  do_not_optimize(data_);
}

Buffer::Buffer(Buffer&& o) noexcept : data_(o.data_), size_(o.size_), mapped_(o.mapped_) {
  o.data_ = nullptr;
  o.size_ = o.mapped_ = 0;
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    release();
    data_ = o.data_;
    size_ = o.size_;
    mapped_ = o.mapped_;
    o.data_ = nullptr;
    o.size_ = o.mapped_ = 0;
  }
  return *this;
}

Buffer::~Buffer() { release(); }

void Buffer::release() {
  if (data_ && ::munmap(data_, mapped_) != 0) die_errno("munmap buffer", errno);
  data_ = nullptr;
  size_ = mapped_ = 0;
}

void** link_random_cycle(char* base, std::size_t n, std::size_t stride) {
  // 32-bit indexes: a 256 MB walk of 64-byte lines needs 16 MB of them.
  std::vector<std::uint32_t> next(n);
  for (std::size_t i = 0; i < n; ++i) next[i] = static_cast<std::uint32_t>(i);
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  for (std::size_t i = n - 1; i > 0; --i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    const std::size_t j = static_cast<std::size_t>(state % i);  // j < i
    std::swap(next[i], next[j]);
  }
  for (std::size_t i = 0; i < n; ++i)
    *reinterpret_cast<void**>(base + i * stride) = base + next[i] * stride;
  return reinterpret_cast<void**>(base);
}

void read_every_page(const char* base, std::size_t bytes) {
  const std::size_t ps = page_size();
  std::uintptr_t sum = 0;
  for (std::size_t off = 0; off < bytes; off += ps) sum += *reinterpret_cast<const volatile unsigned char*>(base + off);
  do_not_optimize(sum);
}

}  // namespace kbench
