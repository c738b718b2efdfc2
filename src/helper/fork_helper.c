/* fork_helper.c — the process lat_proc's process-creation cases fork from.
 *
 * fork copies its caller's address space: from the harness's own process
 * (libstdc++, buffers, a few MB of mappings) a fork costs more than from a
 * hand-written loop (tests/validation/README.md, "lat_proc fork against
 * hand loops"). So lat_proc starts this small static program once, in
 * setup, and it does the forking, from a parent as small as a hand loop's.
 *
 *   kbench-fork-helper KIND TARGET PARENT_KB   (lat_proc starts it; not by hand)
 *     KIND     fork: the child _exit(0)s; exec: the child execve()s TARGET;
 *              shell: the child runs /bin/sh -c TARGET
 *     PARENT_KB  private anonymous memory touched first, without THP (fork_mem)
 *
 * It reads commands on fd 3 and answers each on fd 4, both fixed-size arrays
 * of int64 (lat_proc.cpp has the same layout; every reply starts with
 * FH_MAGIC, so a helper of another version is refused, not misread):
 *   {FH_SIZE, 0}  its size (statm) and resource usage so far
 *   {FH_RUN, n}   n operations, each child's exit status checked, then how
 *                 many were done and, on a failure, what failed
 *   {FH_USAGE, 0} its resource usage so far (itself and its reaped children)
 * It answers FH_SIZE once unasked when it is ready, and exits 0 at the end
 * of its commands (lat_proc closed fd 3). Its usage is read around the
 * timed FH_RUN, never inside it: inside it is nothing but the loop.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { FH_SIZE = 1, FH_RUN = 2, FH_USAGE = 3 };
#define FH_MAGIC 0x4b42464801LL         /* "KBFH", version 1 */
enum { FH_OK = 0, FH_FORK = 1, FH_WAIT = 2, FH_CHILD = 3, FH_COMMAND = 4 };
enum { R_MAGIC, R_STATUS, R_DETAIL, R_DONE, R_VM_KB, R_RSS_KB, R_UTIME_NS, R_STIME_NS, R_MINFLT, R_MAJFLT,
       R_NVCSW, R_NIVCSW, R_WORDS };

static enum { KIND_FORK, KIND_EXEC, KIND_SHELL } kind;
static char *target;

static void reply(int64_t *r) {
  size_t off = 0, n = R_WORDS * sizeof *r;
  r[R_MAGIC] = FH_MAGIC;
  while (off < n) {
    ssize_t put = write(4, (char *)r + off, n - off);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) _exit(1);     /* lat_proc is gone */
    off += (size_t)put;
  }
}

static int64_t tv_ns(struct timeval tv) { return (int64_t)tv.tv_sec * 1000000000 + (int64_t)tv.tv_usec * 1000; }

/* Itself and its reaped children, as the harness counts its own process. */
static void usage(int64_t *r) {
  static const int who[] = {RUSAGE_SELF, RUSAGE_CHILDREN};
  for (int i = 0; i < 2; ++i) {
    struct rusage u;
    if (getrusage(who[i], &u) != 0) continue;
    r[R_UTIME_NS] += tv_ns(u.ru_utime);
    r[R_STIME_NS] += tv_ns(u.ru_stime);
    r[R_MINFLT] += u.ru_minflt;
    r[R_MAJFLT] += u.ru_majflt;
    r[R_NVCSW] += u.ru_nvcsw;
    r[R_NIVCSW] += u.ru_nivcsw;
  }
}

/* Mapped and resident size in kB from /proc/self/statm; -1 without /proc. */
static void size(int64_t *r) {
  unsigned long long vm = 0, rss = 0;
  FILE *f = fopen("/proc/self/statm", "re");
  r[R_VM_KB] = r[R_RSS_KB] = -1;
  if (!f) return;
  if (fscanf(f, "%llu %llu", &vm, &rss) == 2) {
    long kb = sysconf(_SC_PAGESIZE) / 1024;
    r[R_VM_KB] = (int64_t)vm * kb;
    r[R_RSS_KB] = (int64_t)rss * kb;
  }
  fclose(f);
}

static void child(void) {
  if (kind == KIND_EXEC) {
    char *argv[] = {target, NULL};
    execve(target, argv, environ);
  } else if (kind == KIND_SHELL) {
    char *argv[] = {"sh", "-c", target, NULL};
    execve("/bin/sh", argv, environ);
  } else {
    _exit(0);
  }
  _exit(127);   /* exec failed: lat_proc says so */
}

/* n operations; r gets how many were done and what failed, if one did. */
static void run(int64_t n, int64_t *r) {
  for (int64_t i = 0; i < n; ++i) {
    int status;
    pid_t pid = fork();
    if (pid < 0) {
      r[R_STATUS] = FH_FORK, r[R_DETAIL] = errno;
      return;
    }
    if (pid == 0) child();
    while (waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR) {
        r[R_STATUS] = FH_WAIT, r[R_DETAIL] = errno;
        return;
      }
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      r[R_STATUS] = FH_CHILD, r[R_DETAIL] = status;
      return;
    }
    r[R_DONE] = i + 1;
  }
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "kbench-fork-helper: lat_proc starts it: KIND TARGET PARENT_KB\n");
    return 2;
  }
  if (strcmp(argv[1], "fork") == 0) kind = KIND_FORK;
  else if (strcmp(argv[1], "exec") == 0) kind = KIND_EXEC;
  else if (strcmp(argv[1], "shell") == 0) kind = KIND_SHELL;
  else {
    fprintf(stderr, "kbench-fork-helper: unknown kind '%s'\n", argv[1]);
    return 2;
  }
  target = argv[2];
  size_t parent = (size_t)strtoull(argv[3], NULL, 10) * 1024;
  if (parent) {
    void *m = mmap(NULL, parent, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      perror("kbench-fork-helper: mmap");
      return 1;
    }
    (void)madvise(m, parent, MADV_NOHUGEPAGE);   /* one page-table entry per page, as fork_mem says */
    memset(m, 0x5a, parent);
  }
  int64_t r[R_WORDS];
  memset(r, 0, sizeof r);
  size(r);
  usage(r);
  reply(r);     /* ready */
  for (;;) {
    int64_t cmd[2];
    size_t off = 0;
    while (off < sizeof cmd) {
      ssize_t got = read(3, (char *)cmd + off, sizeof cmd - off);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return 1;
      if (got == 0) return off == 0 ? 0 : 1;   /* lat_proc's teardown closed it */
      off += (size_t)got;
    }
    memset(r, 0, sizeof r);
    if (cmd[0] == FH_RUN && cmd[1] >= 0) {
      run(cmd[1], r);
    } else if (cmd[0] == FH_SIZE) {
      size(r);
      usage(r);
    } else if (cmd[0] == FH_USAGE) {
      usage(r);
    } else {
      r[R_STATUS] = FH_COMMAND, r[R_DETAIL] = cmd[0];
    }
    reply(r);
  }
}
