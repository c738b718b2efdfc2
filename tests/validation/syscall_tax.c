/*
 * syscall_tax — run a command with a known, uniform extra cost on every
 * system call, without building a new kernel.
 *
 *   syscall_tax N -- CMD [ARGS...]
 *
 * Installs seccomp filters that always answer SECCOMP_RET_ALLOW but execute
 * N filler instructions on every system call, then execvp()s CMD.  Filters
 * are inherited across fork and exec, so a whole kbench-run and every
 * benchmark it starts pay the tax.  N = 0 installs nothing and just execs,
 * so the baseline runs under the same wrapper.
 *
 * The point is to check the suite's comparison for sensitivity: a known,
 * injected slowdown must be flagged where it acts (cases that make system
 * calls) and nowhere else (memory-bound cases).
 *
 * Each filter is
 *     A = seccomp_data.args[0] (low 32 bits)
 *     A += X                  (repeated; X is 0, one dependent ALU op each)
 *     return SECCOMP_RET_ALLOW
 * The first load reads a system-call argument, so the kernel's
 * constant-action cache (Linux >= 5.11), which emulates filters that look
 * only at the syscall number and arch, can never mark a syscall as
 * always-allowed and skip the filter.  The filler uses the X register, not
 * an immediate, so JIT constant blinding (net.core.bpf_jit_harden) does not
 * change its cost.  With the BPF JIT on, a filler instruction is one
 * dependent add (about one CPU cycle); with the interpreter it is several
 * nanoseconds.  Having any filter at all also sends every system call
 * through the kernel's slower entry path (seccomp_data set-up and the
 * filter call), so even N = 1 costs something: calibrate with
 * tests/validation/syscall_tax.sh calibrate.
 *
 * A classic BPF program has at most BPF_MAXINSNS (4096) instructions, so N
 * is split over several filters, each run on every syscall; the kernel
 * limits the total over all filters of a task to 32768 (translated)
 * instructions counting 4 of overhead per filter, hence N <= MAX_N = 32692
 * below (less if the process already runs under filters, e.g. in a
 * container: the kernel then refuses with ENOMEM).
 *
 * The filters are installed with SECCOMP_FILTER_FLAG_SPEC_ALLOW so that the
 * kernel does not also turn on the speculative-store-bypass mitigation for
 * the task (which would slow memory-bound code too).  PR_SET_NO_NEW_PRIVS is
 * set first (needed without CAP_SYS_ADMIN); setuid programs run under the
 * wrapper do not gain privileges.
 *
 * One system call alone: `syscall_tax --only NR N -- CMD` installs one
 * filter that checks the system-call number first: every other system call
 * returns SECCOMP_RET_ALLOW at once (a constant answer the kernel caches,
 * so they pay only seccomp's entry path), and NR alone runs the N filler
 * instructions (its answer reads args[0]: never cached).  `--only NR 0`
 * installs the same check with no filler, NR answered at once too: every
 * system call is then cached and pays the same entry path, so it is the
 * baseline of an --only run (the two differ in NR's cost and nothing
 * else).  NR is a number or one of: getppid, getpid.  The filler is limited
 * to one filter (at most 4092 instructions).
 *
 * Exit status: 2 usage error, 1 failure (message "syscall_tax: what:
 * strerror"), otherwise CMD's.
 *
 * Build: cc -O2 -Wall -Wextra -Werror -o build/validation/syscall_tax \
 *            tests/validation/syscall_tax.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#define MAX_PROG_INSNS 4096                 /* BPF_MAXINSNS */
#define MAX_PATH_INSNS 32768                /* kernel MAX_INSNS_PER_PATH */
#define FILTER_OVERHEAD 4                   /* counted per filter by the kernel */
#define FIXED_INSNS 2                       /* the load and the return */
#define FILL_PER_FILTER (MAX_PROG_INSNS - FIXED_INSNS)
/* The kernel counts a filter's length after translation to eBPF: the filler
 * plus 6 here (context move, clearing A and X, the load, the return as two)
 * on Linux 6.x, and the newest filter without its overhead of 4. */
#define EBPF_FIXED_INSNS 6
#define MAX_FILTERS 8
/* 8 filters: MAX_N + 8 * (6 + 4) - 4 = 32768, and 8 * 4094 >= MAX_N. */
#define MAX_N (MAX_PATH_INSNS + FILTER_OVERHEAD - MAX_FILTERS * (EBPF_FIXED_INSNS + FILTER_OVERHEAD))

static const char *prog_name = "syscall_tax";

static void print_usage(FILE *f) {
  fprintf(f,
          "usage: %s [--only NR] N -- CMD [ARGS...]\n"
          "  run CMD with N extra BPF instructions executed on every system call\n"
          "  (seccomp filters that always allow); N = 0 runs CMD unchanged.\n"
          "  0 <= N <= %d\n"
          "  --only NR: only system call NR (a number, getppid or getpid) pays the\n"
          "  N instructions; every other one is answered at once (cached); with\n"
          "  N = 0 every system call is (the baseline of an --only run); N <= %d\n",
          prog_name, MAX_N, FILL_PER_FILTER - 2);
}

