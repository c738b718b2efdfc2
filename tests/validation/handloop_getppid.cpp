// handloop_getppid.cpp — a hand-written syscall(SYS_getppid) loop, timed the
// way the harness times it (CLOCK_MONOTONIC around a loop of N calls, a
// sample every ~2 ms), with no harness code at all. harness.sh compares its
// median with `lat_syscall null` to show what the harness adds.
// Usage: handloop_getppid ITERS SAMPLES  -> one ns/op per line on stdout.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <sys/syscall.h>
#include <unistd.h>

static unsigned long long now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: handloop_getppid ITERS SAMPLES\n");
    return 2;
  }
  const unsigned long long iters = std::strtoull(argv[1], nullptr, 10);
  const int samples = std::atoi(argv[2]);
  for (unsigned long long i = 0; i < iters; ++i) syscall(SYS_getppid);  // warm-up
  for (int s = 0; s < samples; ++s) {
    const unsigned long long t0 = now();
    for (unsigned long long i = 0; i < iters; ++i)
      if (syscall(SYS_getppid) == -1) return 1;
    const unsigned long long t1 = now();
    std::printf("%.4f\n", double(t1 - t0) / double(iters));
  }
  return 0;
}
