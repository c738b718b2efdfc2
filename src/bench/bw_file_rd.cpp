// bw_file_rd — read() bandwidth of a file in the page cache (the kernel's
// copy-to-user path).
//
// One op    = read the whole file of size_kb KB from offset 0 in 64 KB
//             read() calls into one 64 KB user buffer:
//             io_only    the file is opened once (setup); each op is an
//                        lseek to 0 and the reads;
//             open2close each op is open, the reads, close.
//             bytes_per_op = the file size.
// Timed     = run() only. The file is written in setup and read back once,
//             so every page is in the page cache: no op waits for a disk.
// Placement = unpinned unless --cpu.
// Caveats   = the data is copied by the kernel and not looked at by user
//             code (lmbench's bw_file_rd also adds it up): compare with
//             bw_mem bcopy of the same size, the user-space copy. The file
//             lives in $TMPDIR (else /tmp); its file system is recorded as
//             fs_type. The 64 KB buffer stays in L1/L2, so at large sizes
//             the source side (page cache) is what leaves the caches.
#include <fcntl.h>
#include <unistd.h>

#include "harness/bench.hpp"
#include "harness/files.hpp"
#include "harness/memory.hpp"

namespace {

using kbench::check;

constexpr std::size_t kChunk = 64 * 1024;

class FileRead final : public kbench::Fixture {
 public:
  explicit FileRead(bool open_each) : open_each_(open_each) {}

  void setup(kbench::Context& ctx) override {
    const std::uint64_t kb = ctx.param_u64("size_kb", 1, 16777216);
    size_ = kb * 1024;
    path_ = kbench::cached_data_file(ctx, size_, "bw_file_rd");
    buf_ = kbench::Buffer(kChunk);
    if (!open_each_) fd_ = static_cast<int>(check(::open(path_.c_str(), O_RDONLY | O_CLOEXEC), "open"));
    ctx.set_bytes_per_op(size_);
  }

  void run(std::uint64_t iters) override {
    while (iters--) {
      int fd = fd_;
      if (open_each_)
        fd = static_cast<int>(check(::open(path_.c_str(), O_RDONLY | O_CLOEXEC), "open"));
      else
        check(::lseek(fd, 0, SEEK_SET), "lseek");
      for (std::uint64_t done = 0; done < size_;) {
        const ssize_t got = ::read(fd, buf_.data(), kChunk);
        if (got <= 0) {
          if (got == 0) kbench::die("read: unexpected end of file");
          if (errno != EINTR) kbench::die_errno("read", errno);
          continue;
        }
        done += static_cast<std::uint64_t>(got);
      }
      if (open_each_) check(::close(fd), "close");
    }
  }

  void teardown() override {
    if (fd_ >= 0) check(::close(fd_), "close");
    fd_ = -1;
  }

 private:
  bool open_each_;
  std::uint64_t size_ = 0;
  std::string path_;
  kbench::Buffer buf_;
  int fd_ = -1;
};

const auto kReread = kbench::reread_curve();
const auto& kSizes = kbench::kRereadSizesKb;

}  // namespace

KBENCH_MAIN("bw_file_rd", kbench::category("Local communication bandwidth", 50).bench_rank(19),
            kbench::cases({kbench::sweep(kbench::fixture<FileRead>("io_only", false).bandwidth().memory_bound().curve(kReread)
                                             .summary(kbench::column("file reread", 4).pick("size_kb", 512)),
                                         "size_kb", kSizes),
                           kbench::sweep(kbench::fixture<FileRead>("open2close", true).bandwidth().memory_bound().curve(kReread),
                                         "size_kb", kSizes)}))
