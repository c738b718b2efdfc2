// ctl_machine — control cases: user-space work whose cost no kernel can
// change, run through a whole suite run to track the machine's own speed.
//
// One op    = chain: one load whose address comes from the previous load, in
//             a random cycle over 64 cache lines (one 4 KB buffer): the L1
//             load-to-use latency;
//             alu:   one step x = x * A + C of a 64-bit multiply-add chain,
//             each step depending on the previous one (multiply latency
//             plus an add);
//             copy:  one memcpy of a 16 KB source to a 16 KB destination
//             (32 KB in all: L1 on some CPUs, L2 on every current one);
//             mem:   one pass summing every 8-byte word of a 64 MB buffer
//             (the bw_mem rd loop): the memory system's bandwidth. A
//             memory-bound control: on shared and virtual machines memory
//             bandwidth switches regimes for minutes while the three above
//             (core and L1/L2) do not move, so the scripts judge the
//             memory-bound cases (bw_mem, lat_mem_rd, bw_file_rd,
//             bw_mmap_rd) against it and the others against the three.
//             llc:   one load of a random chase through every line of a
//             16 MB buffer in 4 KB pages: the latency of a cache the size
//             of a shared last-level cache, which moves with what the
//             machine's other tenants keep in it (a 16 MB random chase
//             moved 84, 128, 48 ns over three A/A runs while the DRAM
//             bandwidth held). Memory-bound too: when it moves, the
//             memory-bound cases are not judged.
// Timed     = run() only. The buffers are mapped, written (every page
//             faulted in) and the chain linked in setup; the harness's setup
//             probe, one run(1), then brings the lines in and warms the code.
// Placement = unpinned unless --cpu. Every case is marked control: the
//             driver runs them interleaved with the other cases.
// Why no kernel can change them: run() makes no system call, so there is no
//             kernel entry and no mitigation on that path; the pages were
//             faulted in by setup, so run() takes no page fault; 4 KB (one
//             page) and 32 KB (eight pages) are far below any TLB's reach,
//             so there is no TLB miss whose walk the kernel's page tables
//             could make longer; alu touches no memory at all. What is left is
//             the core and its L1/L2 caches. mem's buffer is in 4 KB pages
//             (MADV_NOHUGEPAGE), so the kernel's huge-page policy does not
//             decide its page size; its sequential walk takes one TLB miss
//             per 64 lines, whose page walk hits the paging-structure caches
//             and is hidden behind the streaming loads.
// Caveats   = interrupts, preemption, a busy SMT sibling, another VM on the
//             host (steal) and the CPU's clock (governor, boost, thermal
//             limits) still change them, which is exactly what they are for;
//             the run_delay_ns, steal_ns, migrations and nivcsw keys of each
//             sample show the first ones. The kernel does set some of the
//             machine's speed: the frequency policy, and per-task
//             speculation controls (SSBD slows loads that follow stores, so
//             copy more than chain) — meta.json records governor and
//             mitigations. NUMA balancing, compaction or swap could still
//             unmap a buffer page; a sample's minflt/majflt would show it.
//             copy uses libc's memcpy, picked by the CPU's features (which a
//             kernel booted with clearcpuid= could hide), and the L2 is
//             physically indexed, so the pages the kernel hands out decide
//             set conflicts — negligible for eight pages in a multi-way L2.
#include <cstring>
#include <vector>

#include "harness/bench.hpp"
#include "harness/memory.hpp"

