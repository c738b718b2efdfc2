// lat_unix — one-byte round trip over an AF_UNIX stream socket pair.
//
// One op    = write 1 byte to the partner over a socketpair(AF_UNIX,
//             SOCK_STREAM), read its 1-byte echo back on the same socket.
// Timed     = run() only; socketpair(), fork() and the partner's graceful
//             end are setup/teardown. The setup probe is one round trip.
// Placement = this process on --cpu, the echoing partner on --partner-cpu.
// Caveats   = same as lat_pipe: two context switches per op on one CPU,
//             two cross-CPU wake-ups otherwise. In --iters mode the partner
//             reports the round trips it echoed (timed ops + setup probe).
#include "harness/bench.hpp"
#include "harness/ipc.hpp"

namespace {

class UnixRoundTrip final : public kbench::ipc::RoundTrip {
  void open_channel(kbench::Context&, kbench::ipc::Ends& mine, kbench::ipc::Ends& theirs) override {
    kbench::ipc::unix_channel(mine, theirs);
  }
};

}  // namespace

KBENCH_MAIN("lat_unix", kbench::category("Local communication latency", 30).bench_rank(7),
            {kbench::fixture<UnixRoundTrip>("rt").two_party().summary(kbench::column("AF_UNIX", 2).note("@same"))})
