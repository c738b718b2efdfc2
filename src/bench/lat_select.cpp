// lat_select — waiting on N descriptors with select(), poll() and epoll.
//
// One op    = one call with a zero timeout that finds all N descriptors
//             ready for writing and reports them:
//             select: select() on a copy of the write set (FD_SETSIZE
//                     bounds the descriptor numbers);
//             poll:   poll() with POLLOUT on each;
//             epoll:  epoll_wait() on an epoll instance holding the N
//                     descriptors with EPOLLOUT, level-triggered, room for N
//                     events (it re-checks every ready descriptor per call).
//             Every call's count is checked: anything but N is a failure.
// Ready     = yes, all of them, as in lmbench's lat_select, which selects
//             for writing on regular files (always writable) and on
//             connected TCP sockets with an empty send buffer (writable).
//             So select and poll do O(N) work per call, and so does epoll:
//             it returns N events. (Idle descriptors would let epoll answer
//             in O(1) and make the three incomparable.)
// Types     = file: one regular file in the private temporary directory,
//             opened N times (epoll cannot watch regular files: EPERM, so
//             epoll takes type=tcp only, and exits 77 for type=file;
//             and 77 on a kernel without epoll, CONFIG_EPOLL=n);
//             tcp: N connected loopback TCP connections made in setup
//             (listener on 127.0.0.1 port 0; exit 77 without an IPv4
//             loopback, e.g. lo down); the N client ends are
//             watched, the accepted ends stay open and idle. No partner
//             process.
// Timed     = run() only; opening, connecting and registering are setup.
// Placement = unpinned unless --cpu.
// Caveats   = needs about N (file) or 2N (tcp) descriptors plus a few: the
//             soft limit is raised to the hard one if needed, else exit 77.
//             The calls are libc's: with glibc 2.36 select() enters
//             pselect6 on x86_64 and arm64; poll() and epoll_wait() enter
//             poll and epoll_wait on x86_64, ppoll and epoll_pwait on arm64
//             (which has only the generic system call table).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

#include "harness/bench.hpp"
#include "harness/files.hpp"
#include "harness/ipc.hpp"

namespace {

using kbench::check;

enum class Call { select, poll, epoll };

// One descriptor-readiness call of the three (select, poll, epoll_wait).
class Multiplex final : public kbench::Fixture {
 public:
  explicit Multiplex(Call call) : call_(call) {}

  void setup(kbench::Context& ctx) override {
    n_ = ctx.param_u64("fds", 1, 100000);
    const bool tcp = ctx.param_choice("type", {"file", "tcp"}) == "tcp";
    if (call_ == Call::epoll && !tcp) kbench::skip("epoll cannot watch regular files (epoll_ctl fails with EPERM)");
    if (call_ == Call::select && n_ > FD_SETSIZE)
      kbench::skip("select handles at most FD_SETSIZE = " + std::to_string(FD_SETSIZE) + " descriptors");
    kbench::require_fds((tcp ? 2 * n_ : n_) + 16, "lat_select fds=" + std::to_string(n_) + (tcp ? " type=tcp" : " type=file"));
    if (tcp)
      open_tcp();
    else
      open_files(ctx.temp_dir() + "/file");
    int max_fd = -1;
    for (int fd : fds_) max_fd = std::max(max_fd, fd);
    if (call_ == Call::select) {
      if (max_fd >= FD_SETSIZE)
        kbench::skip("select: descriptor " + std::to_string(max_fd) + " is above FD_SETSIZE = " + std::to_string(FD_SETSIZE));
      FD_ZERO(&set_);
      for (int fd : fds_) FD_SET(fd, &set_);
      nfds_ = max_fd + 1;
    } else if (call_ == Call::poll) {
      for (int fd : fds_) pfds_.push_back({fd, POLLOUT, 0});
    } else {
      ep_ = kbench::simulated_missing("epoll") ? (errno = ENOSYS, -1) : ::epoll_create1(EPOLL_CLOEXEC);
      if (ep_ < 0 && errno == ENOSYS) kbench::skip("epoll is not in this kernel (epoll_create1: ENOSYS; CONFIG_EPOLL=n)");
      check(ep_, "epoll_create1");
      for (int fd : fds_) {
        epoll_event ev{};
        ev.events = EPOLLOUT;
        ev.data.fd = fd;
        check(::epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev), "epoll_ctl ADD");
      }
      events_.resize(n_);
    }
  }

