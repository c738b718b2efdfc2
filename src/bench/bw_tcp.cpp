// bw_tcp — streaming bandwidth over one loopback TCP connection.
//
// One op    = one chunk of `chunk_kb` KB written by this process and read
//             by the partner (bytes_per_op = chunk).
// Timed     = run(): writing the sample's chunks, then waiting for the
//             partner's one-byte acknowledgement (sent back on the same
//             connection) that the last byte arrived. The chunk count is
//             sent before the clock starts; connecting (127.0.0.1, port 0,
//             the listener closed once accepted) is setup.
// Placement = the writer on --cpu, the reading partner on --partner-cpu.
// Caveats   = default socket buffers and autotuning (net.ipv4.tcp_wmem,
//             tcp_rmem), Nagle on as for any bulk sender; IPv4 only. With
//             --iters the partner counts the chunks it got (timed + probe).
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

KBENCH_MAIN("bw_tcp", kbench::category("Local communication bandwidth", 50).bench_rank(18),
            {kbench::fixture<TcpStream>("stream").param("chunk_kb", "64").bandwidth().two_party()
                 .summary(kbench::column("TCP", 3).note("64 KB, @same"))})
