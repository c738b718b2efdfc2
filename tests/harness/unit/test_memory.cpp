// test_memory.cpp — kbench::read_every_page: one read of every page of a
// buffer, so that a timed walk never meets a page for the first time; the
// memory sweeps' sizes from a last-level cache and MemAvailable.
#include <catch2/catch.hpp>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness/memory.hpp"

namespace {
long minor_faults() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}
}  // namespace

TEST_CASE("read_every_page: reads each page of the buffer, and none beyond it") {
  const std::size_t ps = kbench::page_size();
  const std::size_t pages = 256;
  // Never touched, no huge pages: each page's first read is a fault of its own
  // (the shared zero page mapped), which getrusage counts.
  void* p = mmap(nullptr, (pages + 1) * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(p != MAP_FAILED);
  char* base = static_cast<char*>(p);
  madvise(base, (pages + 1) * ps, MADV_NOHUGEPAGE);
  // the page after the buffer may not be read: reading it would kill the test
  REQUIRE(mprotect(base + pages * ps, ps, PROT_NONE) == 0);
  const long before = minor_faults();
  kbench::read_every_page(base, pages * ps);
  const long faults = minor_faults() - before;
  CHECK(faults >= static_cast<long>(pages));
  // (no upper bound: under ASan each read also touches its shadow page; the
  // page after the buffer is PROT_NONE, so a read beyond it would kill the test)
  // a second read of the same pages faults no more
  const long again = minor_faults();
  kbench::read_every_page(base, pages * ps);
  CHECK(minor_faults() - again <= 2);
  munmap(base, (pages + 1) * ps);
}

TEST_CASE("read_every_page: a buffer that ends inside a page reads that page too") {
  const std::size_t ps = kbench::page_size();
  void* p = mmap(nullptr, 3 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(p != MAP_FAILED);
  char* base = static_cast<char*>(p);
  madvise(base, 3 * ps, MADV_NOHUGEPAGE);
  REQUIRE(mprotect(base + 2 * ps, ps, PROT_NONE) == 0);
  const long before = minor_faults();
  kbench::read_every_page(base, ps + 100);  // two pages: all of one, 100 bytes of the next
  CHECK(minor_faults() - before >= 2);
  munmap(base, 3 * ps);
}

// ---- the memory sweeps' sizes (memory_sizes.cpp)

namespace {
constexpr std::uint64_t kGiB = 1ull << 30;
constexpr std::uint64_t kMiBkb = 1024;  // one MB in KB
}  // namespace

TEST_CASE("memory_sizing: a cache that 256 MB already dwarfs adds no size", "[memory_sizes]") {
  const auto s = kbench::memory_sizing(8 * kMiBkb, 23 * kGiB);  // this VM: 8 MB L3
  CHECK(s.main_memory_kb == 32 * kMiBkb);
  CHECK(s.largest_kb == kbench::kLadderTopKb);
  CHECK(s.reaches_main_memory());
  CHECK(s.cap_kb == 2 * kGiB / 1024);  // 23 GB / 8 = 2.9 GB: 2 GB
  // exactly 64 MB: 4x is 256 MB, the ladder's top
  CHECK(kbench::memory_sizing(64 * kMiBkb, 23 * kGiB).largest_kb == kbench::kLadderTopKb);
}

TEST_CASE("memory_sizing: a 480 MB last-level cache gets 2 GB where memory allows", "[memory_sizes]") {
  const auto s = kbench::memory_sizing(480 * kMiBkb, 23 * kGiB);
  CHECK(s.main_memory_kb == 1920 * kMiBkb);
  CHECK(s.largest_kb == 2048 * kMiBkb);  // the first power of two >= 1920 MB
  CHECK(s.reaches_main_memory());
  // 96 MB: 384 MB wanted, 512 MB the next power of two
  CHECK(kbench::memory_sizing(96 * kMiBkb, 23 * kGiB).largest_kb == 512 * kMiBkb);
}

TEST_CASE("memory_sizing: short of memory, the largest size memory allows, and it says so", "[memory_sizes]") {
  // 8 GB available: an eighth is 1 GB, short of the 2 GB a 480 MB cache wants
  const auto s = kbench::memory_sizing(480 * kMiBkb, 8 * kGiB);
  CHECK(s.cap_kb == 1024 * kMiBkb);
  CHECK(s.largest_kb == 1024 * kMiBkb);
  CHECK_FALSE(s.reaches_main_memory());
  // 1 GB available: never below the fixed ladder's 256 MB (whose cases skip
  // on their own when they do not fit: require_memory)
  const auto tiny = kbench::memory_sizing(480 * kMiBkb, kGiB);
  CHECK(tiny.largest_kb == kbench::kLadderTopKb);
  CHECK_FALSE(tiny.reaches_main_memory());
  // MemAvailable unknown (0): nothing beyond the ladder
  CHECK(kbench::memory_sizing(480 * kMiBkb, 0).largest_kb == kbench::kLadderTopKb);
  // never beyond 64 GB, whatever the cache and the memory
  CHECK(kbench::memory_sizing(64ull << 20, 1ull << 50).largest_kb == kbench::kLadderCeilingKb);
}

TEST_CASE("memory_sizing: no cache reported, no extra size and no answer", "[memory_sizes]") {
  const auto s = kbench::memory_sizing(0, 23 * kGiB);
  CHECK(s.largest_kb == kbench::kLadderTopKb);
  CHECK(s.main_memory_kb == 0);
  CHECK_FALSE(s.reaches_main_memory());
}

TEST_CASE("memory_ladder_kb: the fixed powers, then the machine's size", "[memory_sizes]") {
  const auto small = kbench::memory_sizing(8 * kMiBkb, 23 * kGiB);
  const std::vector<std::string> base4{"4", "16", "64", "256", "1024", "4096", "16384", "65536", "262144"};
  CHECK(kbench::memory_ladder_kb(4, 4, small) == base4);
  auto big4 = base4;
  big4.push_back("2097152");
  CHECK(kbench::memory_ladder_kb(4, 4, kbench::memory_sizing(480 * kMiBkb, 23 * kGiB)) == big4);
  const auto two = kbench::memory_ladder_kb(1, 2, small);
  CHECK(two.size() == 19);
  CHECK(two.front() == "1");
  CHECK(two.back() == "262144");
}

namespace {
// A directory shaped like /sys/devices/system/cpu/cpu0/cache.
std::string fake_cache_dir(const std::vector<std::array<const char*, 3>>& levels) {
  char tmpl[] = "/tmp/kbench-cache-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const std::string idx = dir + "/index" + std::to_string(i);
    REQUIRE(mkdir(idx.c_str(), 0700) == 0);
    const char* names[] = {"level", "type", "size"};
    for (int k = 0; k < 3; ++k) {
      std::FILE* f = std::fopen((idx + "/" + names[k]).c_str(), "w");
      REQUIRE(f != nullptr);
      std::fprintf(f, "%s\n", levels[i][k]);
      std::fclose(f);
    }
  }
  return dir;
}

void remove_fake_cache_dir(const std::string& dir, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const std::string idx = dir + "/index" + std::to_string(i);
    for (const char* name : {"level", "type", "size"}) std::remove((idx + "/" + name).c_str());
    rmdir(idx.c_str());
  }
  rmdir(dir.c_str());
}
}  // namespace

