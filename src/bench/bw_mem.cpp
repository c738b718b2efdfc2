// bw_mem — memory bandwidth of simple loops over a buffer, per cache level.
//
// One op    = one pass over the whole buffer of size_kb KB:
//             rd    sum every 8-byte word (the shared sum_words loop);
//             wr    store every 8-byte word;
//             rdwr  add one to every 8-byte word (a load and a store each);
//             cp    hand-written copy loop, 8-byte words, src -> dst;
//             bcopy memcpy(dst, src, size): named after lmbench's bcopy
//                   case, it calls libc's memcpy, not bcopy(3) (a memmove;
//                   the two buffers never overlap);
//             bzero memset(buf, 0, size).
//             bytes_per_op = size for every variant: for cp and bcopy that
//             is the bytes copied (each byte is read once and written once),
//             for rdwr the bytes updated. MB/s = size / time per pass.
// Timed     = run() only; the buffers (two for cp and bcopy) are mapped,
//             faulted in and written during setup.
// Placement = unpinned unless --cpu.
// Caveats   = the sizes step through L1, L2, L3 and memory: compare a size
//             with the cache sizes in meta.json (the largest follows the
//             machine's last-level cache: meta.json memory_sizes).
//             Transparent huge pages follow the system setting (meta.json:
//             thp). The loops are
//             kept by passing each pass's result through do_not_optimize and
//             a compiler barrier; cp's loop has a barrier per 64 bytes so
//             the compiler cannot turn it into a memcpy call, and wr stores a
//             value it cannot prove to be a byte pattern, so it cannot
//             become a memset. bcopy and bzero are libc's, whose speed
//             depends on the libc version as well as the kernel's placement.
#include <cstring>

#include "harness/bench.hpp"
#include "harness/memory.hpp"

namespace {

using kbench::Buffer;

enum class Op { rd, wr, rdwr, cp, bcopy, bzero };

class MemBw final : public kbench::Fixture {
 public:
  explicit MemBw(Op op) : op_(op) {}

  void setup(kbench::Context& ctx) override {
    const std::uint64_t kb = ctx.param_u64("size_kb", 1, 67108864);
    size_ = kb * 1024;
    const bool two = op_ == Op::cp || op_ == Op::bcopy;
    kbench::require_memory(size_ * (two ? 2 : 1), "bw_mem " + ctx.variant());
    a_ = Buffer(size_, 0x11);
    if (two) b_ = Buffer(size_, 0x22);
    store_ = kbench::opaque<std::uint64_t>(0x0102030405060708ull);  // wr cannot become memset
    ctx.set_bytes_per_op(size_);
  }

  void run(std::uint64_t iters) override {
    auto* a = reinterpret_cast<std::uint64_t*>(a_.data());
    auto* b = reinterpret_cast<std::uint64_t*>(b_.data());
    const std::size_t words = size_ / 8;
    switch (op_) {
      case Op::rd:
        while (iters--) {
          std::uint64_t sum = kbench::sum_words(a, size_);
          kbench::do_not_optimize(sum);
        }
        break;
      case Op::wr:
        while (iters--) {
          const std::uint64_t v = store_;
          for (std::size_t i = 0; i < words; i += 8) {
            a[i] = v; a[i + 1] = v; a[i + 2] = v; a[i + 3] = v;
            a[i + 4] = v; a[i + 5] = v; a[i + 6] = v; a[i + 7] = v;
          }
          kbench::clobber_memory();
        }
        break;
      case Op::rdwr:
        while (iters--) {
          for (std::size_t i = 0; i < words; i += 8) {
            a[i] += 1; a[i + 1] += 1; a[i + 2] += 1; a[i + 3] += 1;
            a[i + 4] += 1; a[i + 5] += 1; a[i + 6] += 1; a[i + 7] += 1;
          }
          kbench::clobber_memory();
        }
        break;
      case Op::cp:
        while (iters--) {
          for (std::size_t i = 0; i < words; i += 8) {
            const std::uint64_t w0 = a[i], w1 = a[i + 1], w2 = a[i + 2], w3 = a[i + 3];
            const std::uint64_t w4 = a[i + 4], w5 = a[i + 5], w6 = a[i + 6], w7 = a[i + 7];
            b[i] = w0; b[i + 1] = w1; b[i + 2] = w2; b[i + 3] = w3;
            b[i + 4] = w4; b[i + 5] = w5; b[i + 6] = w6; b[i + 7] = w7;
            kbench::clobber_memory();  // no memcpy: the loop stays the loop
          }
        }
        break;
      case Op::bcopy:
        while (iters--) {
          std::memcpy(b, a, size_);
          kbench::clobber_memory();
        }
        break;
      case Op::bzero:
        while (iters--) {
          std::memset(a, 0, size_);
          kbench::clobber_memory();
        }
        break;
    }
  }

 private:
  Op op_;
  std::size_t size_ = 0;
  std::uint64_t store_ = 0;
  Buffer a_, b_;
};

// Powers of 4 from 4 KB to 256 MB: two points per cache level on most CPUs
// and a total run time that fits the suite's budget; then one size of at
// least 4x the last-level cache where memory allows it (memory.hpp:
// memory_ladder_kb), so that "mem read" is memory on a machine whose cache
// holds 256 MB. Read once: every variant gets the same sizes.
const std::vector<std::string>& size_ladder() {
  static const std::vector<std::string> sizes = kbench::memory_ladder_kb(4, 4);
  return sizes;
}
const auto kCurve = kbench::curve("mem_bandwidth", "Memory bandwidth against size (bw_mem)", "size_kb");

// Every size of one variant, in the variant's panel of the chart.
std::vector<kbench::CaseSpec> sizes(const kbench::CaseSpec& c) {
  return kbench::sweep(c.bandwidth().memory_bound().curve(kCurve.panel(c.variant)), "size_kb", size_ladder());
}

}  // namespace

KBENCH_MAIN("bw_mem", kbench::category("Local communication bandwidth", 50).bench_rank(21),
            kbench::cases({sizes(kbench::fixture<MemBw>("rd", Op::rd).summary(kbench::column("mem read", 8).pick("size_kb"))),
                           sizes(kbench::fixture<MemBw>("wr", Op::wr).summary(kbench::column("mem write", 9).pick("size_kb"))),
                           sizes(kbench::fixture<MemBw>("rdwr", Op::rdwr)),
                           sizes(kbench::fixture<MemBw>("cp", Op::cp).summary(kbench::column("bcopy (hand)", 7).pick("size_kb"))),
                           sizes(kbench::fixture<MemBw>("bcopy", Op::bcopy).summary(kbench::column("bcopy (libc)", 6).pick("size_kb"))),
                           sizes(kbench::fixture<MemBw>("bzero", Op::bzero))}))
