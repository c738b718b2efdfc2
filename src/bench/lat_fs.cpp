// lat_fs — file creation and deletion, per file.
//
// One op    = create: openat(dir, name, O_CREAT|O_EXCL|O_WRONLY), a write of
//             size_kb KB (none for 0), close — a new file each op;
//             delete: unlinkat(dir, name) of a file of size_kb KB that
//             before_sample created (untimed).
//             Names are 8 characters ("f" and 7 digits), relative to an
//             open directory descriptor, so no op walks a longer path.
// Modes     = fresh: every sample (warm-up and calibration runs included)
//             works in a directory made for it before the clock starts and
//             removed after it stops, so the kernel holds no dentries, and
//             in particular no negative dentries, for its names;
//             reuse: one directory for all samples, the way lmbench does it:
//             each sample creates (or deletes) the same names that the
//             previous one deleted, so lookups meet the negative dentries
//             and the directory keeps whatever size it grew to.
//             Report both: the difference is a known source of false
//             regressions when kernels are compared.
// Timed     = run() only. Deleting the files a create sample made, making
//             the files a delete sample removes, and making and removing
//             the fresh directories are untimed (before_sample /
//             after_sample). After every run the directory is checked to
//             hold exactly what it should (iters files after create, none
//             after delete), so an exit 0 means each op really happened.
// Directory = --param dir=PATH puts the files in a private directory under
//             PATH; dir=default means $TMPDIR, else /tmp. fs_type records
//             the file system. Everything is removed at exit and on
//             SIGINT/SIGTERM/SIGHUP.
// Placement = unpinned unless --cpu.
// Caveats   = journaling file systems commit in the background (ext4 every
//             5 s), and dirty data is written back while samples run: both
//             add noise on disk-backed file systems; tmpfs has neither.
//             On ext4 without a journal (as on the VM this was written on)
//             the inode allocator passes over inodes freed in the last 60 s
//             (300 s while their inode-table block is dirty), reading the
//             inode table for each (find_inode_bit -> recently_deleted), so
//             a create costs more the more files were deleted shortly
//             before in the same block group — by this benchmark's own
//             earlier samples and cases, and by any other process. Seen
//             there: 10-30 us per create at first, 350-550 us after some
//             minutes of create/delete runs in /tmp. Compare such numbers
//             only between runs with the same history (and journal mode);
//             for the VFS and dcache costs alone, use dir= on a tmpfs.
#include <cstdio>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "harness/bench.hpp"
#include "harness/files.hpp"

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

std::vector<kbench::CaseSpec> make_cases() {
  std::vector<kbench::CaseSpec> out;
  for (const bool create : {true, false}) {
    for (const char* mode : {"fresh", "reuse"}) {
      const kbench::CaseSpec base{create ? "create" : "delete",
                                  {{"dir", "default"}, {"mode", mode}, {"size_kb", "0"}},
                                  kbench::Metric::latency, false,
                                  [create] { return std::unique_ptr<kbench::Fixture>(new FsOps(create)); }};
      const auto s = kbench::sweep(base, "size_kb", {"0", "1", "4", "10"});
      out.insert(out.end(), s.begin(), s.end());
    }
  }
  return out;
}

}  // namespace

KBENCH_MAIN("lat_fs", make_cases())
