// meta.cpp — reading the machine's state from uname, /proc and /sys.
//
// Every reader returns std::optional or null: the same binary runs on a
// laptop, in a VM and in an initramfs on a board, where different files are
// missing. Nothing here needs a shared library service (no NSS: the host
// name comes from uname), so a static build behaves the same.
#include "driver/meta.hpp"

#include "harness/memory.hpp"
#include "harness/sys.hpp"

#include <dirent.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#ifndef KBENCH_VERSION
#define KBENCH_VERSION "unknown"
#endif
#ifndef KBENCH_COMPILER
#define KBENCH_COMPILER "unknown"
#endif
#ifndef KBENCH_CXXFLAGS
#define KBENCH_CXXFLAGS "unknown"
#endif

namespace kbench::driver {

namespace {

// /proc or /sys not mounted (KBENCH_MISSING=procfs, sysfs simulates it):
// every reader below returns nothing for their files.
bool simulated_absent(const std::string& path) {
  return (path.rfind("/proc", 0) == 0 && simulated_missing("procfs")) ||
         (path.rfind("/sys", 0) == 0 && simulated_missing("sysfs"));
}

std::optional<std::string> read_file(const std::string& path) {
  if (simulated_absent(path)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return ss.str();
}

// The kernel's build configuration, as an identity: a 64-bit FNV-1a hash of
// /proc/config.gz (CONFIG_IKCONFIG_PROC) or else /boot/config-RELEASE, and
// which file it came from; null where neither exists. Two builds of one
// release with different configs get different hashes (and a rebuild may
// too: a different build is a different kernel to compare).
JsonValue kernel_config(const std::string& release) {
  for (const std::string& path : {std::string("/proc/config.gz"), "/boot/config-" + release}) {
    const auto data = read_file(path);
    if (!data || data->empty()) continue;
    std::uint64_t h = 14695981039346656037ull;
    for (unsigned char c : *data) {
      h ^= c;
      h *= 1099511628211ull;
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    JsonValue j = JsonValue::object();
    j.set("source", JsonValue::string(path));
    j.set("fnv1a64", JsonValue::string(hex));
    return j;
  }
  return JsonValue();
}

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::optional<std::string> read_trimmed(const std::string& path) {
  auto s = read_file(path);
  if (!s) return std::nullopt;
  return trim(*s);
}

std::optional<long long> read_int(const std::string& path) {
  auto s = read_trimmed(path);
  if (!s || s->empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s->c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return std::nullopt;
  return v;
}

JsonValue int_or_null(const std::optional<long long>& v) {
  return v ? JsonValue::integer(*v) : JsonValue();
}

// Sorted entry names of a directory matching a prefix; empty if unreadable.
std::vector<std::string> list_dir(const std::string& dir, const std::string& prefix = "") {
  std::vector<std::string> out;
  DIR* d = simulated_absent(dir) ? nullptr : opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    if (n.rfind(prefix, 0) == 0) out.push_back(n);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// The value of "key : value" lines in /proc/cpuinfo (first occurrence).
std::optional<std::string> cpuinfo_field(const std::string& cpuinfo, const std::string& key) {
  std::istringstream in(cpuinfo);
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    if (trim(line.substr(0, colon)) == key) return trim(line.substr(colon + 1));
  }
  return std::nullopt;
}

// "[madvise] always never" -> "madvise".
std::optional<std::string> selected_word(const std::string& path) {
  auto s = read_trimmed(path);
  if (!s) return std::nullopt;
  const auto b = s->find('[');
  const auto e = s->find(']');
  if (b == std::string::npos || e == std::string::npos || e < b) return *s;
  return s->substr(b + 1, e - b - 1);
}

// "0-3,5" -> 5.
int count_cpu_list(const std::string& list) {
  int n = 0;
  std::istringstream in(list);
  std::string part;
  while (std::getline(in, part, ',')) {
    part = trim(part);
    if (part.empty()) continue;
    const auto dash = part.find('-');
    if (dash == std::string::npos) {
      ++n;
    } else {
      const int a = std::atoi(part.substr(0, dash).c_str());
      const int b = std::atoi(part.substr(dash + 1).c_str());
      if (b >= a) n += b - a + 1;
    }
  }
  return n;
}

int online_cpus() {
  if (auto s = read_trimmed("/sys/devices/system/cpu/online")) {
    const int n = count_cpu_list(*s);
    if (n > 0) return n;
  }
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

JsonValue governor() {
  std::set<std::string> seen;
  for (const auto& cpu : list_dir("/sys/devices/system/cpu", "cpu")) {
    if (cpu.size() < 4 || cpu.find_first_not_of("0123456789", 3) != std::string::npos) continue;
    if (auto g = read_trimmed("/sys/devices/system/cpu/" + cpu + "/cpufreq/scaling_governor"))
      seen.insert(*g);
  }
  if (seen.empty()) return JsonValue();
  std::string joined;
  for (const auto& g : seen) joined += (joined.empty() ? "" : ",") + g;
  return JsonValue::string(joined);  // "a,b" when CPUs disagree
}

JsonValue boost() {
  if (auto b = read_int("/sys/devices/system/cpu/cpufreq/boost")) return JsonValue::boolean(*b != 0);
  if (auto nt = read_int("/sys/devices/system/cpu/intel_pstate/no_turbo"))
    return JsonValue::boolean(*nt == 0);
  return JsonValue();
}

JsonValue mitigations() {
  const std::string dir = "/sys/devices/system/cpu/vulnerabilities";
  const auto names = list_dir(dir);
  if (names.empty()) return JsonValue();
  JsonValue m = JsonValue::object();
  for (const auto& n : names) m.set(n, JsonValue::string_or_null(read_trimmed(dir + "/" + n)));
  return m;
}

// "32K" -> 32, "8M" -> 8192.
std::optional<long long> size_kb(const std::optional<std::string>& s) {
  if (!s || s->empty()) return std::nullopt;
  char* end = nullptr;
  const long long v = std::strtoll(s->c_str(), &end, 10);
  if (end == s->c_str()) return std::nullopt;
  switch (*end) {
    case 'K': case '\0': return v;
    case 'M': return v * 1024;
    case 'G': return v * 1024 * 1024;
    default: return std::nullopt;
  }
}

}  // namespace

JsonValue cache_levels(const std::string& dir) {
  const auto names = list_dir(dir, "index");
  if (names.empty()) return JsonValue();
  JsonValue list = JsonValue::array();
  for (const auto& n : names) {
    const std::string p = dir + "/" + n + "/";
    JsonValue c = JsonValue::object();
    c.set("level", int_or_null(read_int(p + "level")));
    c.set("type", JsonValue::string_or_null(read_trimmed(p + "type")));
    c.set("size_kb", int_or_null(size_kb(read_trimmed(p + "size"))));
    c.set("line_bytes", int_or_null(read_int(p + "coherency_line_size")));
    list.push(c);
  }
  return list;
}

JsonValue memory_sizes(const std::vector<Case>& planned) {
  const kbench::MemorySizing s = kbench::memory_sizing();
  const bool known = s.llc_kb > 0;
  auto kb_or_null = [&](std::uint64_t v) { return known ? JsonValue::unsigned_integer(v) : JsonValue(); };
  JsonValue m = JsonValue::object();
  m.set("llc_kb", kb_or_null(s.llc_kb));
  m.set("cache_dir", JsonValue::string(kbench::cache_sysfs_dir()));
  m.set("main_memory_kb", kb_or_null(s.main_memory_kb));
  m.set("cap_kb", JsonValue::unsigned_integer(s.cap_kb));
  m.set("largest_kb", JsonValue::unsigned_integer(s.largest_kb));
  m.set("reaches_main_memory", known ? JsonValue::boolean(s.reaches_main_memory()) : JsonValue());
  // What the plan holds (after --only and --skip), in the binaries' order:
  // the sizes that run, whatever the rule would say now.
  std::map<std::string, std::vector<std::uint64_t>> sizes;
  for (const auto& c : planned) {
    const auto decl = json_parse(c.declaration);
    const JsonValue* domain = decl ? decl->find("domain") : nullptr;
    if (!domain || domain->text() != "memory" || c.control) continue;
    std::istringstream params(c.params);
    std::string kv;
    while (std::getline(params, kv, ',')) {
      if (kv.rfind("size_kb=", 0) != 0) continue;
      auto& v = sizes[c.bench];
      const std::uint64_t kb = std::strtoull(kv.c_str() + 8, nullptr, 10);
      if (std::find(v.begin(), v.end(), kb) == v.end()) v.push_back(kb);
    }
  }
  JsonValue per_bench = JsonValue::object();
  for (auto& [bench, v] : sizes) {
    std::sort(v.begin(), v.end());
    JsonValue list = JsonValue::array();
    for (auto kb : v) list.push(JsonValue::unsigned_integer(kb));
    per_bench.set(bench, list);
  }
  m.set("sizes_kb", per_bench);
  return m;
}

namespace {

// What an arm64 /proc/cpuinfo names a core by: the MIDR fields "CPU
// implementer" and "CPU part" (hexadecimal), which the kernel prints per
// processor. The names of the common ones (as the kernel's cputype.h
// defines the numbers); any other is given by its numbers.
const char* arm_implementer(unsigned long impl) {
  switch (impl) {
    case 0x41: return "ARM";
    case 0x42: return "Broadcom";
    case 0x43: return "Cavium";
    case 0x46: return "Fujitsu";
    case 0x48: return "HiSilicon";
    case 0x4e: return "NVIDIA";
    case 0x50: return "APM";
    case 0x51: return "Qualcomm";
    case 0x61: return "Apple";
    case 0x6d: return "Microsoft";
    case 0xc0: return "Ampere";
    default: return nullptr;
  }
}

const char* arm_part(unsigned long impl, unsigned long part) {
  if (impl == 0x41) {
    switch (part) {
      case 0xd03: return "Cortex-A53";
      case 0xd04: return "Cortex-A35";
      case 0xd05: return "Cortex-A55";
      case 0xd07: return "Cortex-A57";
      case 0xd08: return "Cortex-A72";
      case 0xd09: return "Cortex-A73";
      case 0xd0a: return "Cortex-A75";
      case 0xd0b: return "Cortex-A76";
      case 0xd0c: return "Neoverse-N1";
      case 0xd0d: return "Cortex-A77";
      case 0xd40: return "Neoverse-V1";
      case 0xd41: return "Cortex-A78";
      case 0xd44: return "Cortex-X1";
      case 0xd46: return "Cortex-A510";
      case 0xd47: return "Cortex-A710";
      case 0xd48: return "Cortex-X2";
      case 0xd49: return "Neoverse-N2";
      case 0xd4f: return "Neoverse-V2";
      case 0xd80: return "Cortex-A520";
      case 0xd81: return "Cortex-A720";
      case 0xd82: return "Cortex-X4";
      default: return nullptr;
    }
  }
  if (impl == 0x61 && part == 0x022) return "M1 Icestorm";
  if (impl == 0x61 && part == 0x023) return "M1 Firestorm";
  if (impl == 0x48 && part == 0xd01) return "TaiShan v110";
  if (impl == 0xc0 && part == 0xac3) return "AmpereOne";
  if (impl == 0x43 && part == 0x0af) return "ThunderX2";
  if (impl == 0x46 && part == 0x001) return "A64FX";
  return nullptr;
}

std::optional<unsigned long> hex_field(const std::string& v) {
  if (v.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const unsigned long n = std::strtoul(v.c_str(), &end, 0);
  if (errno != 0 || end == v.c_str() || *end != '\0') return std::nullopt;
  return n;
}

// "ARM Cortex-A72 (0x41/0xd08 r0p3)" for one processor's block of lines,
// nullopt when the block has no implementer and part.
std::optional<std::string> arm_core(const std::string& block) {
  const auto impl = cpuinfo_field(block, "CPU implementer");
  const auto part = cpuinfo_field(block, "CPU part");
  if (!impl || !part) return std::nullopt;
  const auto i = hex_field(*impl);
  const auto p = hex_field(*part);
  if (!i || !p) return std::nullopt;
  char ids[96];
  const auto variant = cpuinfo_field(block, "CPU variant");
  const auto revision = cpuinfo_field(block, "CPU revision");
  const auto v = variant ? hex_field(*variant) : std::nullopt;
  const auto r = revision ? hex_field(*revision) : std::nullopt;
  if (v && r)
    std::snprintf(ids, sizeof ids, "0x%02lx/0x%03lx r%lup%lu", *i, *p, *v, *r);
  else
    std::snprintf(ids, sizeof ids, "0x%02lx/0x%03lx", *i, *p);
  // Implementer 0 is reserved for software use (QEMU's -cpu max says it).
  const char* vendor = arm_implementer(*i);
  const char* name = arm_part(*i, *p);
  std::string text = vendor ? vendor : "arm64";
  text += name ? std::string(" ") + name : " CPU";
  return text + " (" + ids + ")";
}

}  // namespace

std::optional<std::string> cpu_model_of(const std::string& cpuinfo) {
  // x86 (and 32-bit arm) say "model name".
  if (auto m = cpuinfo_field(cpuinfo, "model name"); m && !m->empty()) return m;
  // arm64: one block per processor, each with its MIDR fields; a big.LITTLE
  // machine has cores of two or three kinds, each named with its count.
  std::vector<std::pair<std::string, int>> kinds;
  std::istringstream in(cpuinfo);
  std::string line, block;
  auto flush = [&] {
    if (auto core = arm_core(block)) {
      auto it = std::find_if(kinds.begin(), kinds.end(), [&](const auto& k) { return k.first == *core; });
      if (it == kinds.end()) kinds.emplace_back(*core, 1);
      else ++it->second;
    }
    block.clear();
  };
  while (std::getline(in, line)) {
    if (trim(line).empty()) flush();
    else block += line + "\n";
  }
  flush();
  if (kinds.size() == 1) return kinds[0].first;
  if (kinds.size() > 1) {
    std::string all;
    for (const auto& [core, n] : kinds) all += (all.empty() ? "" : " + ") + std::to_string(n) + "x " + core;
    return all;
  }
  // Other architectures and old kernels: whatever names the CPU.
  for (const char* key : {"cpu model", "cpu", "Processor", "Hardware", "Model"}) {
    if (auto m = cpuinfo_field(cpuinfo, key); m && !m->empty()) return m;
  }
  return std::nullopt;
}

// The architecture the binaries were compiled for (meta.json build_arch):
// a cross build names its target, whatever machine built it.
const char* build_arch() {
#if defined(__aarch64__)
  return "aarch64";
#elif defined(__x86_64__)
  return "x86_64";
#elif defined(__i386__)
  return "i686";
#elif defined(__arm__)
  return "arm";
#elif defined(__riscv) && __riscv_xlen == 64
  return "riscv64";
#elif defined(__powerpc64__)
  return "ppc64";
#elif defined(__s390x__)
  return "s390x";
#else
  return "unknown";
#endif
}

namespace {

JsonValue virtualization(const std::optional<std::string>& cpuinfo) {
  std::optional<bool> flag;
  if (cpuinfo) {
    auto flags = cpuinfo_field(*cpuinfo, "flags");
    if (flags) flag = (" " + *flags + " ").find(" hypervisor ") != std::string::npos;
  }
  const auto hyp_type = read_trimmed("/sys/hypervisor/type");
  const auto vendor = read_trimmed("/sys/class/dmi/id/sys_vendor");
  const auto product = read_trimmed("/sys/class/dmi/id/product_name");
  // Vendor strings that only virtual machines report.
  static const char* const kVmVendors[] = {"QEMU", "KVM", "VMware", "innotek", "VirtualBox",
                                           "Xen", "Microsoft Corporation", "Amazon EC2",
                                           "Google", "Parallels", "Bochs", "OpenStack"};
  bool dmi_vm = false;
  for (const char* v : kVmVendors) {
    if ((vendor && vendor->find(v) != std::string::npos) ||
        (product && product->find(v) != std::string::npos))
      dmi_vm = true;
  }
  // Hyper-V bare-metal hosts also say "Microsoft Corporation"; only trust it
  // with a product name of "Virtual Machine".
  if (dmi_vm && vendor && *vendor == "Microsoft Corporation" &&
      !(product && product->find("Virtual") != std::string::npos))
    dmi_vm = false;
  // A device-tree machine (arm64 booted without UEFI: no DMI, and arm64's
  // /proc/cpuinfo has no hypervisor flag): QEMU's virt machine says so in
  // its root node's compatible strings (NUL-separated).
  std::optional<std::string> dt;
  if (auto c = read_file("/sys/firmware/devicetree/base/compatible")) {
    std::string joined;
    for (std::size_t b = 0; b < c->size();) {
      const std::size_t e = std::min(c->find('\0', b), c->size());
      if (e > b) joined += (joined.empty() ? "" : " ") + c->substr(b, e - b);
      b = e + 1;
    }
    if (!joined.empty()) dt = joined;
  }
  const bool dt_vm = dt && (" " + *dt + " ").find(" linux,dummy-virt ") != std::string::npos;
  const bool vm = (flag && *flag) || hyp_type || dmi_vm || dt_vm;
  JsonValue v = JsonValue::object();
  v.set("vm", (flag || hyp_type || vendor || product || dt) ? JsonValue::boolean(vm) : JsonValue());
  v.set("hypervisor_flag", flag ? JsonValue::boolean(*flag) : JsonValue());
  v.set("hypervisor_type", JsonValue::string_or_null(hyp_type));
  v.set("sys_vendor", JsonValue::string_or_null(vendor));
  v.set("product_name", JsonValue::string_or_null(product));
  v.set("dt_compatible", JsonValue::string_or_null(dt));
  return v;
}

struct ProcTimes {
  std::string comm;
  unsigned long long ticks;
};

std::map<int, ProcTimes> sample_processes() {
  std::map<int, ProcTimes> out;
  const int self = getpid();
  for (const auto& name : list_dir("/proc")) {
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const int pid = std::atoi(name.c_str());
    if (pid == self) continue;
    auto stat = read_file("/proc/" + name + "/stat");
    if (!stat) continue;  // exited meanwhile
    // comm may contain spaces and parentheses: it ends at the last ')'.
    const auto open = stat->find('(');
    const auto close = stat->rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) continue;
    std::istringstream rest(stat->substr(close + 2));
    std::string field;
    unsigned long long utime = 0, stime = 0;
    // Fields after comm start at 3 (state); utime is 14, stime 15.
    for (int i = 3; i <= 15 && rest >> field; ++i) {
      if (i == 14) utime = std::strtoull(field.c_str(), nullptr, 10);
      if (i == 15) stime = std::strtoull(field.c_str(), nullptr, 10);
    }
    out[pid] = {stat->substr(open + 1, close - open - 1), utime + stime};
  }
  return out;
}

double mono_now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

}  // namespace

std::string utc_now_iso() {
  const time_t t = time(nullptr);
  tm g;
  char buf[32];
  if (!gmtime_r(&t, &g) || strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &g) == 0) return "";
  return buf;
}

HostIds host_ids() {
  HostIds h{"unknown", "unknown", "", ""};
  utsname u;
  if (uname(&u) == 0) {
    h = {u.nodename, u.release, u.version, u.machine};
    if (h.host.empty()) h.host = "unknown";
    if (h.kernel_release.empty()) h.kernel_release = "unknown";
  }
  return h;
}

JsonValue machine_description() {
  const HostIds ids = host_ids();
  const auto cpuinfo = read_file("/proc/cpuinfo");
  JsonValue m = JsonValue::object();
  m.set("host", JsonValue::string(ids.host));
  m.set("kernel_release", JsonValue::string(ids.kernel_release));
  m.set("kernel_version", JsonValue::string(ids.kernel_version));
  m.set("kernel_cmdline", JsonValue::string_or_null(read_trimmed("/proc/cmdline")));
  // Which boot: runs of one boot share where the kernel and its data were
  // placed, so the scripts count boots apart from runs (the run level).
  m.set("boot_id", JsonValue::string_or_null(read_trimmed("/proc/sys/kernel/random/boot_id")));
  m.set("kernel_config", kernel_config(ids.kernel_release));
  m.set("arch", JsonValue::string(ids.arch));
  m.set("build_arch", JsonValue::string(build_arch()));
  m.set("cpu_model", JsonValue::string_or_null(cpuinfo ? cpu_model_of(*cpuinfo) : std::nullopt));
  const long conf = sysconf(_SC_NPROCESSORS_CONF);
  m.set("cpu_count", conf > 0 ? JsonValue::integer(conf) : JsonValue());
  m.set("cpus_online", JsonValue::string_or_null(read_trimmed("/sys/devices/system/cpu/online")));
  std::optional<long long> mem_kb;
  if (auto meminfo = read_file("/proc/meminfo")) {
    if (auto v = cpuinfo_field(*meminfo, "MemTotal")) mem_kb = std::atoll(v->c_str());
  }
  m.set("mem_total_kb", int_or_null(mem_kb));
  m.set("clocksource", JsonValue::string_or_null(read_trimmed(
                           "/sys/devices/system/clocksource/clocksource0/current_clocksource")));
  m.set("governor", governor());
  m.set("boost", boost());
  const auto smt = read_int("/sys/devices/system/cpu/smt/active");
  m.set("smt", smt ? JsonValue::boolean(*smt != 0) : JsonValue());
  m.set("mitigations", mitigations());
  JsonValue thp = JsonValue::object();
  thp.set("enabled", JsonValue::string_or_null(
                         selected_word("/sys/kernel/mm/transparent_hugepage/enabled")));
  thp.set("defrag", JsonValue::string_or_null(
                        selected_word("/sys/kernel/mm/transparent_hugepage/defrag")));
  m.set("thp", thp);
  m.set("aslr", int_or_null(read_int("/proc/sys/kernel/randomize_va_space")));
  m.set("virtualization", virtualization(cpuinfo));
  m.set("perf_event_paranoid", int_or_null(read_int("/proc/sys/kernel/perf_event_paranoid")));
  // (KBENCH_CACHE_SYSFS in the tests: the cache the binaries were sized for)
  m.set("cache", cache_levels(kbench::cache_sysfs_dir()));
  const long page = sysconf(_SC_PAGESIZE);
  m.set("page_size", page > 0 ? JsonValue::integer(page) : JsonValue());
  m.set("compiler", JsonValue::string(KBENCH_COMPILER));
  m.set("cxxflags", JsonValue::string(KBENCH_CXXFLAGS));
  m.set("suite_version", JsonValue::string(KBENCH_VERSION));
  return m;
}

JsonValue read_loadavg() {
  auto s = read_file("/proc/loadavg");
  if (!s) return JsonValue();
  double a, b, c;
  if (std::sscanf(s->c_str(), "%lf %lf %lf", &a, &b, &c) != 3) return JsonValue();
  JsonValue l = JsonValue::array();
  for (double v : {a, b, c}) l.push(JsonValue::real(v));
  return l;
}

JsonValue read_swap_counters() {
  auto s = read_file("/proc/vmstat");
  if (!s) return JsonValue();
  std::istringstream in(*s);
  std::string key;
  unsigned long long value;
  std::optional<unsigned long long> in_pages, out_pages;
  while (in >> key >> value) {
    if (key == "pswpin") in_pages = value;
    if (key == "pswpout") out_pages = value;
  }
  if (!in_pages || !out_pages) return JsonValue();
  JsonValue j = JsonValue::object();
  j.set("pswpin", JsonValue::unsigned_integer(*in_pages));
  j.set("pswpout", JsonValue::unsigned_integer(*out_pages));
  return j;
}

JsonValue busy_processes(double window_s, int top) {
  const long tck = sysconf(_SC_CLK_TCK);
  if (tck <= 0) return JsonValue();
  const double t0 = mono_now();
  const auto before = sample_processes();
  if (before.empty()) return JsonValue();  // no /proc
  timespec ts{static_cast<time_t>(window_s), static_cast<long>((window_s - double(long(window_s))) * 1e9)};
  // An interrupted sleep only shortens the window; the rate stays right.
  nanosleep(&ts, nullptr);
  const auto after = sample_processes();
  const double dt = mono_now() - t0;
  struct Busy {
    int pid;
    std::string comm;
    double pct;
  };
  std::vector<Busy> busy;
  for (const auto& [pid, a] : after) {
    auto b = before.find(pid);
    if (b == before.end() || b->second.comm != a.comm || a.ticks < b->second.ticks) continue;
    const double pct = double(a.ticks - b->second.ticks) / double(tck) / dt * 100.0;
    if (pct >= 1.0) busy.push_back({pid, a.comm, pct});
  }
  std::sort(busy.begin(), busy.end(), [](const Busy& x, const Busy& y) { return x.pct > y.pct; });
  if (busy.size() > static_cast<std::size_t>(top)) busy.resize(static_cast<std::size_t>(top));
  JsonValue list = JsonValue::array();
  for (const auto& b : busy) {
    JsonValue p = JsonValue::object();
    p.set("pid", JsonValue::integer(b.pid));
    p.set("comm", JsonValue::string(b.comm));
    p.set("cpu_pct", JsonValue::real(double(long(b.pct * 10 + 0.5)) / 10));
    list.push(p);
  }
  return list;
}

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

void load_warning(const JsonValue* load, const char* when, std::vector<std::string>& w) {
  if (!load || !load->is_array() || load->items().empty()) return;
  const auto one = load->items()[0].as_double();
  const int cpus = online_cpus();
  if (one && *one > 0.5 * cpus)
    w.push_back(std::string("load average ") + when + " was " + fmt("%.2f", *one) + " on " +
                std::to_string(cpus) + " online CPUs: other work competed with the benchmarks");
}

}  // namespace

namespace {

// "other processes were using the CPU <when>: a (35%), b (12%)" for those of
// meta[key] at 10% or more.
void busy_warning(const JsonValue* busy, const char* when, std::vector<std::string>& w) {
  if (!busy || !busy->is_array()) return;
  std::string names;
  for (const auto& p : busy->items()) {
    const auto pct = p.find("cpu_pct") ? p.find("cpu_pct")->as_double() : std::nullopt;
    if (!pct || *pct < 10.0) continue;
    names += (names.empty() ? "" : ", ") + p.get_string("comm").value_or("?") + " (" +
             fmt("%.0f", *pct) + "%)";
  }
  if (!names.empty()) w.push_back(std::string("other processes were using the CPU ") + when + ": " + names);
}

}  // namespace

std::vector<std::string> start_warnings(const JsonValue& meta) {
  std::vector<std::string> w;
  if (auto g = meta.get_string("governor"); g && *g != "performance")
    w.push_back("cpufreq governor is '" + *g +
                "', not 'performance': clock speed may change during the run");
  load_warning(meta.find("loadavg_before"), "at the start", w);
  busy_warning(meta.find("busy_processes"), "at the start", w);
  if (const JsonValue* v = meta.find("virtualization"); v && v->find("vm") && v->find("vm")->as_bool()) {
    std::string what = v->get_string("hypervisor_type")
                           .value_or(v->get_string("sys_vendor")
                                         .value_or(v->get_string("dt_compatible")
                                                       ? "device tree " + *v->get_string("dt_compatible")
                                                       : "hypervisor flag in /proc/cpuinfo"));
    w.push_back("running in a virtual machine (" + what +
                "): timings include the hypervisor's noise");
  }
  return w;
}

std::vector<std::string> end_warnings(const JsonValue& meta) {
  std::vector<std::string> w;
  const JsonValue* b = meta.find("swap_before");
  const JsonValue* a = meta.find("swap_after");
  if (b && a && b->is_object() && a->is_object()) {
    unsigned long long moved = 0;
    for (const char* k : {"pswpin", "pswpout"}) {
      const JsonValue* x = b->find(k);
      const JsonValue* y = a->find(k);
      if (!x || !y) continue;
      const unsigned long long before = x->as_uint().value_or(0);
      const unsigned long long after = y->as_uint().value_or(0);
      if (after > before) moved += after - before;
    }
    if (moved > 0)
      w.push_back("the system swapped " + std::to_string(moved) +
                  " pages during the run: memory pressure distorts timings");
  }
  // The load average at the end is mostly the suite's own two-party cases,
  // so it is recorded but not warned about; what else was busy is sampled
  // once the last benchmark has ended.
  busy_warning(meta.find("busy_processes_after"), "at the end", w);
  return w;
}

}  // namespace kbench::driver
