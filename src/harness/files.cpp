// files.cpp — page-cached files, file-system type, descriptor limit.
#include "harness/files.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <vector>

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
