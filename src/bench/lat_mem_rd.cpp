// lat_mem_rd — dependent-load latency through each level of the memory
// hierarchy (pointer chasing).
//
// One op    = one load whose address comes from the previous load, so loads
//             cannot overlap: ns per op is the latency of one load.
//             stride: the chain visits the array in address order, one
//             pointer every `stride` bytes (64 or 128), wrapping at the end;
//             random: one pointer per 64-byte line, lines visited in a
//             random order (one cycle through all of them, fixed seed), which
//             defeats the hardware prefetchers.
// Timed     = run() only: nothing but the chain of loads, unrolled by 8; the
//             walk continues where the previous run stopped. The array is
//             mapped, faulted in and linked in setup.
// Placement = unpinned unless --cpu.
// Caveats   = the stride chain is sequential, so at sizes beyond the caches
//             the prefetchers hide part of the memory latency (lmbench's
//             curve has the same property); random shows the full latency,
//             plus TLB misses once the array is larger than the TLB reach
//             (4 KB pages unless transparent huge pages apply, see meta.json).
//             Compare the steps with the cache sizes in meta.json. The
//             largest size follows the machine: 256 MB, or a power of two
//             at least 4x the last-level cache where memory allows it
//             (meta.json: memory_sizes).
#include <cstring>
#include <vector>

#include "harness/bench.hpp"
#include "harness/memory.hpp"

namespace {

constexpr std::size_t kLine = 64;

class Chase final : public kbench::Fixture {
 public:
  explicit Chase(bool random) : random_(random) {}

  void setup(kbench::Context& ctx) override {
    const std::uint64_t kb = ctx.param_u64("size_kb", 1, 64ull << 20);
    const std::uint64_t stride = random_ ? kLine : ctx.param_u64("stride");
    if (stride < sizeof(void*) || stride % sizeof(void*) != 0)
      kbench::bad_param("stride must be a multiple of " + std::to_string(sizeof(void*)));
    const std::size_t size = kb * 1024;
    if (size < 2 * stride) kbench::bad_param("size_kb must hold at least two strides");
    kbench::require_memory(size + (random_ ? size / kLine * sizeof(std::uint32_t) : 0),
                           "lat_mem_rd " + ctx.variant());
    buf_ = kbench::Buffer(size, 0);
    const std::size_t n = size / stride;
    char* base = buf_.data();
    auto at = [&](std::size_t i) { return reinterpret_cast<void**>(base + i * stride); };
    if (!random_) {
      for (std::size_t i = 0; i < n; ++i) *at(i) = at((i + 1) % n);
    } else {
      // A random cycle: the walk goes through every line before it repeats.
      kbench::link_random_cycle(base, n, stride);
    }
    // Every page read once before the samples: a random walk's short
    // samples would otherwise meet pages for the first time, which on a VM
    // can cost 20x a load (reference: benchmarks.md).
    kbench::read_every_page(base, size);
    cur_ = at(0);
  }

  void run(std::uint64_t iters) override { kbench::chase(cur_, iters); }

 private:
  bool random_;
  kbench::Buffer buf_;
  void** cur_ = nullptr;
};

// 1 KB to 256 MB, then one size of at least 4x the last-level cache where
// memory allows it (memory.hpp: memory_ladder_kb): the "main mem" row.
// (The machine read once: both ladders end at the same size.)
std::vector<std::string> sizes_kb(std::uint64_t factor) {
  static const kbench::MemorySizing sizing = kbench::memory_sizing();
  return kbench::memory_ladder_kb(1, factor, sizing);
}

const auto kCurve = kbench::curve("mem_latency", "Dependent-load latency against array size (lat_mem_rd)", "size_kb")
                        .log_y().cache_lines();

}  // namespace

// Powers of 2 for the stride-64 curve, of 4 for the others (run time); the
// cache levels come from the random chain (a stride walk is the prefetcher).
KBENCH_MAIN("lat_mem_rd", kbench::category("Memory latency", 60).bench_rank(22),
            kbench::cases({kbench::sweep(kbench::fixture<Chase>("stride", false).memory_bound().param("stride", "64").curve(kCurve),
                                         "size_kb", sizes_kb(2)),
                           kbench::sweep(kbench::fixture<Chase>("stride", false).memory_bound().param("stride", "128").curve(kCurve)
                                             .summary(kbench::column("sequential", 5).note("stride 128, largest")
                                                          .largest("size_kb")),
                                         "size_kb", sizes_kb(4)),
                           kbench::sweep(kbench::fixture<Chase>("random", true).memory_bound().curve(kCurve)
                                             .summary(kbench::column("L", 1).note("random chain").cache_levels("size_kb")),
                                         "size_kb", sizes_kb(4))}))
