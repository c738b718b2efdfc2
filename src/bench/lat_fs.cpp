// lat_fs — file creation and deletion, per file.
//
// One op    = create: openat(dir, name, O_CREAT|O_EXCL|O_WRONLY), a write of
//             size_kb KB (none for 0), close: a new file each op; delete:
//             unlinkat(dir, name) of a file of size_kb KB made before the
//             sample. Names are 8 characters, relative to an open directory
//             descriptor, so no op walks a longer path.
// Modes     = fresh: a new directory for every timed run (warm-up and
//             calibration included), so the kernel holds no dentry, negative
//             or not, for its names; reuse: one directory for all, as in
//             lmbench, so lookups meet the negative dentries left by the
//             previous run and the directory keeps the size it grew to.
//             Report both: the difference is a known source of false
//             regressions when kernels are compared.
// Timed     = run() only. Making the files a delete removes, deleting the
//             files a create made and the fresh directories are untimed
//             (before_sample / after_sample); after every run the directory
//             must hold exactly iters files (create) or none (delete).
// Placement = unpinned unless --cpu.
// Caveats   = the files live in a private directory under dir= (default
//             $TMPDIR, else /tmp), removed at exit and on a signal; fs_type
//             records its file system, mount_options its mount's options
//             (discard, barriers, journal mode), backing_dev and
//             backing_dev_type the disk behind it ("none" for tmpfs).
//             Journal commits, writeback and discards add waits on
//             disk-backed file systems: a case that spends most of its
//             time blocked is reported as waiting, not as a latency, by
//             the summary (its samples' utime, stime and elapsed). ext4 without a journal
//             passes over inodes freed in the last minutes when it allocates
//             one, so create there costs more the more files anything
//             deleted shortly before: compare such runs only with the same
//             history, and use dir= on a tmpfs for the VFS and dcache alone.
//             fs_journal records which (ext4 only: "jbd2", "none" or
//             "unknown"). The cases are declared file-system-bound: what
//             the runs before them left in the file system moves them
//             between runs (on ext4 without a journal, a 10 KB create took
//             0.1 to 1.4 ms within one run, as the inodes freed in the last
//             half minute grew), so the scripts measure their drift apart.
#include <cstdio>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "harness/bench.hpp"
#include "harness/files.hpp"
#include "harness/sys.hpp"

namespace {

using kbench::check;

class FsOps final : public kbench::Fixture {
 public:
  explicit FsOps(bool create) : create_(create) {}

  void setup(kbench::Context& ctx) override {
    fresh_ = ctx.param_choice("mode", {"fresh", "reuse"}) == "fresh";
    const std::uint64_t kb = ctx.param_u64("size_kb", 0, 65536);
    data_.assign(kb * 1024, 'x');
    const std::string& dir = ctx.param("dir");
    if (dir.find_first_of(",=") != std::string::npos) kbench::die("dir must not contain ',' or '='");
    if (dir.empty()) kbench::die("dir must not be empty (dir=default means $TMPDIR, else /tmp)");
    root_ = kbench::make_temp_dir("lat_fs", dir == "default" ? "" : dir);
    ctx.set_info("fs_type", kbench::fs_type_of(root_));
    const kbench::MountInfo mount = kbench::mount_of(root_);
    ctx.set_info("mount_options", mount.options);
    ctx.set_info("backing_dev", mount.device);
    ctx.set_info("backing_dev_type", mount.device_type);
    if (ctx.info().at("fs_type") == "ext4") ctx.set_info("fs_journal", ext4_journal(root_));
    root_fd_ = open_dir(root_);
    if (!fresh_) {
      check(::mkdirat(root_fd_, "reuse", 0700), "mkdir reuse directory");
      dir_fd_ = static_cast<int>(check(::openat(root_fd_, "reuse", O_RDONLY | O_DIRECTORY | O_CLOEXEC), "open reuse directory"));
    }
  }

  void before_sample(std::uint64_t iters) override {
    while (names_.size() < iters) {
      char name[32];
      std::snprintf(name, sizeof name, "f%07zu", names_.size());
      names_.emplace_back(name);
    }
    if (fresh_) {
      std::snprintf(fresh_name_, sizeof fresh_name_, "s%llu", static_cast<unsigned long long>(fresh_count_++));
      check(::mkdirat(root_fd_, fresh_name_, 0700), "mkdir fresh directory");
      dir_fd_ = static_cast<int>(check(::openat(root_fd_, fresh_name_, O_RDONLY | O_DIRECTORY | O_CLOEXEC), "open fresh directory"));
    }
    if (!create_)
      for (std::uint64_t i = 0; i < iters; ++i) create_one(names_[i].c_str());
    last_iters_ = iters;
  }

