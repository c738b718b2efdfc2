// lat_mmap — mapping and unmapping a page-cached file.
//
// One op    = mmap of the whole size_kb KB file (PROT_READ, MAP_SHARED), a
//             read of one byte in every page of the mapping, munmap.
// Timed     = run() only. The file is written and read back in setup (all of
//             it in the page cache) and opened once; the descriptor is
//             reused by every op, as lmbench's lat_mmap does.
// Placement = unpinned unless --cpu.
// Caveats   = the page faults dominate from a few pages up. One fault maps
//             up to 16 pages by fault-around, or a whole large folio when
//             the page cache holds large folios (ext4 and xfs on recent
//             kernels): the samples' minflt shows how many faults an op
//             took, and that number changes between kernels. The munmap
//             includes a TLB flush. fs_type records the file system of
//             $TMPDIR (else /tmp), where the file lives.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness/bench.hpp"
#include "harness/files.hpp"
#include "harness/memory.hpp"

namespace {

using kbench::check;

class MapTouchUnmap final : public kbench::Fixture {
 public:
  void setup(kbench::Context& ctx) override {
    const std::uint64_t kb = ctx.param_u64("size_kb", 1, 16777216);
    size_ = kb * 1024;
    path_ = kbench::cached_data_file(ctx, size_, "lat_mmap");
    fd_ = static_cast<int>(check(::open(path_.c_str(), O_RDONLY | O_CLOEXEC), "open"));
    page_ = kbench::page_size();
  }

  void run(std::uint64_t iters) override {
    while (iters--) {
      void* m = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd_, 0);
      if (m == MAP_FAILED) kbench::die_errno("mmap", errno);
      const volatile char* p = static_cast<const char*>(m);
      unsigned sum = 0;
      for (std::size_t off = 0; off < size_; off += page_) sum += static_cast<unsigned char>(p[off]);
      kbench::do_not_optimize(sum);
      check(::munmap(m, size_), "munmap");
    }
  }

  void teardown() override {
    if (fd_ >= 0) check(::close(fd_), "close");
    fd_ = -1;
  }

 private:
  std::size_t size_ = 0, page_ = 0;
  std::string path_;
  int fd_ = -1;
};

}  // namespace

// 4 KB to 64 MB in powers of 4.
KBENCH_MAIN("lat_mmap", kbench::category("File and VM latency", 40).bench_rank(14),
            kbench::sweep(kbench::fixture<MapTouchUnmap>("mmap").summary(kbench::column("mmap", 5).pick("size_kb", 1024)),
                          "size_kb", {"4", "16", "64", "256", "1024", "4096", "16384", "65536"}))
