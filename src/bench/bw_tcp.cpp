// bw_tcp — streaming bandwidth over one loopback TCP connection.
//
// One op    = one chunk of `chunk_kb` KB written by this process and read
//             by the partner (bytes_per_op = chunk).
// Timed     = run(): writing the sample's chunks, then waiting for the
//             partner's one-byte acknowledgement (sent back on the same
//             connection) that the last byte arrived. The chunk count is
//             sent before the clock starts. Connecting (127.0.0.1, port 0;
//             the listener is closed once the connection is accepted) is
//             setup.
// Placement = the writer on --cpu, the reading partner on --partner-cpu.
// Caveats   = default socket buffers and autotuning (net.ipv4.tcp_wmem,
//             tcp_rmem), Nagle left on as for any bulk sender. IPv4 only.
//             In --iters mode the partner reports the chunks it received
//             (timed chunks + the one-chunk setup probe).
#include <sys/socket.h>

#include "harness/bench.hpp"
#include "harness/ipc.hpp"

namespace {

class TcpStream final : public kbench::ipc::Stream {
  void open_channel(kbench::Context&, kbench::ipc::Ends& mine, kbench::ipc::Ends& theirs) override {
    const kbench::ipc::FdPair p = kbench::ipc::tcp_connection(AF_INET, false);
    mine = {p.a, p.a};
    theirs = {p.b, p.b};
  }
};

}  // namespace

KBENCH_MAIN("bw_tcp", {kbench::make_case<TcpStream>("stream", {{"chunk_kb", "64"}}, kbench::Metric::bandwidth, true)})