  void run(std::uint64_t iters) override {
    if (create_) {
      for (std::uint64_t i = 0; i < iters; ++i) create_one(names_[i].c_str());
    } else {
      for (std::uint64_t i = 0; i < iters; ++i) check(::unlinkat(dir_fd_, names_[i].c_str(), 0), "unlink");
    }
  }

  void after_sample() override {
    const std::uint64_t found = count_entries(dir_fd_);
    const std::uint64_t expected = create_ ? last_iters_ : 0;
    if (found != expected)
      kbench::die("directory holds " + std::to_string(found) + " files after the sample, expected " + std::to_string(expected));
    if (create_)
      for (std::uint64_t i = 0; i < last_iters_; ++i) check(::unlinkat(dir_fd_, names_[i].c_str(), 0), "unlink");
    if (fresh_) {
      check(::close(dir_fd_), "close");
      dir_fd_ = -1;
      check(::unlinkat(root_fd_, fresh_name_, AT_REMOVEDIR), "rmdir fresh directory");
    }
  }

  void teardown() override {
    if (dir_fd_ >= 0) check(::close(dir_fd_), "close");
    if (root_fd_ >= 0) check(::close(root_fd_), "close");
    dir_fd_ = root_fd_ = -1;
    kbench::remove_temp_dir(root_);
  }

 private:
  void create_one(const char* name) {
    const int fd = static_cast<int>(check(::openat(dir_fd_, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600), "create"));
    if (!data_.empty()) kbench::write_exact(fd, data_.data(), data_.size());
    check(::close(fd), "close");
  }

  // "jbd2" when the ext4 file system holding `path` has a journal (the
  // kernel lists it as /proc/fs/jbd2/<device>-<inode>), "none" without one,
  // "unknown" without /proc or /sys to tell.
  static std::string ext4_journal(const std::string& path) {
    struct stat st {};
    check(::stat(path.c_str(), &st), ("stat " + path).c_str());
    std::string dev;
    if (!kbench::simulated_missing("sysfs")) {
      std::ifstream f("/sys/dev/block/" + std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev)) + "/uevent");
      for (std::string line; std::getline(f, line);)
        if (line.rfind("DEVNAME=", 0) == 0) dev = line.substr(8);
    }
    if (dev.empty() || kbench::simulated_missing("procfs") || ::access("/proc/self", F_OK) != 0) return "unknown";
    DIR* d = ::opendir("/proc/fs/jbd2");
    if (!d) return "none";  // no journal of any file system: no jbd2 entry at all
    std::string found = "none";
    while (const dirent* e = ::readdir(d))
      if (!dev.empty() && std::string(e->d_name).rfind(dev + "-", 0) == 0) found = "jbd2";
    ::closedir(d);
    return found;
  }

  static int open_dir(const std::string& path) {
    return static_cast<int>(check(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC), ("open " + path).c_str()));
  }

  static std::uint64_t count_entries(int dir_fd) {
    const int fd = static_cast<int>(check(::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), "open directory"));
    DIR* d = ::fdopendir(fd);
    if (!d) kbench::die_errno("fdopendir", errno);
    std::uint64_t n = 0;
    errno = 0;
    while (const dirent* e = ::readdir(d)) {
      if (!(e->d_name[0] == '.' && (e->d_name[1] == '\0' || (e->d_name[1] == '.' && e->d_name[2] == '\0')))) ++n;
      errno = 0;
    }
    if (errno != 0) kbench::die_errno("readdir", errno);
    check(::closedir(d), "closedir");
    return n;
  }

  bool create_;
  bool fresh_ = false;
  std::vector<char> data_;
  std::string root_;
  int root_fd_ = -1, dir_fd_ = -1;
  std::vector<std::string> names_;
  char fresh_name_[32] = {};
  std::uint64_t fresh_count_ = 0, last_iters_ = 0;
};

const std::vector<std::string> kSizes{"0", "1", "4", "10"};
const auto kCreate = kbench::fixture<FsOps>("create", true).fs_bound().param("dir", "default");
const auto kDelete = kbench::fixture<FsOps>("delete", false).fs_bound().param("dir", "default");

kbench::Column fresh(const char* label, int order, const char* kb) {
  return kbench::column(label, order).note("fresh dir").at("size_kb", kb);
}

}  // namespace

KBENCH_MAIN("lat_fs", kbench::category("File and VM latency", 40).bench_rank(12),
            kbench::cases({kbench::sweep(kCreate.param("mode", "fresh").summary(fresh("0K create", 1, "0"))
                                             .summary(fresh("10K create", 3, "10")),
                                         "size_kb", kSizes),
                           kbench::sweep(kCreate.param("mode", "reuse"), "size_kb", kSizes),
                           kbench::sweep(kDelete.param("mode", "fresh").summary(fresh("0K delete", 2, "0"))
                                             .summary(fresh("10K delete", 4, "10")),
                                         "size_kb", kSizes),
                           kbench::sweep(kDelete.param("mode", "reuse"), "size_kb", kSizes)}))
