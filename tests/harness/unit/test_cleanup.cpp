// test_cleanup.cpp — SIGTERM during a run leaves no process and no file.
//
// A child process runs a benchmark whose setup starts a partner and writes
// a file into its temporary directory, then reports the partner's pid and
// the directory through a pipe and runs forever. The test kills the child
// with SIGTERM and checks the exit status (128+15), that the partner is
// gone (reaped, not a zombie) and that $TMPDIR is empty again.
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bounded.hpp"
#include "harness/bench.hpp"
#include "harness/files.hpp"
#include "harness/internal/cleanup.hpp"
#include "harness/internal/runner.hpp"

namespace {

int g_report_fd = -1;

class Forever final : public kbench::Fixture {
 public:
  void setup(kbench::Context& ctx) override {
    partner_ = kbench::spawn_partner(ctx, [] {
      for (;;) pause();
    });
    const std::string file = ctx.temp_dir() + "/data";
    const int fd = static_cast<int>(kbench::check(open(file.c_str(), O_CREAT | O_WRONLY, 0600), "open"));
    close(fd);
    mkdir((ctx.temp_dir() + "/sub").c_str(), 0700);
    close(open((ctx.temp_dir() + "/sub/f").c_str(), O_CREAT | O_WRONLY, 0600));
    const std::string msg = std::to_string(partner_.pid) + " " + ctx.temp_dir() + "\n";
    kbench::write_exact(g_report_fd, msg.data(), msg.size());
  }
  void run(std::uint64_t iters) override {
    while (iters--) kbench::clobber_memory();
  }
  // No teardown: the test ends the binary with SIGTERM, whose cleanup kills
  // and reaps the partner.

 private:
  kbench::Partner partner_;
};

int count_entries(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (!d) return -1;
  int n = 0;
  while (dirent* e = readdir(d))
    if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") ++n;
  closedir(d);
  return n;
}

}  // namespace

TEST_CASE("SIGTERM kills and reaps partners, removes temporary directories, exits 143") {
  char tmpl[] = "/tmp/kbench-test-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string tmpdir = tmpl;
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(fds[0]);
    g_report_fd = fds[1];
    setenv("TMPDIR", tmpdir.c_str(), 1);
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2);
    FILE* out = fopen("/dev/null", "w");
    // Samples forever: far more than can finish before the kill.
    const int rc = kbench::run_main("t_forever", {kbench::fixture<Forever>("run").two_party()},
                                    {"run", "--samples", "1000000", "--iters", "1000"}, out);
    _exit(rc);
  }
  close(fds[1]);
  const std::string report = kbench_test::read_line(fds[0]);
  close(fds[0]);
  if (report.find('\n') == std::string::npos) {  // no report within the bound: do not leave it running
    int ignored;
    kill(child, SIGKILL);
    kbench_test::wait_child(child, &ignored);
  }
  REQUIRE(report.find('\n') != std::string::npos);
  const pid_t partner = static_cast<pid_t>(std::stol(report));
  const std::string dir = report.substr(report.find(' ') + 1, report.find('\n') - report.find(' ') - 1);
  CHECK(dir.rfind(tmpdir + "/kbench-t_forever-", 0) == 0);
  CHECK(count_entries(dir) == 2);
  CHECK(kill(partner, 0) == 0);

  REQUIRE(kill(child, SIGTERM) == 0);
  int status = 0;
  REQUIRE(kbench_test::wait_child(child, &status));
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 128 + SIGTERM);
  // The partner was the child's child: reaped by the child's cleanup, so it
  // no longer exists at all (not even as a zombie).
  CHECK(kill(partner, 0) == -1);
  CHECK(errno == ESRCH);
  CHECK(count_entries(tmpdir) == 0);
  rmdir(tmpdir.c_str());
}

TEST_CASE("remove_tree removes nested directories and does not follow symlinks") {
  char outside_t[] = "/tmp/kbench-keep-XXXXXX";
  char tree_t[] = "/tmp/kbench-tree-XXXXXX";
  REQUIRE(mkdtemp(outside_t));
  REQUIRE(mkdtemp(tree_t));
  const std::string outside = outside_t, tree = tree_t;
  close(open((outside + "/precious").c_str(), O_CREAT | O_WRONLY, 0600));
  std::string deep = tree;
  for (int i = 0; i < 20; ++i) {
    deep += "/d" + std::to_string(i);
    REQUIRE(mkdir(deep.c_str(), 0700) == 0);
    for (int f = 0; f < 30; ++f) close(open((deep + "/f" + std::to_string(f)).c_str(), O_CREAT | O_WRONLY, 0600));
  }
  REQUIRE(symlink(outside.c_str(), (tree + "/link").c_str()) == 0);
  CHECK(kbench::remove_tree(tree.c_str()) == 0);
  CHECK(access(tree.c_str(), F_OK) != 0);
  CHECK(access((outside + "/precious").c_str(), F_OK) == 0);
  kbench::remove_tree(outside.c_str());
}
