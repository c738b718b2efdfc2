// ipc.cpp — loopback sockets and the echo/sink partners of the IPC benchmarks.
#include "harness/ipc.hpp"

#include <arpa/inet.h>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

namespace kbench::ipc {

int family_param(const Context& ctx) {
  return ctx.param_choice("family", {"ipv4", "ipv6"}) == "ipv6" ? AF_INET6 : AF_INET;
}

namespace {

Endpoint loopback(int family) {
  Endpoint e;
  if (family == AF_INET6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&e.addr);
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_loopback;
    a->sin6_port = 0;
    e.len = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&e.addr);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a->sin_port = 0;
    e.len = sizeof *a;
  }
  return e;
}

const char* family_name(int family) { return family == AF_INET6 ? "IPv6" : "IPv4"; }

void close_ends(Ends& e) {
  if (e.wr != e.rd) close_fd(e.wr);
  close_fd(e.rd);
  e.wr = -1;
}

}  // namespace

int bound_loopback_socket(int family, int type, Endpoint* bound) {
  // No IPv6 in the kernel (CONFIG_IPV6=n, the ipv6 module absent or
  // blacklisted, ipv6.disable=1): socket() fails with EAFNOSUPPORT.
  const bool no_family = family == AF_INET6 && simulated_missing("ipv6");
  const int fd = no_family ? (errno = EAFNOSUPPORT, -1) : ::socket(family, type | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    if (errno == EAFNOSUPPORT || errno == EPROTONOSUPPORT)
      skip(std::string("no ") + family_name(family) + " sockets in this kernel (" + std::strerror(errno) + ")");
    die_errno("socket", errno);
  }
  // No loopback address: IPv6 disabled on lo (sysctl disable_ipv6), or lo
  // down (a minimal initramfs that never ran `ip link set lo up`).
  const bool no_address =
      simulated_missing("loopback") || (family == AF_INET6 && simulated_missing("ipv6_loopback"));
  Endpoint e = loopback(family);
  if (no_address ? (errno = EADDRNOTAVAIL, true) : ::bind(fd, reinterpret_cast<sockaddr*>(&e.addr), e.len) != 0) {
    if (errno == EADDRNOTAVAIL || errno == EAFNOSUPPORT)
      skip(std::string("no ") + family_name(family) + " loopback address " +
           (family == AF_INET6 ? "::1" : "127.0.0.1") + " (" + std::strerror(errno) +
           (family == AF_INET6 ? "): IPv6 disabled (disable_ipv6) or the loopback interface down"
                               : "): the loopback interface is down"));
    die_errno("bind loopback", errno);
  }
  if (bound) {
    bound->len = sizeof bound->addr;
    check(::getsockname(fd, reinterpret_cast<sockaddr*>(&bound->addr), &bound->len), "getsockname");
  }
  return fd;
}

int loopback_listener(int family, int backlog, Endpoint* bound) {
  const int fd = bound_loopback_socket(family, SOCK_STREAM, bound);
  check(::listen(fd, backlog), "listen");
  return fd;
}

FdPair tcp_connection(int family, bool nodelay) {
  Endpoint ep;
  int listener = loopback_listener(family, 1, &ep);
  FdPair p;
  p.a = static_cast<int>(check(::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket"));
  check(::connect(p.a, reinterpret_cast<sockaddr*>(&ep.addr), ep.len), "connect");
  p.b = static_cast<int>(check(::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC), "accept"));
  close_fd(listener);
  if (nodelay) {
    const int one = 1;
    check(::setsockopt(p.a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one), "setsockopt TCP_NODELAY");
    check(::setsockopt(p.b, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one), "setsockopt TCP_NODELAY");
  }
  return p;
}

FdPair udp_pair(int family) {
  Endpoint ea, eb;
  FdPair p;
  p.a = bound_loopback_socket(family, SOCK_DGRAM, &ea);
  p.b = bound_loopback_socket(family, SOCK_DGRAM, &eb);
  check(::connect(p.a, reinterpret_cast<sockaddr*>(&eb.addr), eb.len), "connect (udp)");
  check(::connect(p.b, reinterpret_cast<sockaddr*>(&ea.addr), ea.len), "connect (udp)");
  return p;
}

void pipe_channel(Ends& mine, Ends& theirs) {
  int down[2], up[2];
  check(::pipe2(down, O_CLOEXEC), "pipe");
  check(::pipe2(up, O_CLOEXEC), "pipe");
  mine = {up[0], down[1]};
  theirs = {down[0], up[1]};
}

void unix_channel(Ends& mine, Ends& theirs) {
  int sv[2];
  check(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), "socketpair");
  mine = {sv[0], sv[0]};
  theirs = {sv[1], sv[1]};
}

