// bw_unix — streaming bandwidth through an AF_UNIX stream socket pair.
//
// One op    = one chunk of `chunk_kb` KB written by this process and read
//             by the partner (bytes_per_op = chunk).
// Timed     = run(): writing the sample's chunks, then waiting for the
//             partner's one-byte acknowledgement (sent back on the same
//             socket) that the last byte arrived. The chunk count is sent
//             before the clock starts.
// Placement = the writer on --cpu, the reading partner on --partner-cpu.
// Caveats   = default socket buffer sizes (net.core.wmem_default and
//             friends) set how much is in flight; they are not changed. With
//             --iters the partner counts the chunks it got (timed + probe).
#include "harness/bench.hpp"
#include "harness/ipc.hpp"

namespace {

class UnixStream final : public kbench::ipc::Stream {
  void open_channel(kbench::Context&, kbench::ipc::Ends& mine, kbench::ipc::Ends& theirs) override {
    kbench::ipc::unix_channel(mine, theirs);
  }
};

}  // namespace

KBENCH_MAIN("bw_unix", kbench::category("Local communication bandwidth", 50).bench_rank(17),
            {kbench::fixture<UnixStream>("stream").param("chunk_kb", "64").bandwidth().two_party()
                 .summary(kbench::column("AF_UNIX", 2).note("64 KB, @same"))})
