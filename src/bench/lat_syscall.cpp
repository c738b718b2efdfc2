// lat_syscall — the cost of entering the kernel for the simplest calls.
//
// One op    = null: syscall(SYS_getppid) (a real kernel entry, never vDSO);
//             read: read 1 byte from /dev/zero; write: write 1 byte to
//             /dev/null; stat: fstatat(dirfd, "file") of a 0-byte file,
//             relative to an open descriptor of the private temporary
//             directory (one path component on every machine, however deep
//             $TMPDIR is and whatever mounts it crosses); fstat: fstat of
//             the open file; open: openat(dirfd, "file") + close.
// Timed     = run() only: opening /dev/zero, /dev/null, the directory and
//             creating the file are setup.
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

// The file-system cases work on one file in the private temporary directory,
// named relative to a descriptor of that directory: the lookup is one
// component on every machine (an absolute path under $TMPDIR would walk as
// many components, and cross as many mounts, as that machine's $TMPDIR has).
class FileOps final : public kbench::Fixture {
 public:
  enum class Op { stat, fstat, open };
  explicit FileOps(Op op) : op_(op) {}
  void setup(kbench::Context& ctx) override {
    dir_fd_ = static_cast<int>(check(::open(ctx.temp_dir().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC), "open temporary directory"));
    const int fd = static_cast<int>(check(::openat(dir_fd_, kName, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600), "create test file"));
    check(::close(fd), "close");
    ctx.set_info("fs_type", kbench::fs_type_of(ctx.temp_dir()));
    if (op_ == Op::fstat)
      fd_ = static_cast<int>(check(::openat(dir_fd_, kName, O_RDONLY | O_CLOEXEC), "open test file"));
  }
  void run(std::uint64_t iters) override {
    struct stat st;
    switch (op_) {
      case Op::stat:
        while (iters--) check(::fstatat(dir_fd_, kName, &st, 0), "fstatat");
        break;
      case Op::fstat:
        while (iters--) check(::fstat(fd_, &st), "fstat");
        break;
      case Op::open:
        while (iters--) check(::close(static_cast<int>(check(::openat(dir_fd_, kName, O_RDONLY | O_CLOEXEC), "openat"))), "close");
        break;
    }
  }
  void teardown() override {
    if (fd_ >= 0) check(::close(fd_), "close");
    if (dir_fd_ >= 0) check(::close(dir_fd_), "close");
    fd_ = dir_fd_ = -1;
  }

 private:
  static constexpr const char* kName = "file";
  Op op_;
  int dir_fd_ = -1, fd_ = -1;
};

// The summary's "null I/O" is the mean of read and write.
const auto kNullIo = kbench::column("null I/O", 2).note("(read+write)/2").mean();

}  // namespace

KBENCH_MAIN("lat_syscall", kbench::category("Processor and processes", 10).bench_rank(1),
            {kbench::loop("null", null_loop).summary(kbench::column("null call", 1)),
             kbench::fixture<DevIo>("read", false).summary(kNullIo),
             kbench::fixture<DevIo>("write", true).summary(kNullIo),
             kbench::fixture<FileOps>("stat", FileOps::Op::stat).summary(kbench::column("stat", 3)),
             kbench::fixture<FileOps>("fstat", FileOps::Op::fstat),
             kbench::fixture<FileOps>("open", FileOps::Op::open).summary(kbench::column("open/close", 4))})
