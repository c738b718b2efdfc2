// files.hpp — files for the file-system and mapping benchmarks.
//
// The data benchmarks (bw_file_rd, bw_mmap_rd, lat_mmap, lat_pagefault)
// measure the page cache, not the disk: their file is written and synced in
// setup and read back once, so every page is cached, and clean, before the
// first timed run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/bench.hpp"

namespace kbench {

// The file-system type of `path` ("ext4", "tmpfs", ... or "0x<magic>").
std::string fs_type_of(const std::string& path);

// The mount a path lives on, as /proc/self/mountinfo and /sys say:
//   options      the mount's options and the file system's own (super)
//                options, each once, in that order ("rw,relatime,discard,...");
//   device       the block device behind it ("vda", "nvme0n1"; a partition
//                is named by its disk), "none" for a file system without one
//                (tmpfs, overlayfs, NFS), "unknown" where /proc or /sys
//                cannot tell;
//   device_type  what that device is: "virtio" or "xen" (a virtual disk),
//                "nvme", "ssd", "rotational", "loop", "device-mapper",
//                "md-raid", "zram", "none" or "unknown".
struct MountInfo {
  std::string options = "unknown", device = "unknown", device_type = "unknown";
};
MountInfo mount_of(const std::string& path);

// Creates `path` (O_EXCL) holding `bytes` bytes of a non-zero pattern,
// fsyncs it (no dirty page is left for writeback to meet during the
// samples), then reads it back in full so that all of it is in the page
// cache.
void make_cached_file(const std::string& path, std::uint64_t bytes);

// The page-cached data file of a case (lat_mmap, lat_pagefault file,
// bw_file_rd, bw_mmap_rd): exit 77 unless `bytes` (plus a margin) of memory
// is free ("WHAT needs N MB ..."), then `bytes` bytes at <temp dir>/data by
// make_cached_file, its file system recorded as fs_type. Returns the path.
std::string cached_data_file(Context& ctx, std::uint64_t bytes, const std::string& what);

// The file sizes of bw_file_rd and bw_mmap_rd, the same so that read() and
// mmap compare size for size on one chart: 512 KB (fits L2 on most CPUs) to
// 64 MB, powers of 4 and the 64 MB end.
inline const std::vector<std::string> kRereadSizesKb{"512", "2048", "8192", "32768", "65536"};
inline Curve reread_curve() {
  return curve("file_reread", "Reading a cached file: read() and mmap against file size", "size_kb");
}

// Reads the whole file once (brings it into the page cache).
void read_whole_file(const std::string& path);

// Makes a private directory with mkdtemp under `base` (default: $TMPDIR,
// else /tmp) named kbench-<tag>-XXXXXX; it is removed with everything in it
// at exit, on failure and on SIGINT/SIGTERM/SIGHUP. (Context::temp_dir() is
// the case's own one.)
std::string make_temp_dir(const std::string& tag, const std::string& base = "");
// Removes a directory made by make_temp_dir now (and forgets it).
void remove_temp_dir(const std::string& path);

// Makes the soft RLIMIT_NOFILE at least `needed` (up to the hard limit);
// exit 77 with a reason if that is not possible.
void require_fds(std::uint64_t needed, const std::string& what);

}  // namespace kbench
