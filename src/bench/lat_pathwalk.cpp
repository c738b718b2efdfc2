// lat_pathwalk — path lookup (the dentry-cache walk) as seen by stat().
//
// One op    = fstatat(dirfd, path, &st, 0) of a relative path of `depth`
//             components, each `name_len` characters long, from a directory
//             descriptor of the private temporary directory (so the walk is
//             exactly those components, not the temporary directory's own
//             absolute path):
//             positive: the path exists (depth-1 directories, then a file);
//             negative: the depth-1 directories exist and the last
//                       component does not: the call fails with ENOENT,
//                       which is checked on every op (any other result is
//                       a failure). After the first op the kernel answers
//                       from a negative dentry.
// Timed     = run() only; making the directories and the file is setup.
// Placement = unpinned unless --cpu.
// Caveats   = everything is in the dentry cache after the first op, so this
//             is the cached-lookup path (RCU walk), not the file system's
//             own lookup; fs_type records the file system of $TMPDIR (else
//             /tmp) anyway, since permission checks and d_revalidate
//             differ between file systems. Security modules (meta.json does
//             not record them) add a cost per component.
#include <climits>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/bench.hpp"
#include "harness/files.hpp"

namespace {

using kbench::check;

class PathWalk final : public kbench::Fixture {
 public:
  explicit PathWalk(bool positive) : positive_(positive) {}

  void setup(kbench::Context& ctx) override {
    const std::uint64_t depth = ctx.param_u64("depth", 1, 64);
    const std::uint64_t len = ctx.param_u64("name_len", 1, NAME_MAX);
    if (depth * (len + 1) >= PATH_MAX) kbench::bad_param("depth * (name_len + 1) must be below PATH_MAX");
    const std::string& root = ctx.temp_dir();
    ctx.set_info("fs_type", kbench::fs_type_of(root));
    root_fd_ = static_cast<int>(check(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC), "open temporary directory"));
    for (std::uint64_t i = 0; i < depth; ++i) {
      std::string name;
      for (std::uint64_t k = 0; k < len; ++k) name += static_cast<char>('a' + (i + k) % 26);
      if (i > 0) path_ += '/';
      path_ += name;
      if (i + 1 < depth) {
        check(::mkdirat(root_fd_, path_.c_str(), 0700), "mkdir");
      } else if (positive_) {
        const int fd = static_cast<int>(check(::openat(root_fd_, path_.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600), "create"));
        check(::close(fd), "close");
      }
    }
  }

  void run(std::uint64_t iters) override {
    struct stat st;
    const char* path = path_.c_str();
    if (positive_) {
      while (iters--) check(::fstatat(root_fd_, path, &st, 0), "stat");
    } else {
      while (iters--) {
        if (::fstatat(root_fd_, path, &st, 0) == 0) kbench::die("stat: the missing path exists");
        if (errno != ENOENT) kbench::die_errno("stat (expected ENOENT)", errno);
      }
    }
  }

  void teardown() override {
    if (root_fd_ >= 0) check(::close(root_fd_), "close");
    root_fd_ = -1;
  }

 private:
  bool positive_;
  int root_fd_ = -1;
  std::string path_;
};

const std::vector<std::string> kDepths{"1", "2", "4", "8", "16"};

}  // namespace

KBENCH_MAIN("lat_pathwalk", kbench::category("File and VM latency", 40).bench_rank(13),
            kbench::cases({kbench::sweep(kbench::fixture<PathWalk>("positive", true).param("name_len", "8")
                                             .summary(kbench::column("path lookup", 8).note("4 names").at("depth", "4")),
                                         "depth", kDepths),
                           kbench::sweep(kbench::fixture<PathWalk>("negative", false).param("name_len", "8"), "depth", kDepths)}))
