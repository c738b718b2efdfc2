// bw_mmap_rd — bandwidth of reading a page-cached file through mmap.
//
// One op    = sum every 8-byte word of the file of size_kb KB through a
//             read-only MAP_SHARED mapping (the same loop as bw_mem rd):
//             mmap_only  the file is opened and mapped once (setup) and the
//                        mapping faulted in by the setup probe, so ops take
//                        no faults;
//             open2close each op is open, mmap, the sum (which takes the
//                        page faults), munmap, close.
//             bytes_per_op = the file size.
// Timed     = run() only. The file is written in setup and read back once,
//             so every page is in the page cache: no op waits for a disk.
// Placement = unpinned unless --cpu.
// Caveats   = mmap_only is bw_mem rd over page-cache pages: any difference
//             from bw_mem rd comes from page placement and TLB reach.
//             open2close adds the page faults (one fault maps up to 16
//             pages by fault-around, or a whole large folio when the page
//             cache holds large folios: minflt per sample shows how many
//             faults a pass took) and the munmap with its TLB flush. The file lives in $TMPDIR (else /tmp), fs_type records
//             its file system.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness/bench.hpp"
#include "harness/files.hpp"
#include "harness/memory.hpp"

namespace {

using kbench::check;

class MmapRead final : public kbench::Fixture {
 public:
  explicit MmapRead(bool open_each) : open_each_(open_each) {}

  void setup(kbench::Context& ctx) override {
    const std::uint64_t kb = ctx.param_u64("size_kb", 1, 16777216);
    size_ = kb * 1024;
    path_ = kbench::cached_data_file(ctx, size_, "bw_mmap_rd");
    if (!open_each_) {
      const int fd = static_cast<int>(check(::open(path_.c_str(), O_RDONLY | O_CLOEXEC), "open"));
      map_ = map(fd);
      check(::close(fd), "close");
    }
    ctx.set_bytes_per_op(size_);
  }

  void run(std::uint64_t iters) override {
    while (iters--) {
      if (open_each_) {
        const int fd = static_cast<int>(check(::open(path_.c_str(), O_RDONLY | O_CLOEXEC), "open"));
        void* m = map(fd);
        std::uint64_t sum = kbench::sum_words(m, size_);
        kbench::do_not_optimize(sum);
        check(::munmap(m, size_), "munmap");
        check(::close(fd), "close");
      } else {
        std::uint64_t sum = kbench::sum_words(map_, size_);
        kbench::do_not_optimize(sum);
      }
    }
  }

  void teardown() override {
    if (map_) check(::munmap(map_, size_), "munmap");
    map_ = nullptr;
  }

 private:
  void* map(int fd) {
    void* m = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) kbench::die_errno("mmap", errno);
    return m;
  }

  bool open_each_;
  std::uint64_t size_ = 0;
  std::string path_;
  void* map_ = nullptr;
};

const auto kReread = kbench::reread_curve();
const auto& kSizes = kbench::kRereadSizesKb;

}  // namespace

KBENCH_MAIN("bw_mmap_rd", kbench::category("Local communication bandwidth", 50).bench_rank(20),
            kbench::cases({kbench::sweep(kbench::fixture<MmapRead>("mmap_only", false).bandwidth().memory_bound().curve(kReread)
                                             .summary(kbench::column("mmap reread", 5).pick("size_kb", 512)),
                                         "size_kb", kSizes),
                           kbench::sweep(kbench::fixture<MmapRead>("open2close", true).bandwidth().memory_bound().curve(kReread),
                                         "size_kb", kSizes)}))