void close_fd(int& fd) {
  if (fd < 0) return;
  // close() is not retried on EINTR: on Linux the descriptor is gone anyway.
  if (::close(fd) != 0 && errno != EINTR) die_errno("close", errno);
  fd = -1;
}

void send_u64(int fd, std::uint64_t v) { write_exact(fd, &v, sizeof v); }

std::uint64_t recv_u64(int fd) {
  std::uint64_t v;
  read_exact(fd, &v, sizeof v);
  return v;
}

void report_served(const Context& ctx, std::uint64_t n, const char* what) {
  report_count(ctx, "partner served", n, what);
}

// ---- RoundTrip -------------------------------------------------------------

void RoundTrip::setup(Context& ctx) {
  size_ = message_size(ctx);
  if (size_ < 1) bad_param("size must be at least 1 byte");
  datagram_ = datagram();
  buf_.assign(size_, 'x');
  open_channel(ctx, mine_, theirs_);
  partner_ = spawn_partner(ctx, [this, &ctx] { echo(ctx); });
  close_ends(theirs_);
  buf_[0] = 'p';
}

void RoundTrip::echo(const Context& ctx) {
  close_ends(mine_);
  std::vector<char> b(size_);
  std::uint64_t served = 0;
  for (;;) {
    recv_msg(theirs_.rd, b.data(), size_, datagram_);
    if (b[0] == 'q') break;
    if (b[0] != 'p') die("echo: unexpected message");
    send_msg(theirs_.wr, b.data(), size_, datagram_);
    ++served;
  }
  report_served(ctx, served);
  _exit(0);
}

void RoundTrip::teardown() {
  buf_[0] = 'q';
  send_msg(mine_.wr, buf_.data(), size_, datagram_);
  wait_partner(partner_);
  close_ends(mine_);
}

// ---- Stream ----------------------------------------------------------------

void Stream::setup(Context& ctx) {
  const std::uint64_t kb = ctx.param_u64("chunk_kb", 1, 1048576);
  chunk_ = static_cast<std::size_t>(kb) * 1024;
  ctx.set_bytes_per_op(chunk_);
  buf_.assign(chunk_, 'b');  // written now, so no page is first touched in run()
  open_channel(ctx, mine_, theirs_);
  partner_ = spawn_partner(ctx, [this, &ctx] { sink(ctx); });
  close_ends(theirs_);
}

void Stream::sink(const Context& ctx) {
  close_ends(mine_);
  std::vector<char> b(chunk_, 0);
  std::uint64_t served = 0;
  for (;;) {
    const std::uint64_t n = recv_u64(theirs_.rd);
    if (n == 0) break;
    std::uint64_t left = n * chunk_;
    while (left > 0) {
      const std::size_t want = left < chunk_ ? static_cast<std::size_t>(left) : chunk_;
      const ssize_t got = ::read(theirs_.rd, b.data(), want);
      if (got > 0) {
        left -= static_cast<std::uint64_t>(got);
      } else if (got == 0) {
        die("sink: unexpected end of stream");
      } else if (errno != EINTR) {
        die_errno("sink: read", errno);
      }
    }
    served += n;
    const char ack = 'a';
    write_exact(theirs_.wr, &ack, 1);
  }
  report_served(ctx, served, "chunks");
  _exit(0);
}

void Stream::teardown() {
  send_u64(mine_.wr, 0);
  wait_partner(partner_);
  close_ends(mine_);
}

}  // namespace kbench::ipc
