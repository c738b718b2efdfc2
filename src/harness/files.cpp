// files.cpp — page-cached files, file-system type, descriptor limit.
#include "harness/files.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <vector>

#include "harness/memory.hpp"
#include "harness/sys.hpp"

namespace kbench {

namespace {

const char* fs_name(unsigned long magic) {
  switch (magic) {
    case 0xEF53: return "ext4";  // also ext2/ext3: they share the magic
    case 0x01021994: return "tmpfs";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    case 0x794C7630: return "overlayfs";
    case 0x2FC12FC1: return "zfs";
    case 0xF2F52010: return "f2fs";
    case 0x6969: return "nfs";
    case 0x858458F6: return "ramfs";
    case 0x65735546: return "fuse";
    case 0x01021997: return "9p";
    case 0x73717368: return "squashfs";
    case 0x4d44: return "vfat";
    default: return nullptr;
  }
}

constexpr std::size_t kChunk = 1 << 20;

}  // namespace

std::string fs_type_of(const std::string& path) {
  struct statfs sfs;
  check(::statfs(path.c_str(), &sfs), ("statfs " + path).c_str());
  const auto magic = static_cast<unsigned long>(sfs.f_type);
  if (const char* name = fs_name(magic)) return name;
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%lx", magic);
  return hex;
}

namespace {

// Appends the comma-separated words of `more` to `into` that it lacks.
void add_options(std::string& into, const std::string& more) {
  std::stringstream ss(more);
  std::string w;
  while (std::getline(ss, w, ',')) {
    if (w.empty()) continue;
    if (("," + into + ",").find("," + w + ",") == std::string::npos) into += (into.empty() ? "" : ",") + w;
  }
}

std::string read_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

// The disk behind block device major:minor, and what kind it is.
void describe_device(unsigned maj, unsigned min, MountInfo& m) {
  const std::string link = "/sys/dev/block/" + std::to_string(maj) + ":" + std::to_string(min);
  char real[PATH_MAX];
  if (simulated_missing("sysfs") || !::realpath(link.c_str(), real)) return;
  std::string dev = real;
  if (::access((dev + "/partition").c_str(), F_OK) == 0) dev = dev.substr(0, dev.rfind('/'));
  const std::string name = dev.substr(dev.rfind('/') + 1);
  m.device = name;
  auto starts = [&](const char* p) { return name.rfind(p, 0) == 0; };
  if (starts("loop")) m.device_type = "loop";
  else if (starts("dm-")) m.device_type = "device-mapper";
  else if (starts("md")) m.device_type = "md-raid";
  else if (starts("zram")) m.device_type = "zram";
  else if (starts("nvme")) m.device_type = "nvme";
  else if (dev.find("/virtio") != std::string::npos) m.device_type = "virtio";
  else if (starts("xvd") || dev.find("/vbd-") != std::string::npos) m.device_type = "xen";
  else {
    const std::string rot = read_line(dev + "/queue/rotational");
    m.device_type = rot == "1" ? "rotational" : rot == "0" ? "ssd" : "unknown";
  }
}

}  // namespace

MountInfo mount_of(const std::string& path) {
  MountInfo m;
  struct stat st;
  check(::stat(path.c_str(), &st), ("stat " + path).c_str());
  char real[PATH_MAX];
  const std::string where = ::realpath(path.c_str(), real) ? real : path;
  std::ifstream f(simulated_missing("procfs") ? "" : "/proc/self/mountinfo");
  std::string line, best_point, best_opts, best_source;
  bool found = false;
  const std::string dev = std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
  // id parent maj:min root mount-point mount-options [optional...] - fstype source super-options
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string id, parent, majmin, root, point, opts, w;
    if (!(in >> id >> parent >> majmin >> root >> point >> opts) || majmin != dev) continue;
    while (in >> w && w != "-") {
    }
    std::string fstype, source, super;
    in >> fstype >> source >> super;
    // The deepest mount of this device that holds the path (bind mounts of
    // one device share the numbers).
    const bool holds = point == "/" || where == point || where.rfind(point + "/", 0) == 0;
    if (holds && (!found || point.size() >= best_point.size())) {
      found = true;
      best_point = point;
      best_opts = opts;
      add_options(best_opts, super);
      best_source = source;
    }
  }
  if (!found) return m;
  m.options = best_opts;
  if (major(st.st_dev) != 0) {
    describe_device(major(st.st_dev), minor(st.st_dev), m);
  } else {
    // No device of its own (tmpfs, overlayfs, NFS; btrfs's anonymous
    // device numbers): the source names the disk when there is one.
    struct stat ds;
    if (best_source.rfind("/dev/", 0) == 0 && ::stat(best_source.c_str(), &ds) == 0 && S_ISBLK(ds.st_mode)) {
      describe_device(major(ds.st_rdev), minor(ds.st_rdev), m);
    } else {
      m.device = m.device_type = "none";
    }
  }
  return m;
}

void make_cached_file(const std::string& path, std::uint64_t bytes) {
  const int fd = static_cast<int>(
      check(::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600), ("create " + path).c_str()));
  std::vector<char> chunk(kChunk);
  for (std::size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<char>('a' + i % 26);
  for (std::uint64_t done = 0; done < bytes;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, bytes - done));
    write_exact(fd, chunk.data(), n);
    done += n;
  }
  // Written back now, in setup: left dirty, a disk-backed file system would
  // write it back about 30 s later (dirty_expire_centisecs), in the middle
  // of this case's samples or of a later case's.
  check(::fsync(fd), ("fsync " + path).c_str());
  check(::close(fd), "close");
  read_whole_file(path);
}

std::string cached_data_file(Context& ctx, std::uint64_t bytes, const std::string& what) {
  require_memory(bytes, what + " (the file must stay in the page cache)");
  const std::string path = ctx.temp_dir() + "/data";
  make_cached_file(path, bytes);
  ctx.set_info("fs_type", fs_type_of(path));
  return path;
}

void read_whole_file(const std::string& path) {
  const int fd = static_cast<int>(check(::open(path.c_str(), O_RDONLY | O_CLOEXEC), ("open " + path).c_str()));
  std::vector<char> chunk(kChunk);
  for (;;) {
    const ssize_t got = ::read(fd, chunk.data(), chunk.size());
    if (got == 0) break;
    if (got < 0 && errno != EINTR) die_errno(("read " + path).c_str(), errno);
  }
  check(::close(fd), "close");
}

void require_fds(std::uint64_t needed, const std::string& what) {
  struct rlimit rl;
  check(::getrlimit(RLIMIT_NOFILE, &rl), "getrlimit RLIMIT_NOFILE");
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < needed) {
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < needed)
      skip(what + " needs " + std::to_string(needed) + " file descriptors; the limit (ulimit -n) is " +
           std::to_string(rl.rlim_max));
    rl.rlim_cur = needed;
    check(::setrlimit(RLIMIT_NOFILE, &rl), "setrlimit RLIMIT_NOFILE");
  }
}

}  // namespace kbench
