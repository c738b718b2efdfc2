// memory.hpp — memory for the memory and virtual-memory benchmarks.
//
// Buffers are anonymous private mappings, faulted in and written in full
// when they are made (untimed setup), so no timed loop ever takes a first
// touch fault or reads the kernel's shared zero page. A case that needs more
// memory than the kernel says is available is skipped (exit 77) instead of
// pushing the machine into reclaim, whose cost would land in the numbers.
// The word loops shared by bw_mem and bw_mmap_rd live here so that the two
// read a buffer with exactly the same code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/sys.hpp"

namespace kbench {

std::size_t page_size();

// MemAvailable from /proc/meminfo, in bytes; without that file (no /proc
// mounted) or that line (kernels before 3.14), free plus buffer memory from
// sysinfo(2), which needs no file and counts less than MemAvailable would.
std::uint64_t mem_available_bytes();

// Asks the kernel not to back [addr, addr + bytes) with transparent huge
// pages (madvise MADV_NOHUGEPAGE; addr page-aligned). Returns false when
// the kernel has no transparent huge pages at all (EINVAL: built without
// CONFIG_TRANSPARENT_HUGEPAGE, as Debian's PREEMPT_RT kernels are; or
// KBENCH_MISSING=thp): then no mapping gets huge pages and there is nothing
// to avoid. Any other error ends the binary (exit 1).
bool no_huge_pages(void* addr, std::size_t bytes);

// Exit 77 ("needs N MB of free memory, M MB available") unless `bytes` plus
// a safety margin is available now.
void require_memory(std::uint64_t bytes, const std::string& what);

// ---- The memory sweeps' sizes, from the machine (memory_sizes.cpp) -------
//
// lat_mem_rd and bw_mem sweep size_kb over a fixed ladder of powers of two up
// to 256 MB, the same on every machine, so that a size present on two hosts
// compares. Their largest size is meant to be main memory, but a last-level
// cache of 480 MB (a big server, or a VM that reports its host's) holds half
// of a 256 MB array. So past 256 MB each sweep gets one more size: the first
// power of two at least kMainMemoryFactor times the last-level cache, where
// the memory allows it (at most an eighth of MemAvailable, so that bw_mem's
// two buffers take at most a quarter), else the largest power of two that
// memory allows. A bigger host simply has an extra size.

// The directory the CPU's caches are described in (index*/level, type, size):
// /sys/devices/system/cpu/cpu0/cache, or $KBENCH_CACHE_SYSFS, a directory of
// the same shape, for the tests only (a machine with another cache, faked).
// The driver's meta.json reads its "cache" from the same place.
std::string cache_sysfs_dir();

// The last-level cache in KB: the largest data or unified cache of the
// highest level described in `dir`; 0 when it describes none (some VMs).
std::uint64_t last_level_cache_kb(const std::string& dir = cache_sysfs_dir());

// An array at least this many times the last-level cache is "main memory":
// a random walk finds at most a quarter of its lines in the cache.
constexpr std::uint64_t kMainMemoryFactor = 4;
// The fixed ladder ends here (256 MB); the machine's size, if any, follows.
constexpr std::uint64_t kLadderTopKb = 262144;
// Never more than this (64 GB: what lat_mem_rd and bw_mem accept).
constexpr std::uint64_t kLadderCeilingKb = 64ull << 20;

struct MemorySizing {
  std::uint64_t llc_kb = 0;          // 0: the machine reports no cache
  std::uint64_t main_memory_kb = 0;  // kMainMemoryFactor x llc_kb (0: unknown)
  std::uint64_t cap_kb = 0;          // the largest power of two <= MemAvailable / 8
  std::uint64_t largest_kb = kLadderTopKb;
  // true: the largest size is main memory; false: it is not (memory did not
  // allow it); no answer (llc_kb 0) is false too, the caller tells them apart.
  bool reaches_main_memory() const { return llc_kb > 0 && largest_kb >= main_memory_kb; }
};

// The rule above for a cache of `llc_kb` KB and `avail_bytes` of MemAvailable.
MemorySizing memory_sizing(std::uint64_t llc_kb, std::uint64_t avail_bytes);
// ... for this machine, now.
MemorySizing memory_sizing();

// The sweep's sizes in KB: first_kb, first_kb * factor, ... up to kLadderTopKb,
// then sizing.largest_kb when it is larger.
std::vector<std::string> memory_ladder_kb(std::uint64_t first_kb, std::uint64_t factor,
                                          const MemorySizing& sizing = memory_sizing());

// Links `n` slots of `stride` bytes from `base` into one random cycle
// (Sattolo's algorithm, a fixed seed: the same cycle in every run), each
// slot holding the address of the next, so a walk visits every slot before
// it repeats and no prefetcher can guess the next one. Returns the first.
void** link_random_cycle(char* base, std::size_t n, std::size_t stride);

// Reads one word of every page of [base, base + bytes). On a VM the first
// read of a page after it was written can cost microseconds (seen: 4-9 us a
// page on a 2-vCPU Firecracker guest, at some times and not others; no fault
// the guest counts), so a walk that meets each page for the first time in its
// timed samples measures that instead of the memory. Costs about 3 ms per 64
// MB when the pages are ready, 70-150 ms when they are not.
void read_every_page(const char* base, std::size_t bytes);

// Follows a chain of pointers `iters` times from `cur` (each element holds
// the address of the next) and leaves `cur` where it stopped, so the next
// call goes on from there: dependent loads, one per step, for the
// pointer-chasing latency cases and the L1 control. The end of the walk is
// used, so no load can be dropped. Unrolled by 8 so the loop's own branch
// is negligible next to the loads.
inline void chase(void**& cur, std::uint64_t iters) {
  void** p = cur;
  for (; iters >= 8; iters -= 8) {
    p = static_cast<void**>(*p);
    p = static_cast<void**>(*p);
    p = static_cast<void**>(*p);
    p = static_cast<void**>(*p);
    p = static_cast<void**>(*p);
    p = static_cast<void**>(*p);
    p = static_cast<void**>(*p);
    p = static_cast<void**>(*p);
  }
  while (iters--) p = static_cast<void**>(*p);
  do_not_optimize(p);
  cur = p;
}

// A page-aligned anonymous buffer, faulted in and filled with `fill` when it
// is made, unmapped when it is destroyed. Transparent huge pages follow the
// system setting (meta.json records it) unless `no_huge` is set (see
// no_huge_pages: a kernel without them is not an error).
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t bytes, unsigned char fill = 0x5a, bool no_huge = false);
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept;
  Buffer& operator=(Buffer&& o) noexcept;
  ~Buffer();

  char* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  void release();
  char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t mapped_ = 0;
};

// Sums every 8-byte word of [p, p + bytes) (bytes a multiple of 128, p
// 8-byte aligned). Eight independent accumulators and 128 bytes per turn
// keep the loop limited by the loads, not by one dependent add chain or by
// the loop's own overhead.
inline std::uint64_t sum_words(const void* p, std::size_t bytes) {
  const auto* w = static_cast<const std::uint64_t*>(p);
  const auto* end = w + bytes / 8;
  std::uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
  for (; w < end; w += 16) {
    a0 += w[0] + w[8];
    a1 += w[1] + w[9];
    a2 += w[2] + w[10];
    a3 += w[3] + w[11];
    a4 += w[4] + w[12];
    a5 += w[5] + w[13];
    a6 += w[6] + w[14];
    a7 += w[7] + w[15];
  }
  return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}

}  // namespace kbench
