// lat_udp — round trip of one datagram over loopback UDP.
//
// One op    = send one datagram of `size` bytes to the partner, receive its
//             echo (a datagram of the same size). Both sockets are bound to
//             127.0.0.1 (or ::1 with family=ipv6) on kernel-picked ports and
//             connect()ed to each other, so the loop is send()/recv().
// Timed     = run() only; sockets, fork() and the partner's graceful end are
//             setup/teardown. The setup probe is one round trip.
// Placement = this process on --cpu, the echoing partner on --partner-cpu.
// Caveats   = sizes up to 8192 fit in one datagram on lo (MTU 65536): no
//             fragmentation. A lost datagram would hang the pair (loopback
//             does not drop one datagram in flight; the driver's timeout is
//             the backstop). family=ipv6 exits 77 without an IPv6 loopback.
//             In --iters mode the partner reports the round trips it echoed
//             (timed ops + the setup probe).
#include <sys/socket.h>

#include "harness/bench.hpp"
#include "harness/ipc.hpp"

namespace {

class UdpRoundTrip final : public kbench::ipc::RoundTrip {
  void open_channel(kbench::Context& ctx, kbench::ipc::Ends& mine, kbench::ipc::Ends& theirs) override {
    const kbench::ipc::FdPair p = kbench::ipc::udp_pair(kbench::ipc::family_param(ctx));
    mine = {p.a, p.a};
    theirs = {p.b, p.b};
  }
  std::size_t message_size(kbench::Context& ctx) override {
    const std::uint64_t n = ctx.param_u64("size", 1, 65507);
    return static_cast<std::size_t>(n);
  }
  bool datagram() const override { return true; }
};

const auto kRt = kbench::fixture<UdpRoundTrip>("rt").two_party().param("family", "ipv4").param("size", "1");

}  // namespace

KBENCH_MAIN("lat_udp", kbench::category("Local communication latency", 30).bench_rank(8),
            kbench::cases({kbench::sweep(kRt.summary(kbench::column("UDP", 3).note("1 B, @same").at("size", "1")),
                                         "size", {"1", "1024", "8192"}),
                           {kRt.param("family", "ipv6")}}))
