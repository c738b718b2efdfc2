// lat_connect — TCP connection set-up and tear-down on loopback.
//
// One op    = socket(), setsockopt(SO_LINGER {on, 0 s}), connect() to the
//             partner's listener on 127.0.0.1 (or ::1), read() until the
//             partner's end-of-file, close(). The partner accept()s each
//             connection and close()s it: its FIN is the acknowledgement the
//             op waits for, so every op holds one whole connection on both
//             sides (client set-up, the server's accept and close, the
//             client's close), whatever the scheduler does.
// Timed     = run() only. Before each sample (untimed) the partner is told
//             how many connections to serve.
// Placement = this process (the client) on --cpu, the accepting partner on
//             --partner-cpu.
// Why wait  = connect() on loopback returns once the three-way handshake is
//             done, before the server has accepted. Without waiting, the
//             server's accepts and closes ran partly after the second clock
//             read, by how much depending on wake-up preemption (so a
//             scheduler change moved the number with no change in connect
//             cost), and a sample's deferred accepts could fill the backlog
//             and wait out a 1 s SYN retry. Waiting, the accept queue never
//             holds more than one connection.
// Ports     = the listener is bound to port 0 (kernel-picked). A normal
//             close() by the client would leave one TIME_WAIT socket per op
//             for 60 s, and the kernel reuses an ephemeral port only when
//             its 4-tuple is free, so millions of ops would exhaust the
//             ~28000 ephemeral ports and the TIME_WAIT table. Linger {1, 0}
//             makes the client's close() send a RST instead of a FIN: the
//             connection is destroyed at once on both sides (the server's
//             half-closed socket with it), no TIME_WAIT is left anywhere and
//             the client's port is free again immediately.
//             tests/validation/ipc.sh counts TIME_WAIT sockets around a run
//             (the listener's port is in every sample as `server_port`).
// Caveats   = the server-closes-first path with a RST to finish is what is
//             measured, not an orderly FIN/ACK exchange. On one CPU every
//             op includes the switches to the server and back. family=ipv6
//             exits 77 without an IPv6 loopback. In --iters mode the partner
//             reports the connections it accepted (timed ops + the one setup
//             probe).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness/bench.hpp"
#include "harness/ipc.hpp"

namespace {

using kbench::check;
using kbench::ipc::close_fd;

class Connect final : public kbench::Fixture {
 public:
  void setup(kbench::Context& ctx) override {
    family_ = kbench::ipc::family_param(ctx);
    int listener = kbench::ipc::loopback_listener(family_, SOMAXCONN, &server_);
    // Recorded so that TIME_WAIT sockets of this run can be told from others.
    const in_port_t port = family_ == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&server_.addr)->sin6_port
                                               : reinterpret_cast<sockaddr_in*>(&server_.addr)->sin_port;
    ctx.set_info("server_port", std::to_string(ntohs(port)));
    int ctl[2];
    check(::pipe2(ctl, O_CLOEXEC), "pipe");
    ctl_ = ctl[1];
    partner_ = kbench::spawn_partner(ctx, [&] {
      close_fd(ctl_);
      accept_loop(ctx, listener, ctl[0]);
    });
    // Only the partner keeps the listener: it goes away with the partner.
    close_fd(listener);
    close_fd(ctl[0]);
  }
  void before_sample(std::uint64_t iters) override { kbench::ipc::send_u64(ctl_, iters); }
  void run(std::uint64_t iters) override {
    const auto* addr = reinterpret_cast<const sockaddr*>(&server_.addr);
    while (iters--) {
      const int fd = static_cast<int>(check(::socket(family_, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket"));
      check(::setsockopt(fd, SOL_SOCKET, SO_LINGER, &kLinger, sizeof kLinger), "setsockopt SO_LINGER");
      check(::connect(fd, addr, server_.len), "connect");
      wait_for_server_close(fd);
      check(::close(fd), "close");
    }
  }
  void teardown() override {
    kbench::ipc::send_u64(ctl_, 0);
    kbench::wait_partner(partner_);
    close_fd(ctl_);
  }

 private:
  // The server's acknowledgement: its close() of the accepted connection
  // arrives here as end-of-file.
  static void wait_for_server_close(int fd) {
    char c;
    for (;;) {
      const ssize_t got = ::read(fd, &c, 1);
      if (got == 0) return;
      if (got > 0) kbench::die("read: data from the server, expected its close");
      if (errno != EINTR) kbench::die_errno("read (the server's close)", errno);
    }
  }

  [[noreturn]] static void accept_loop(const kbench::Context& ctx, int listener, int ctl) {
    std::uint64_t served = 0;
    for (;;) {
      const std::uint64_t n = kbench::ipc::recv_u64(ctl);
      if (n == 0) break;
      for (std::uint64_t i = 0; i < n;) {
        const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) {
          check(::close(fd), "close (accepted)");
          ++i;
        } else if (errno != EINTR) {
          // ECONNABORTED included: the client resets a connection only
          // after this side has closed it.
          kbench::die_errno("accept", errno);
        }
      }
      served += n;
    }
    kbench::ipc::report_served(ctx, served, "connections");
    _exit(0);
  }

  static constexpr linger kLinger{1, 0};
  int family_ = AF_INET;
  kbench::ipc::Endpoint server_;
  int ctl_ = -1;
  kbench::Partner partner_;
};

const auto kConnect = kbench::fixture<Connect>("connect").two_party().param("family", "ipv4");

}  // namespace

KBENCH_MAIN("lat_connect", kbench::category("Local communication latency", 30).bench_rank(10),
            {kConnect.summary(kbench::column("TCP conn", 5).note("@same")), kConnect.param("family", "ipv6")})
