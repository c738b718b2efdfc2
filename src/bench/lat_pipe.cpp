// lat_pipe — one-byte round trip between two processes over two pipes.
//
// One op    = write 1 byte into the partner's pipe, read the 1-byte echo
//             back from the other pipe.
// Timed     = run() only; pipe(), fork() and the partner's graceful end are
//             setup/teardown. The setup probe is one round trip.
// Placement = this process on --cpu, the echoing partner on --partner-cpu.
// Caveats   = on one CPU each op is two context switches (the samples'
//             nvcsw/iters shows about 2); across CPUs it is two cross-CPU
//             wake-ups, which are slow and erratic in many VMs. In --iters
//             mode the partner reports the round trips it echoed (timed ops
//             plus the setup probe).
#include "harness/bench.hpp"
#include "harness/ipc.hpp"

namespace {

class PipeRoundTrip final : public kbench::ipc::RoundTrip {
  void open_channel(kbench::Context&, kbench::ipc::Ends& mine, kbench::ipc::Ends& theirs) override {
    kbench::ipc::pipe_channel(mine, theirs);
  }
};

}  // namespace

KBENCH_MAIN("lat_pipe", kbench::category("Local communication latency", 30).bench_rank(6),
            {kbench::fixture<PipeRoundTrip>("rt").two_party().summary(kbench::column("pipe", 1).note("@same"))})
