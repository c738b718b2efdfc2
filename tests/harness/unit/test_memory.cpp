// test_memory.cpp — kbench::read_every_page: one read of every page of a
// buffer, so that a timed walk never meets a page for the first time.
#include <catch2/catch.hpp>
#include <sys/mman.h>
#include <sys/resource.h>

#include <cstddef>

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
