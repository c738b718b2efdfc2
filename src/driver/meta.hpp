// meta.hpp — the state of the machine, for meta.json.
//
// What makes two runs comparable or not: kernel, CPU, frequency policy,
// mitigations, THP, virtualisation, and what else was using the machine.
// Everything is read from uname, /proc and /sys; anything missing (a VM has
// no cpufreq, a container may hide /sys) becomes null, never an error. The
// state is recorded and warned about, never enforced.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "driver/discover.hpp"
#include "driver/json_value.hpp"

namespace kbench::driver {

// uname fields, also used for the results path.
struct HostIds {
  std::string host, kernel_release, kernel_version, arch;
};
HostIds host_ids();

// The static description of the machine and the build: host .. cxxflags in
// meta.json's order (reference: formats.md, the run directory).
JsonValue machine_description();

// The CPU's name from /proc/cpuinfo's text: x86's "model name"; on arm64,
// which has none, the cores' implementer and part ("ARM Neoverse-N1
// (0x41/0xd0c r3p1)", "4x ARM Cortex-A55 (...) + 4x ARM Cortex-A76 (...)"
// on a big.LITTLE machine); else another field that names it.
std::optional<std::string> cpu_model_of(const std::string& cpuinfo);
// [{"level", "type", "size_kb", "line_bytes"}] of the index* directories of
// DIR (/sys/devices/system/cpu/cpu0/cache); null when there are none. On
// arm64 the sizes come from the firmware (device tree or ACPI PPTT): a
// guest without them has levels and types with null sizes.
JsonValue cache_levels(const std::string& dir);
// meta.json's memory_sizes: how the memory sweeps' largest size was chosen
// on this machine (harness/memory.hpp: at least 4x the last-level cache, as
// memory allows) and which size_kb values the run plans for each bench of
// memory-bound cases: {"llc_kb", "cache_dir", "main_memory_kb", "cap_kb",
// "largest_kb", "reaches_main_memory", "sizes_kb": {bench: [KB, ...]}};
// llc_kb, main_memory_kb and reaches_main_memory null when the machine
// reports no cache.
JsonValue memory_sizes(const std::vector<Case>& planned);
// The architecture the binaries were compiled for ("aarch64", "x86_64").
const char* build_arch();

// [1, 5, 15 minute load average] or null.
JsonValue read_loadavg();
// {"pswpin": n, "pswpout": n} from /proc/vmstat, or null.
JsonValue read_swap_counters();
// The `top` other processes using the most CPU over `window_s` seconds:
// [{"pid", "comm", "cpu_pct"}], busiest first, below 1% left out.
JsonValue busy_processes(double window_s, int top);

// Warnings about the state at the start (governor, load, busy processes, VM)
// and at the end (swap activity and load during the run).
std::vector<std::string> start_warnings(const JsonValue& meta);
std::vector<std::string> end_warnings(const JsonValue& meta);

// Now, as 2024-05-01T12:34:56Z.
std::string utc_now_iso();

}  // namespace kbench::driver
