// ipc.hpp — what the IPC benchmarks share: loopback sockets, the echo and
// sink partners, and the two fixtures built on them (round trip, stream).
//
// The protocol between a timing process and its partner is deliberately
// tiny so that nothing but the operation sits in the timed loop:
//  - round trip: the timing process sends a message of `size` bytes whose
//    first byte is 'p' (ping); the partner echoes it. A message starting
//    with 'q' (quit) ends the partner.
//  - stream: before each sample (untimed) the timing process sends an
//    8-byte count n on the data channel; the partner then reads exactly
//    n * chunk bytes and answers one byte on the reverse channel. run()
//    writes the chunks and waits for that byte, so the clock stops only
//    when the data has arrived. n = 0 ends the partner.
// In --iters mode each partner prints, at its graceful end,
// "<bench>: partner served N operations" on stderr; N counts every
// operation it served, the harness's one-op setup probe included.
#pragma once

#include <cstddef>
#include <cstdint>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

#include "harness/bench.hpp"

namespace kbench::ipc {

// The address family of a `family=ipv4|ipv6` parameter (AF_INET/AF_INET6).
int family_param(const Context& ctx);

struct Endpoint {
  sockaddr_storage addr{};
  socklen_t len = 0;
};

// A socket of `type` bound to the loopback address of `family` on a port the
// kernel picks. Skips (exit 77) where the machine has no such loopback.
int bound_loopback_socket(int family, int type, Endpoint* bound);

// A listening TCP socket on loopback, port 0; `bound` gets its address.
int loopback_listener(int family, int backlog, Endpoint* bound);

// Two ends of one loopback TCP connection; the listener is closed before
// this returns, so no listening socket exists while the benchmark runs.
struct FdPair {
  int a = -1, b = -1;
};
FdPair tcp_connection(int family, bool nodelay);
// Two UDP sockets on loopback, each connect()ed to the other.
FdPair udp_pair(int family);

void close_fd(int& fd);
void send_u64(int fd, std::uint64_t v);
std::uint64_t recv_u64(int fd);

// Prints "<bench>: partner served N operations" when in --iters mode.
void report_served(const Context& ctx, std::uint64_t n, const char* what = "operations");

// The two directions of a channel as seen by one side: read from rd, write
// to wr (the same descriptor for a socket).
struct Ends {
  int rd = -1, wr = -1;
};

// The two channels every pipe and AF_UNIX benchmark uses: two pipes (one
// each way), or one socketpair(AF_UNIX, SOCK_STREAM) used both ways.
void pipe_channel(Ends& mine, Ends& theirs);
void unix_channel(Ends& mine, Ends& theirs);

// One message of exactly n bytes. Stream channels loop over short transfers;
// a datagram must arrive whole.
inline void send_msg(int fd, const void* buf, std::size_t n, bool datagram) {
  if (!datagram) return write_exact(fd, buf, n);
  for (;;) {
    const ssize_t put = ::send(fd, buf, n, 0);
    if (put == static_cast<ssize_t>(n)) return;
    if (put >= 0) die("send: short datagram");
    if (errno != EINTR) die_errno("send", errno);
  }
}
inline void recv_msg(int fd, void* buf, std::size_t n, bool datagram) {
  if (!datagram) return read_exact(fd, buf, n);
  for (;;) {
    const ssize_t got = ::recv(fd, buf, n, MSG_TRUNC);
    if (got == static_cast<ssize_t>(n)) return;
    if (got >= 0) die("recv: datagram of " + std::to_string(got) + " bytes, expected " + std::to_string(n));
    if (errno != EINTR) die_errno("recv", errno);
  }
}

// Round trip of one message between this process and an echo partner.
// Subclasses only open the channel. One op = send `size` bytes, receive the
// echoed `size` bytes.
class RoundTrip : public Fixture {
 public:
  void setup(Context& ctx) final;
  void run(std::uint64_t iters) final {
    char* b = buf_.data();
    while (iters--) {
      send_msg(mine_.wr, b, size_, datagram_);
      recv_msg(mine_.rd, b, size_, datagram_);
    }
  }
  void teardown() final;

 protected:
  // Opens the channel: `mine` for the timing process, `theirs` for the
  // partner. Every descriptor in both is closed by the fixture.
  virtual void open_channel(Context& ctx, Ends& mine, Ends& theirs) = 0;
  virtual std::size_t message_size(Context&) { return 1; }
  virtual bool datagram() const { return false; }

 private:
  [[noreturn]] void echo(const Context& ctx);
  Ends mine_, theirs_;
  std::size_t size_ = 1;
  bool datagram_ = false;
  std::vector<char> buf_;
  Partner partner_;
};

// Streaming of `chunk_kb` KB chunks from this process to a sink partner.
// One op = one chunk written here and read by the partner; each sample ends
// with the partner's one-byte acknowledgement of the last chunk.
class Stream : public Fixture {
 public:
  void setup(Context& ctx) final;
  void before_sample(std::uint64_t iters) final { send_u64(mine_.wr, iters); }
  void run(std::uint64_t iters) final {
    const char* b = buf_.data();
    while (iters--) write_exact(mine_.wr, b, chunk_);
    char ack;
    read_exact(mine_.rd, &ack, 1);
  }
  void teardown() final;

 protected:
  virtual void open_channel(Context& ctx, Ends& mine, Ends& theirs) = 0;

 private:
  [[noreturn]] void sink(const Context& ctx);
  Ends mine_, theirs_;
  std::size_t chunk_ = 0;
  std::vector<char> buf_;
  Partner partner_;
};

}  // namespace kbench::ipc