static void usage(const char *why) {
  if (why) fprintf(stderr, "%s: %s\n", prog_name, why);
  print_usage(stderr);
  exit(2);
}

static void fail(const char *what) {
  fprintf(stderr, "%s: %s: %s\n", prog_name, what, strerror(errno));
  exit(1);
}

static long parse_n(const char *s) {
  if (*s == '\0') usage("N is empty");
  long v = 0;
  for (const char *p = s; *p; p++) {
    if (*p < '0' || *p > '9') {
      fprintf(stderr, "%s: N must be a non-negative decimal integer, got '%s'\n", prog_name, s);
      usage(NULL);
    }
    v = v * 10 + (*p - '0');
    if (v > MAX_N) {
      fprintf(stderr, "%s: N must be at most %d, got '%s'\n", prog_name, MAX_N, s);
      usage(NULL);
    }
  }
  return v;
}

static int install_filter(struct sock_filter *insns, long fill) {
  long i = 0;
  /* Low word of args[0]: little- or big-endian, either word defeats the cache. */
  insns[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]));
  for (long k = 0; k < fill; k++)
    insns[i++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_ADD | BPF_X, 0);
  insns[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  struct sock_fprog prog = {.len = (unsigned short)i, .filter = insns};

  static int spec_allow = 1;
  if (spec_allow) {
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_SPEC_ALLOW, &prog) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS) return -1;
    /* Kernel older than 4.17 (no flag) or without seccomp(2): plain prctl. */
    spec_allow = 0;
    fprintf(stderr, "%s: warning: SECCOMP_FILTER_FLAG_SPEC_ALLOW not accepted (%s); "
                    "the kernel may enable the SSB mitigation for the command\n",
            prog_name, strerror(errno));
  }
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

/* One filter: system call `nr` runs `fill` filler instructions after a load
 * of args[0] (uncacheable); every other one is allowed at once (cached).
 * With fill < 0, nr is allowed at once too. */
static int install_only_filter(struct sock_filter *insns, long nr, long fill) {
  long i = 0;
  insns[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
  insns[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 1, 0);
  insns[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  if (fill >= 0) {
    insns[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]));
    for (long k = 0; k < fill; k++)
      insns[i++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_ADD | BPF_X, 0);
  }
  insns[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  struct sock_fprog prog = {.len = (unsigned short)i, .filter = insns};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_SPEC_ALLOW, &prog) == 0) return 0;
  return -1;
}

static long parse_nr(const char *s) {
  if (strcmp(s, "getppid") == 0) return SYS_getppid;
  if (strcmp(s, "getpid") == 0) return SYS_getpid;
  char *end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || errno || v < 0 || v > 4095) {
    fprintf(stderr, "%s: --only wants a system-call number or getppid/getpid, got '%s'\n", prog_name, s);
    usage(NULL);
  }
  return v;
}

int main(int argc, char **argv) {
  if (argc < 2) usage(NULL);
  if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
    print_usage(stdout);
    return 0;
  }
  long only = -1;
  if (strcmp(argv[1], "--only") == 0) {
    if (argc < 4) usage("--only needs NR and N");
    only = parse_nr(argv[2]);
    argv += 2;
    argc -= 2;
  }
  long n = parse_n(argv[1]);
  if (argc < 3 || strcmp(argv[2], "--") != 0) usage("expected '--' after N");
  if (argc < 4) usage("no command given after '--'");
  char **cmd = argv + 3;

  if (only >= 0) {
    static struct sock_filter insns[MAX_PROG_INSNS];
    if (n > FILL_PER_FILTER - 2) usage("with --only, N must be at most 4092");
    if (install_only_filter(insns, only, n > 0 ? n : -1) != 0) fail("installing the --only seccomp filter");
  } else if (n > 0) {
    static struct sock_filter insns[MAX_PROG_INSNS];
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("prctl(PR_SET_NO_NEW_PRIVS)");
    long filters = (n + FILL_PER_FILTER - 1) / FILL_PER_FILTER;
    for (long f = 0; f < filters; f++) {
      /* Spread N evenly: the first n % filters filters get one more. */
      long fill = n / filters + (f < n % filters ? 1 : 0);
      if (install_filter(insns, fill) != 0) {
        char what[96];
        snprintf(what, sizeof what, "installing seccomp filter %ld of %ld (%ld instructions)", f + 1, filters,
                 fill + FIXED_INSNS);
        fail(what);
      }
    }
  }
  execvp(cmd[0], cmd);
  char what[64 + 256];
  snprintf(what, sizeof what, "exec %.256s", cmd[0]);
  fail(what);
  return 1;
}
