// lat_tcp — round trip of a message over one loopback TCP connection.
//
// One op    = write `size` bytes to the partner, read the `size`-byte echo
//             back. TCP_NODELAY on both ends, so each message leaves at once.
// Timed     = run() only; listen/connect/accept (the listener on 127.0.0.1
//             or ::1, port 0, closed as soon as the connection is accepted),
//             fork() and the partner's graceful end are setup/teardown.
//             The setup probe is one untimed round trip.
// Placement = this process on --cpu, the echoing partner on --partner-cpu.
// Caveats   = a message larger than one read returns is reassembled with
//             several read() calls: part of the op. family=ipv6 exits 77
//             without an IPv6 loopback. In --iters mode the partner reports
//             the round trips it echoed (timed ops + the setup probe).
#include "harness/bench.hpp"
#include "harness/ipc.hpp"

namespace {

class TcpRoundTrip final : public kbench::ipc::RoundTrip {
  void open_channel(kbench::Context& ctx, kbench::ipc::Ends& mine, kbench::ipc::Ends& theirs) override {
    const kbench::ipc::FdPair p = kbench::ipc::tcp_connection(kbench::ipc::family_param(ctx), true);
    mine = {p.a, p.a};
    theirs = {p.b, p.b};
  }
  std::size_t message_size(kbench::Context& ctx) override {
    const std::uint64_t n = ctx.param_u64("size", 1, 16777216);
    return static_cast<std::size_t>(n);
  }
};

const auto kRt = kbench::fixture<TcpRoundTrip>("rt").two_party().param("family", "ipv4").param("size", "1");

}  // namespace

KBENCH_MAIN("lat_tcp", kbench::category("Local communication latency", 30).bench_rank(9),
            kbench::cases({kbench::sweep(kRt.summary(kbench::column("TCP", 4).note("1 B, @same").at("size", "1")),
                                         "size", {"1", "1024"}),
                           {kRt.param("family", "ipv6")}}))