namespace {

constexpr std::size_t kLine = 64;
constexpr std::size_t kChainBytes = 4096;       // 64 lines: in L1 on every CPU
constexpr std::size_t kCopyBytes = 16 * 1024;   // per buffer; 32 KB touched
// Beyond the last-level cache of current server parts (32-64 MB per socket
// slice), where bw_mem's regime changes showed (64-256 MB moved 25-40%).
constexpr std::size_t kMemBytes = 64 * 1024 * 1024;
// The size of the shared last-level cache of many current parts, and of
// the lat_mem_rd array an A/A pair saw move 33% with no DRAM regime change.
constexpr std::size_t kLlcBytes = 16 * 1024 * 1024;

class Chain final : public kbench::Fixture {
 public:
  void setup(kbench::Context&) override {
    buf_ = kbench::Buffer(kChainBytes, 0);
    // One random cycle through every line, the same in every run, so that
    // the control never changes.
    cur_ = kbench::link_random_cycle(buf_.data(), kChainBytes / kLine, kLine);
  }

  void run(std::uint64_t iters) override { kbench::chase(cur_, iters); }

 private:
  kbench::Buffer buf_;
  void** cur_ = nullptr;
};

class LlcChase final : public kbench::Fixture {
 public:
  void setup(kbench::Context&) override {
    kbench::require_memory(kLlcBytes, "ctl_machine llc");
    // 4 KB pages, as mem: the kernel's huge-page policy does not decide how
    // many TLB misses the chase takes. The cycle is the same in every run.
    buf_ = kbench::Buffer(kLlcBytes, 0, /*no_huge=*/true);
    cur_ = kbench::link_random_cycle(buf_.data(), kLlcBytes / kLine, kLine);
  }

  void run(std::uint64_t iters) override { kbench::chase(cur_, iters); }

 private:
  kbench::Buffer buf_;
  void** cur_ = nullptr;
};

class Alu final : public kbench::Fixture {
 public:
  void run(std::uint64_t iters) override {
    // Knuth's MMIX LCG constants: an odd multiplier keeps the chain from
    // collapsing to a constant. The multiplier sits in a register (opaque),
    // so each step is one imul and one add.
    const std::uint64_t a = kbench::opaque<std::uint64_t>(6364136223846793005ull);
    std::uint64_t x = x_;
    while (iters--) {
      x = x * a + 1442695040888963407ull;
      // An empty asm on x: no instruction, but the compiler can no longer
      // fold several steps into one (x * a^2 + ...) or skip any.
      asm volatile("" : "+r"(x));
    }
    x_ = x;
    kbench::do_not_optimize(x_);
  }

 private:
  std::uint64_t x_ = 1;
};

class Copy final : public kbench::Fixture {
 public:
  void setup(kbench::Context&) override {
    src_ = kbench::Buffer(kCopyBytes, 0x5a);
    dst_ = kbench::Buffer(kCopyBytes, 0);
  }

  void run(std::uint64_t iters) override {
    char* dst = dst_.data();
    const char* src = src_.data();
    while (iters--) {
      std::memcpy(dst, src, kCopyBytes);
      // dst escapes and memory is clobbered: every copy is observable, so
      // none of them is dropped as a dead store of the next one.
      kbench::do_not_optimize(dst);
    }
  }

 private:
  kbench::Buffer src_, dst_;
};

class MemRead final : public kbench::Fixture {
 public:
  void setup(kbench::Context& ctx) override {
    kbench::require_memory(kMemBytes, "ctl_machine mem");
    buf_ = kbench::Buffer(kMemBytes, 0x11, /*no_huge=*/true);
    ctx.set_bytes_per_op(kMemBytes);
  }

  void run(std::uint64_t iters) override {
    while (iters--) {
      std::uint64_t sum = kbench::sum_words(buf_.data(), kMemBytes);
      kbench::do_not_optimize(sum);
    }
  }

 private:
  kbench::Buffer buf_;
};

}  // namespace

KBENCH_MAIN("ctl_machine", kbench::category("Machine controls", 90).bench_rank(90),
            {kbench::fixture<Chain>("chain").control(), kbench::fixture<Alu>("alu").control(),
             kbench::fixture<Copy>("copy").control(),
             kbench::fixture<MemRead>("mem").bandwidth().memory_bound().control(),
             kbench::fixture<LlcChase>("llc").memory_bound().control()})
