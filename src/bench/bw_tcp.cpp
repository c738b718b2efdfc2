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
// Nagle     = off on the writer (TCP_NODELAY): a chunk is rarely a whole
//             number of segments, and with Nagle on the tail of a sample's
//             last chunk would wait for the ACK of the data before it; a
//             delayed ACK (up to 40 ms) would then sit inside a 2 ms sample.
//             The partner only sends the one-byte acknowledgement.
// Caveats   = default socket buffers and autotuning (net.ipv4.tcp_wmem,
//             tcp_rmem); IPv4 only. With --iters the partner counts the
//             chunks it got (timed + probe).
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "harness/bench.hpp"
#include "harness/ipc.hpp"

namespace {

class TcpStream final : public kbench::ipc::Stream {
  void open_channel(kbench::Context&, kbench::ipc::Ends& mine, kbench::ipc::Ends& theirs) override {
    const kbench::ipc::FdPair p = kbench::ipc::tcp_connection(AF_INET, false);
    const int one = 1;
    kbench::check(::setsockopt(p.a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one), "setsockopt TCP_NODELAY");
    mine = {p.a, p.a};
    theirs = {p.b, p.b};
  }
};

}  // namespace

KBENCH_MAIN("bw_tcp", kbench::category("Local communication bandwidth", 50).bench_rank(18),
            {kbench::fixture<TcpStream>("stream").param("chunk_kb", "64").bandwidth().two_party()
                 .summary(kbench::column("TCP", 3).note("64 KB, @same"))})
