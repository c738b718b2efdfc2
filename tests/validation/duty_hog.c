/* duty_hog — a competing load for the machine-shift validation.
 *
 * `duty_hog CPU BUSY_US PERIOD_US` pins itself to CPU and, every PERIOD_US,
 * spins for BUSY_US then sleeps for the rest: a fraction BUSY/PERIOD of that
 * CPU taken away in short bursts.  To a benchmark pinned there it looks like
 * a host stealing its vCPU in short stretches: every timed window can be cut
 * by a burst, so the whole machine seems slower, user-space loops included.
 * Runs until killed.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: duty_hog CPU BUSY_US PERIOD_US\n");
    return 2;
  }
  const int cpu = atoi(argv[1]);
  const long long busy = atoll(argv[2]), period = atoll(argv[3]);
  if (cpu < 0 || busy <= 0 || period <= busy) {
    fprintf(stderr, "duty_hog: need CPU >= 0 and 0 < BUSY_US < PERIOD_US\n");
    return 2;
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    perror("duty_hog: sched_setaffinity");
    return 1;
  }
  volatile unsigned long sink = 0;
  for (;;) {
    const long long start = now_us();
    while (now_us() - start < busy) sink++;
    const long long rest = period - (now_us() - start);
    if (rest > 0) {
      struct timespec ts = {rest / 1000000, (rest % 1000000) * 1000};
      nanosleep(&ts, NULL);
    }
  }
}
