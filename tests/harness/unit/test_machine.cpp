// test_machine.cpp — what meta.json says about the machine's CPU
// (src/driver/meta.cpp): the CPU model from /proc/cpuinfo text on x86_64 and
// on arm64, where there is no "model name" and each processor's block names
// its core by the MIDR fields, and the cache levels from a sysfs-like
// directory, including an arm64 guest's whose firmware gives no sizes.
// The /proc/cpuinfo texts are laid out as the kernels print them.
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "driver/meta.hpp"

using kbench::driver::build_arch;
using kbench::driver::cache_levels;
using kbench::driver::cpu_model_of;
using kbench::driver::json_dump;

namespace {

// One arm64 processor block as arch/arm64/kernel/cpuinfo.c prints it.
std::string arm64_block(int n, const char* impl, const char* variant, const char* part, int rev) {
  return "processor\t: " + std::to_string(n) +
         "\nBogoMIPS\t: 50.00\n"
         "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid\n"
         "CPU implementer\t: " + impl + "\nCPU architecture: 8\nCPU variant\t: " + variant +
         "\nCPU part\t: " + part + "\nCPU revision\t: " + std::to_string(rev) + "\n\n";
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

}  // namespace

TEST_CASE("cpu_model_of: x86's model name", "[machine]") {
  const std::string text =
      "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\n"
      "model name\t: Intel(R) Xeon(R) Processor\nflags\t\t: fpu vme hypervisor\n\n"
      "processor\t: 1\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Processor\n\n";
  REQUIRE(cpu_model_of(text) == std::string("Intel(R) Xeon(R) Processor"));
}

TEST_CASE("cpu_model_of: an arm64 server names its core by implementer and part", "[machine]") {
  const std::string text = arm64_block(0, "0x41", "0x3", "0xd0c", 1) + arm64_block(1, "0x41", "0x3", "0xd0c", 1);
  REQUIRE(cpu_model_of(text) == std::string("ARM Neoverse-N1 (0x41/0xd0c r3p1)"));
}

TEST_CASE("cpu_model_of: a big.LITTLE arm64 machine names each kind with its count", "[machine]") {
  std::string text;
  for (int i = 0; i < 4; ++i) text += arm64_block(i, "0x41", "0x2", "0xd05", 0);
  for (int i = 4; i < 8; ++i) text += arm64_block(i, "0x41", "0x4", "0xd0b", 0);
  REQUIRE(cpu_model_of(text) ==
          std::string("4x ARM Cortex-A55 (0x41/0xd05 r2p0) + 4x ARM Cortex-A76 (0x41/0xd0b r4p0)"));
}

TEST_CASE("cpu_model_of: a Raspberry Pi's board lines do not hide its cores", "[machine]") {
  std::string text;
  for (int i = 0; i < 4; ++i) text += arm64_block(i, "0x41", "0x0", "0xd08", 3);
  text += "Hardware\t: BCM2835\nRevision\t: c03114\nSerial\t\t: 100000001\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n";
  REQUIRE(cpu_model_of(text) == std::string("ARM Cortex-A72 (0x41/0xd08 r0p3)"));
}

TEST_CASE("cpu_model_of: an unknown implementer or part is named by its numbers", "[machine]") {
  // QEMU's -cpu max: implementer 0 (reserved for software use).
  REQUIRE(cpu_model_of(arm64_block(0, "0x00", "0x0", "0x051", 0)) ==
          std::string("arm64 CPU (0x00/0x051 r0p0)"));
  REQUIRE(cpu_model_of(arm64_block(0, "0x41", "0x1", "0xfff", 2)) == std::string("ARM CPU (0x41/0xfff r1p2)"));
}

TEST_CASE("cpu_model_of: other layouts and nothing at all", "[machine]") {
  REQUIRE(cpu_model_of("processor\t: 0\nhart\t\t: 0\nisa\t\t: rv64imafdc\nmmu\t\t: sv39\n\n") == std::nullopt);
  REQUIRE(cpu_model_of("") == std::nullopt);
  REQUIRE(cpu_model_of("processor : 0\ncpu\t\t: POWER9 (raw), altivec supported\n\n") ==
          std::string("POWER9 (raw), altivec supported"));
  // A part without an implementer (a damaged or foreign text) names nothing by MIDR.
  REQUIRE(cpu_model_of("processor\t: 0\nCPU part\t: 0xd0c\n\n") == std::nullopt);
}

TEST_CASE("cache_levels: every index directory, null sizes where the firmware gives none", "[machine]") {
  char tmpl[] = "/tmp/kbench-unit-cache-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  struct Level {
    const char* name;
    const char* level;
    const char* type;
    const char* size;  // nullptr: no size file (an arm64 guest's device tree has none)
    const char* line;
  };
  const Level levels[] = {{"index0", "1", "Data", "64K", "64"},
                          {"index1", "1", "Instruction", "64K", "64"},
                          {"index2", "2", "Unified", "1024K", "64"},
                          {"index3", "3", "Unified", nullptr, nullptr}};
  for (const auto& l : levels) {
    const std::string d = dir + "/" + l.name;
    REQUIRE(mkdir(d.c_str(), 0700) == 0);
    write(d + "/level", std::string(l.level) + "\n");
    write(d + "/type", std::string(l.type) + "\n");
    if (l.size) write(d + "/size", std::string(l.size) + "\n");
    if (l.line) write(d + "/coherency_line_size", std::string(l.line) + "\n");
  }
  write(dir + "/uevent", "");  // not an index directory
  const auto list = cache_levels(dir);
  REQUIRE(list.is_array());
  REQUIRE(list.items().size() == 4);
  CHECK(json_dump(list.items()[0]) == R"({"level":1,"type":"Data","size_kb":64,"line_bytes":64})");
  CHECK(json_dump(list.items()[2]) == R"({"level":2,"type":"Unified","size_kb":1024,"line_bytes":64})");
  CHECK(json_dump(list.items()[3]) == R"({"level":3,"type":"Unified","size_kb":null,"line_bytes":null})");
  REQUIRE(std::system(("rm -rf '" + dir + "'").c_str()) == 0);
  CHECK(cache_levels(dir).is_null());  // no directory: null, never an error
}

TEST_CASE("build_arch: the architecture this binary was compiled for", "[machine]") {
#if defined(__aarch64__)
  REQUIRE(std::string(build_arch()) == "aarch64");
#elif defined(__x86_64__)
  REQUIRE(std::string(build_arch()) == "x86_64");
#else
  REQUIRE(std::string(build_arch()) != "");
#endif
}
