// memory_sizes.cpp — the memory sweeps' largest size, from the machine's
// last-level cache and free memory (memory.hpp says the rule and why).
#include <algorithm>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <string>

#include "harness/memory.hpp"

namespace kbench {

namespace {

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

// sysfs's "32K", "8192K", "8M" in KB; 0 when it is not a size.
std::uint64_t size_text_kb(const std::string& s) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (end == s.c_str()) return 0;
  switch (*end) {
    case 'K': case '\0': return v;
    case 'M': return v * 1024;
    case 'G': return v * 1024 * 1024;
    default: return 0;
  }
}

std::uint64_t floor_pow2(std::uint64_t v) {
  std::uint64_t p = 1;
  while (v / 2 >= p) p *= 2;
  return v ? p : 0;
}

std::uint64_t ceil_pow2(std::uint64_t v) {
  std::uint64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

}  // namespace

std::string cache_sysfs_dir() {
  const char* env = std::getenv("KBENCH_CACHE_SYSFS");
  return env && *env ? env : "/sys/devices/system/cpu/cpu0/cache";
}

std::uint64_t last_level_cache_kb(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return 0;
  long best_level = 0;
  std::uint64_t best_kb = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind("index", 0) != 0) continue;
    const std::string p = dir + "/" + name + "/";
    // An instruction cache never holds the arrays.
    if (first_line(p + "type").rfind("Instruction", 0) == 0) continue;
    const long level = std::atol(first_line(p + "level").c_str());
    const std::uint64_t kb = size_text_kb(first_line(p + "size"));
    if (level <= 0 || kb == 0) continue;
    if (level > best_level || (level == best_level && kb > best_kb)) {
      best_level = level;
      best_kb = kb;
    }
  }
  ::closedir(d);
  return best_kb;
}

MemorySizing memory_sizing(std::uint64_t llc_kb, std::uint64_t avail_bytes) {
  MemorySizing s;
  s.llc_kb = llc_kb;
  s.main_memory_kb = llc_kb * kMainMemoryFactor;
  // An eighth of what is available: bw_mem's cp and bcopy map two buffers,
  // so a case takes at most a quarter and the rest of the system keeps
  // plenty (require_memory's margin is an eighth on top).
  s.cap_kb = std::min(floor_pow2(avail_bytes / 8 / 1024), kLadderCeilingKb);
  if (s.main_memory_kb > kLadderTopKb) {
    const std::uint64_t want = ceil_pow2(s.main_memory_kb);
    s.largest_kb = std::max(kLadderTopKb, std::min(want, s.cap_kb));
  }
  return s;
}

MemorySizing memory_sizing() { return memory_sizing(last_level_cache_kb(), mem_available_bytes()); }

std::vector<std::string> memory_ladder_kb(std::uint64_t first_kb, std::uint64_t factor, const MemorySizing& sizing) {
  std::vector<std::string> out;
  for (std::uint64_t kb = first_kb; kb <= kLadderTopKb; kb *= factor) out.push_back(std::to_string(kb));
  if (sizing.largest_kb > kLadderTopKb) out.push_back(std::to_string(sizing.largest_kb));
  return out;
}

}  // namespace kbench
