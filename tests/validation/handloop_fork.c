/*
 * handloop_fork.c — a hand-written fork + child _exit + waitpid loop, timed
 * the way the harness times `lat_proc fork` (CLOCK_MONOTONIC around a loop
 * of ITERS forks), from a small static parent with no harness code.
 * fork_ratio.py runs it interleaved with `lat_proc fork` (which forks from
 * a small static helper) and `lat_proc fork_harness` (from the harness's
 * own process, its size and mappings); first_comparison.sh too.
 *
 *   handloop_fork ITERS SAMPLES [EXTRA_KB]
 *       one ns/op per line on stdout; EXTRA_KB: touch that much more
 *       private memory in the parent first (to compare parent sizes);
 *       the parent's VmRSS in kB and, at the end, its minor faults per
 *       fork on stderr.  Built static by default (process_creation); built
 *       dynamic, it has the harness's mappings (libc, libstdc++ aside).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void one_fork(void) {
  pid_t p = fork();
  if (p < 0) { perror("handloop_fork: fork"); exit(1); }
  if (p == 0) _exit(0);
  int st;
  if (waitpid(p, &st, 0) != p) { perror("handloop_fork: waitpid"); exit(1); }
}

int main(int argc, char **argv) {
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: handloop_fork ITERS SAMPLES [EXTRA_KB]\n");
    return 2;
  }
  unsigned long iters = strtoul(argv[1], NULL, 10);
  int samples = atoi(argv[2]);
  size_t extra = argc == 4 ? strtoul(argv[3], NULL, 10) * 1024ul : 0;
  if (iters == 0 || samples <= 0) { fprintf(stderr, "handloop_fork: ITERS and SAMPLES must be > 0\n"); return 2; }
  if (extra) {
    void *m = mmap(NULL, extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) { perror("handloop_fork: mmap"); return 1; }
    madvise(m, extra, MADV_NOHUGEPAGE);
    memset(m, 1, extra);
  }
  char line[256];
  FILE *f = fopen("/proc/self/status", "r");
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "VmRSS:", 6) == 0) fprintf(stderr, "handloop_fork: %s", line);
  if (f) fclose(f);
  for (unsigned long i = 0; i < iters; ++i) one_fork();  /* warm-up */
  struct rusage r0, r1;
  getrusage(RUSAGE_SELF, &r0);
  for (int s = 0; s < samples; ++s) {
    unsigned long long t0 = now();
    for (unsigned long i = 0; i < iters; ++i) one_fork();
    printf("%.1f\n", (double)(now() - t0) / (double)iters);
  }
  getrusage(RUSAGE_SELF, &r1);
  fprintf(stderr, "handloop_fork: %.1f minor faults per fork\n",
          (double)(r1.ru_minflt - r0.ru_minflt) / (double)(iters * (unsigned long)samples));
  return 0;
}