TEST_CASE("last_level_cache_kb: the largest data or unified cache of the highest level", "[memory_sizes]") {
  const std::vector<std::array<const char*, 3>> levels{
      {"1", "Data", "48K"}, {"1", "Instruction", "32K"}, {"2", "Unified", "2048K"}, {"3", "Unified", "480M"}};
  const std::string dir = fake_cache_dir(levels);
  CHECK(kbench::last_level_cache_kb(dir) == 480 * 1024);
  remove_fake_cache_dir(dir, levels.size());
  // an instruction cache of a higher level never counts
  const std::vector<std::array<const char*, 3>> odd{{"1", "Data", "32K"}, {"2", "Instruction", "1M"}};
  const std::string dir2 = fake_cache_dir(odd);
  CHECK(kbench::last_level_cache_kb(dir2) == 32);
  remove_fake_cache_dir(dir2, odd.size());
  // no such directory, or sizes that are not sizes: unknown
  CHECK(kbench::last_level_cache_kb("/nonexistent/kbench-cache") == 0);
  const std::vector<std::array<const char*, 3>> blank{{"3", "Unified", ""}};
  const std::string dir3 = fake_cache_dir(blank);
  CHECK(kbench::last_level_cache_kb(dir3) == 0);
  remove_fake_cache_dir(dir3, blank.size());
}
