// lat_pagefault — the cost of making a page of a fresh mapping accessible:
// minor page faults, per page.
//
// One op    = the first access to one page (the page size, sysconf
//             _SC_PAGESIZE: 4 KB on x86, 16 or 64 KB on some arm64 and
//             ppc64 kernels) of a mapping made for the
//             sample, i.e. one page's share of the page faults:
//             file: a read of one byte per page of a read-only MAP_SHARED
//                   mapping of a 64 MB file that is in the page cache (no
//                   I/O); pages beyond 64 MB come from further mappings of
//                   the same file;
//             anon: a write of one byte per page of a private anonymous
//                   mapping (allocate and zero a page per fault), with
//                   transparent huge pages off for the mapping
//                   (MADV_NOHUGEPAGE), so every page is exactly one fault.
//                   Every sample says "thp": "off"; on a kernel without
//                   transparent huge pages (the advice fails with EINVAL,
//                   e.g. Debian's PREEMPT_RT kernels) there are no huge
//                   pages to avoid, the case runs the same, and every
//                   sample says "thp": "unavailable".
// Timed     = run() only: the touches, in address order. The mappings for
//             a sample's `iters` pages are made in before_sample and
//             unmapped in after_sample, untimed, so each sample faults fresh
//             mappings. A sample holds at most 1048576 pages (4 GB
//             of 4 KB pages).
// Placement = unpinned unless --cpu.
// Caveats   = for `file` one fault maps several pages: up to 16 by
//             fault-around, or a whole large folio when the page cache
//             holds large folios (recent ext4/xfs). ns per op is per page
//             touched, as in lmbench; minflt in each sample counts the
//             faults, so elapsed_ns / minflt is the cost of one fault, the
//             summary table's number. How many pages a fault maps changes
//             with the kernel, and also from run to run of one kernel with
//             the page cache's state (tests/validation/README.md, "The
//             page fault's two numbers"): ns per page and ns per fault
//             then move in opposite directions.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

#include "harness/bench.hpp"
#include "harness/files.hpp"
#include "harness/memory.hpp"

namespace {

using kbench::check;

constexpr std::uint64_t kFileBytes = 64ull << 20;
constexpr std::uint64_t kMaxPages = 1ull << 20;

class PageFault final : public kbench::Fixture {
 public:
  explicit PageFault(bool file) : file_(file) {}

  void setup(kbench::Context& ctx) override {
    page_ = kbench::page_size();
    if (!file_) {
      // Does the kernel have transparent huge pages to turn off? Asked once,
      // on a mapping of its own, so every sample carries the answer.
      void* m = ::mmap(nullptr, page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m == MAP_FAILED) kbench::die_errno("mmap anonymous", errno);
      thp_ = kbench::no_huge_pages(m, page_);
      check(::munmap(m, page_), "munmap");
      ctx.set_info("thp", thp_ ? "off" : "unavailable");
    }
    if (file_) {
      const std::string path = kbench::cached_data_file(ctx, kFileBytes, "lat_pagefault file");
      fd_ = static_cast<int>(check(::open(path.c_str(), O_RDONLY | O_CLOEXEC), "open"));
    }
  }

  void before_sample(std::uint64_t iters) override {
    if (iters > kMaxPages)
      kbench::die("lat_pagefault: at most " + std::to_string(kMaxPages) + " pages per sample (--iters)");
    const std::uint64_t bytes = iters * page_;
    if (file_) {
      for (std::uint64_t left = bytes; left > 0;) {
        const std::size_t len = static_cast<std::size_t>(std::min(left, kFileBytes));
        void* m = ::mmap(nullptr, len, PROT_READ, MAP_SHARED, fd_, 0);
        if (m == MAP_FAILED) kbench::die_errno("mmap file", errno);
        maps_.push_back({static_cast<char*>(m), len});
        left -= len;
      }
    } else {
      if (bytes > (256ull << 20)) kbench::require_memory(bytes, "lat_pagefault anon");
      void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m == MAP_FAILED) kbench::die_errno("mmap anonymous", errno);
      if (thp_ && !kbench::no_huge_pages(m, bytes)) kbench::die("madvise MADV_NOHUGEPAGE: refused after it was accepted in setup");
      maps_.push_back({static_cast<char*>(m), bytes});
    }
  }

  void run(std::uint64_t iters) override {
    const std::size_t page = page_;
    if (file_) {
      unsigned sum = 0;
      for (const Map& m : maps_) {
        const volatile char* p = m.addr;
        for (std::size_t off = 0; off < m.len && iters > 0; off += page, --iters)
          sum += static_cast<unsigned char>(p[off]);
      }
      kbench::do_not_optimize(sum);
    } else {
      volatile char* p = maps_[0].addr;
      for (std::size_t off = 0; iters > 0; off += page, --iters) p[off] = 1;
    }
  }

  void after_sample() override {
    for (const Map& m : maps_) check(::munmap(m.addr, m.len), "munmap");
    maps_.clear();
  }

  void teardown() override {
    if (fd_ >= 0) check(::close(fd_), "close");
    fd_ = -1;
  }

 private:
  struct Map {
    char* addr;
    std::size_t len;
  };
  bool file_;
  bool thp_ = false;  // anon: the kernel has transparent huge pages (and they are off for our mappings)
  std::size_t page_ = 0;
  int fd_ = -1;
  std::vector<Map> maps_;
};

}  // namespace

KBENCH_MAIN("lat_pagefault", kbench::category("File and VM latency", 40).bench_rank(15),
            {kbench::fixture<PageFault>("file", true).summary(kbench::column("page fault", 7).note("file, per fault").per("minflt")),
             kbench::fixture<PageFault>("anon", false)})