  void run(std::uint64_t iters) override {
    const int want = static_cast<int>(n_);
    switch (call_) {
      case Call::select: {
        timeval tv{0, 0};
        while (iters--) {
          fd_set w = set_;
          const int got = static_cast<int>(check(::select(nfds_, nullptr, &w, nullptr, &tv), "select"));
          if (got != want) not_ready(got);
        }
        break;
      }
      case Call::poll:
        while (iters--) {
          const int got = static_cast<int>(check(::poll(pfds_.data(), pfds_.size(), 0), "poll"));
          if (got != want) not_ready(got);
        }
        break;
      case Call::epoll:
        while (iters--) {
          const int got = static_cast<int>(check(::epoll_wait(ep_, events_.data(), want, 0), "epoll_wait"));
          if (got != want) not_ready(got);
        }
        break;
    }
  }

  void teardown() override {
    if (ep_ >= 0) check(::close(ep_), "close");
    for (int fd : fds_) check(::close(fd), "close");
    for (int fd : peers_) check(::close(fd), "close");
    ep_ = -1;
    fds_.clear();
    peers_.clear();
  }

 private:
  [[noreturn]] void not_ready(int got) {
    kbench::die(std::to_string(got) + " of " + std::to_string(n_) + " descriptors ready");
  }

  void open_files(const std::string& path) {
    const int fd = static_cast<int>(check(::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600), "create"));
    check(::close(fd), "close");
    for (std::uint64_t i = 0; i < n_; ++i)
      fds_.push_back(static_cast<int>(check(::open(path.c_str(), O_RDONLY | O_CLOEXEC), "open")));
  }

  // Not ipc::tcp_connection N times: that would interleave the client and
  // accepted descriptors (and make a listener per connection), so select's
  // set would span 2N descriptor numbers for N watched ones.
  void open_tcp() {
    kbench::ipc::Endpoint ep;
    const int lis = kbench::ipc::loopback_listener(AF_INET, 64, &ep);
    // The watched ends first, so their descriptor numbers are contiguous.
    for (std::uint64_t i = 0; i < n_; ++i)
      fds_.push_back(static_cast<int>(check(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket")));
    for (int fd : fds_) {
      check(::connect(fd, reinterpret_cast<sockaddr*>(&ep.addr), ep.len), "connect 127.0.0.1");
      peers_.push_back(static_cast<int>(check(::accept4(lis, nullptr, nullptr, SOCK_CLOEXEC), "accept")));
    }
    check(::close(lis), "close");
  }

  Call call_;
  std::uint64_t n_ = 0;
  std::vector<int> fds_, peers_;
  fd_set set_;
  int nfds_ = 0;
  std::vector<pollfd> pfds_;
  int ep_ = -1;
  std::vector<epoll_event> events_;
};

const std::vector<std::string> kFds{"10", "100", "250"};

}  // namespace

KBENCH_MAIN("lat_select", kbench::category("Processor and processes", 10).bench_rank(4),
            kbench::cases({kbench::sweep(kbench::fixture<Multiplex>("select", Call::select).param("type", "file"), "fds", kFds),
                           kbench::sweep(kbench::fixture<Multiplex>("select", Call::select).param("type", "tcp")
                                             .summary(kbench::column("select", 5).note("100 TCP fds").at("fds", "100")),
                                         "fds", kFds),
                           kbench::sweep(kbench::fixture<Multiplex>("poll", Call::poll).param("type", "file"), "fds", kFds),
                           kbench::sweep(kbench::fixture<Multiplex>("poll", Call::poll).param("type", "tcp"), "fds", kFds),
                           kbench::sweep(kbench::fixture<Multiplex>("epoll", Call::epoll).param("type", "tcp"), "fds", kFds)}))
