// lat_syscall — the cost of entering the kernel for the simplest calls.
//
// One op    = null: syscall(SYS_getppid) (a real kernel entry, never vDSO);
//             read: read 1 byte from /dev/zero; write: write 1 byte to
//             /dev/null; stat / fstat: of a 0-byte file in a private
//             temporary directory; open: open + close of that file.
// Timed     = run() only: opening /dev/zero, /dev/null and creating the file
//             are setup.
// Placement = unpinned unless --cpu.
// Caveats   = mitigations (PTI, retbleed, ...) dominate `null` on many CPUs;
//             compare them in meta.json before blaming the kernel. `stat`
//             depends on the file system of $TMPDIR (recorded as fs_type).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "harness/bench.hpp"
#include "harness/files.hpp"

namespace {

using kbench::check;

void null_loop(std::uint64_t iters) {
  while (iters--) check(::syscall(SYS_getppid), "getppid");
}

// Each I/O case opens what it needs in setup and closes it in teardown.
class DevIo final : public kbench::Fixture {
 public:
  explicit DevIo(bool write) : write_(write) {}
  void setup(kbench::Context&) override {
    fd_ = static_cast<int>(check(::open(write_ ? "/dev/null" : "/dev/zero", (write_ ? O_WRONLY : O_RDONLY) | O_CLOEXEC),
                                 write_ ? "open /dev/null" : "open /dev/zero"));
  }
  void run(std::uint64_t iters) override {
    char c = 0;
    if (write_) {
      while (iters--)
        if (check(::write(fd_, &c, 1), "write /dev/null") != 1) kbench::die("write /dev/null: short write");
    } else {
      while (iters--)
        if (check(::read(fd_, &c, 1), "read /dev/zero") != 1) kbench::die("read /dev/zero: short read");
    }
  }
  void teardown() override { check(::close(fd_), "close"); }

 private:
  bool write_;
  int fd_ = -1;
};

// The file-system cases work on one file in the private temporary directory.
class FileOps final : public kbench::Fixture {
 public:
  enum class Op { stat, fstat, open };
  explicit FileOps(Op op) : op_(op) {}
  void setup(kbench::Context& ctx) override {
    path_ = ctx.temp_dir() + "/file";
    const int fd = static_cast<int>(check(::open(path_.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600), "create test file"));
    check(::close(fd), "close");
    ctx.set_info("fs_type", kbench::fs_type_of(path_));
    if (op_ == Op::fstat)
      fd_ = static_cast<int>(check(::open(path_.c_str(), O_RDONLY | O_CLOEXEC), "open test file"));
  }
  void run(std::uint64_t iters) override {
    struct stat st;
    switch (op_) {
      case Op::stat:
        while (iters--) check(::stat(path_.c_str(), &st), "stat");
        break;
      case Op::fstat:
        while (iters--) check(::fstat(fd_, &st), "fstat");
        break;
      case Op::open:
        while (iters--) check(::close(static_cast<int>(check(::open(path_.c_str(), O_RDONLY | O_CLOEXEC), "open"))), "close");
        break;
    }
  }
  void teardown() override {
    if (fd_ >= 0) check(::close(fd_), "close");
  }

 private:
  Op op_;
  std::string path_;
  int fd_ = -1;
};

template <typename F, typename... A>
kbench::CaseSpec with(std::string variant, A... a) {
  return kbench::CaseSpec{std::move(variant), {}, kbench::Metric::latency, false,
                          [a...] { return std::unique_ptr<kbench::Fixture>(new F(a...)); }};
}

}  // namespace

KBENCH_MAIN("lat_syscall", {kbench::simple_case("null", null_loop), with<DevIo>("read", false),
                            with<DevIo>("write", true), with<FileOps>("stat", FileOps::Op::stat),
                            with<FileOps>("fstat", FileOps::Op::fstat), with<FileOps>("open", FileOps::Op::open)})
