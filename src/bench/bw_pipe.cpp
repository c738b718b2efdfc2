// bw_pipe — streaming bandwidth through a pipe.
//
// One op    = one chunk of `chunk_kb` KB written into the pipe by this
//             process and read out by the partner (bytes_per_op = chunk).
// Timed     = run(): writing the sample's chunks, then waiting for the
//             partner's one-byte acknowledgement that the last byte arrived
//             (one extra wake-up per sample, not per chunk). The chunk count
//             is sent to the partner before the clock starts.
// Placement = the writer on --cpu, the reading partner on --partner-cpu.
// Caveats   = with the default 64 KB pipe buffer a 64 KB chunk fills it, so
//             on one CPU writer and reader alternate once per chunk. With
//             --iters the partner counts the chunks it got (timed + probe).
#include "harness/bench.hpp"
#include "harness/ipc.hpp"

namespace {

class PipeStream final : public kbench::ipc::Stream {
  void open_channel(kbench::Context&, kbench::ipc::Ends& mine, kbench::ipc::Ends& theirs) override {
    kbench::ipc::pipe_channel(mine, theirs);
  }
};

}  // namespace

KBENCH_MAIN("bw_pipe", kbench::category("Local communication bandwidth", 50).bench_rank(16),
            {kbench::fixture<PipeStream>("stream").param("chunk_kb", "64").bandwidth().two_party()
                 .summary(kbench::column("pipe", 1).note("64 KB, @same"))})
