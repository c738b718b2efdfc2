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
 * else).  The filler is limited to one filter (at most 4092 instructions).
 *
 * A cost per system call: `syscall_tax --cost NR=N[,NR=N...] -- CMD`
 * (repeatable) is the same filter with one branch per listed call, each
 * running its own N (0: answered at once, like every call not listed).  A
 * fixed cost per call is a smaller share of a long call than of a short
 * one; costs set per call make one relative slowdown, e.g. +10% on every
 * system-call-bound case (calibrate with syscall_tax.sh calibrate-cost).
 * `--only NR N` is `--cost NR=N`.  At most MAX_COSTS calls, and their N
 * together at most 4094 less 4 instructions per call with a cost.  NR is a
 * number or a name: getppid, getpid, read, write, newfstatat (stat and fstat),
 * fstat, statx, openat, close, rt_sigaction.
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
/* --cost: system calls with a cost of their own, all in one filter */
#define MAX_COSTS 16

static const char *prog_name = "syscall_tax";

static void print_usage(FILE *f) {
  fprintf(f,
          "usage: %s [--only NR] N -- CMD [ARGS...]\n"
          "       %s --cost NR=N[,NR=N...] [--cost ...] -- CMD [ARGS...]\n"
          "  run CMD with N extra BPF instructions executed on every system call\n"
          "  (seccomp filters that always allow); N = 0 runs CMD unchanged.\n"
          "  0 <= N <= %d\n"
          "  --only NR: only system call NR pays the N instructions; every other one\n"
          "  is answered at once (cached); with N = 0 every system call is (the\n"
          "  baseline of an --only run); N <= %d\n"
          "  --cost NR=N: each listed system call pays its own N (0: answered at\n"
          "  once); at most %d calls, their N together at most 4094 - 4 per call\n"
          "  NR: a number or getppid, getpid, read, write, newfstatat, fstat, statx,\n"
          "  openat, close, rt_sigaction\n",
          prog_name, prog_name, MAX_N, FILL_PER_FILTER - 2, MAX_COSTS);
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

struct cost {
  long nr;
  long fill;
};

/* One filter: each listed system call with fill > 0 runs its fill filler
 * instructions after a load of args[0] (uncacheable); every other one,
 * and a listed one with fill 0, is allowed at once (cached).  Returns -1
 * with errno set; EINVAL when the costs do not fit one filter. */
static int install_cost_filter(struct sock_filter *insns, const struct cost *costs, int n) {
  /* One walk sizes it all: the load and the default answer (2), a
   * dispatch pair per costed call, and each costed call's block (a load,
   * its filler, an answer). */
  long costed = 0, blocks = 0;
  for (int c = 0; c < n; c++)
    if (costs[c].fill > 0) {
      costed++;
      blocks += 2 + costs[c].fill;
    }
  long dispatch = 2 * costed, i = 0;
  if (2 + dispatch + blocks > MAX_PROG_INSNS) {
    errno = EINVAL;
    return -1;
  }
  insns[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
  /* The dispatch: a listed call jumps (BPF_JA, whose offset is 32 bits; a
   * conditional jump's is 8) to its block; the blocks follow the default
   * answer, in the order listed. */
  long block = dispatch + 1;   /* the first block's offset from the first dispatch instruction */
  long at = 0;
  for (int c = 0; c < n; c++) {
    if (costs[c].fill <= 0) continue;
    insns[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)costs[c].nr, 0, 1);
    insns[i++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, (unsigned)(block - (at + 2)), 0, 0);
    at += 2;
    block += 2 + costs[c].fill;
  }
  insns[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  for (int c = 0; c < n; c++) {
    if (costs[c].fill <= 0) continue;
    insns[i++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]));
    for (long k = 0; k < costs[c].fill; k++)
      insns[i++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_ADD | BPF_X, 0);
    insns[i++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  }
  struct sock_fprog prog = {.len = (unsigned short)i, .filter = insns};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
  return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_SPEC_ALLOW, &prog);
}

static const struct {
  const char *name;
  long nr;
} NAMES[] = {
    {"getppid", SYS_getppid}, {"getpid", SYS_getpid}, {"read", SYS_read},   {"write", SYS_write},
#ifdef SYS_newfstatat
    {"newfstatat", SYS_newfstatat},
#endif
#ifdef SYS_fstat
    {"fstat", SYS_fstat},
#endif
#ifdef SYS_statx
    {"statx", SYS_statx},
#endif
    {"openat", SYS_openat},   {"close", SYS_close},   {"rt_sigaction", SYS_rt_sigaction},
};

static long parse_nr(const char *s, const char *opt) {
  for (size_t k = 0; k < sizeof NAMES / sizeof NAMES[0]; k++)
    if (strcmp(s, NAMES[k].name) == 0) return NAMES[k].nr;
  char *end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || errno || v < 0 || v > 4095) {
    fprintf(stderr, "%s: %s wants a system-call number or name (see --help), got '%s'\n", prog_name, opt, s);
    usage(NULL);
  }
  return v;
}

/* NR=N[,NR=N...] appended to costs (n of them so far); returns the new n. */
static int parse_costs(char *spec, struct cost *costs, int n) {
  int first = n;
  for (char *item = strtok(spec, ","); item; item = strtok(NULL, ",")) {
    char *eq = strchr(item, '=');
    if (!eq) {
      fprintf(stderr, "%s: --cost wants NR=N, got '%s'\n", prog_name, item);
      usage(NULL);
    }
    *eq = '\0';
    long nr = parse_nr(item, "--cost");
    long fill = parse_n(eq + 1);
    for (int c = 0; c < n; c++)
      if (costs[c].nr == nr) {
        fprintf(stderr, "%s: --cost names system call '%s' twice\n", prog_name, item);
        usage(NULL);
      }
    if (n == MAX_COSTS) {
      fprintf(stderr, "%s: --cost takes at most %d system calls\n", prog_name, MAX_COSTS);
      usage(NULL);
    }
    costs[n].nr = nr;
    costs[n].fill = fill;
    n++;
  }
  if (n == first) usage("--cost names no system call");
  return n;
}

int main(int argc, char **argv) {
  if (argc < 2) usage(NULL);
  if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
    print_usage(stdout);
    return 0;
  }
  struct cost costs[MAX_COSTS];
  int ncost = -1;   /* -1: the uniform tax; else an --only or --cost filter */
  long n = 0;
  if (strcmp(argv[1], "--only") == 0) {
    if (argc < 4) usage("--only needs NR and N");
    costs[0].nr = parse_nr(argv[2], "--only");
    costs[0].fill = n = parse_n(argv[3]);
    if (n > FILL_PER_FILTER - 2) usage("with --only, N must be at most 4092");
    ncost = 1;
    argv += 3;
    argc -= 3;
  } else if (strcmp(argv[1], "--cost") == 0) {
    ncost = 0;
    while (argc >= 3 && strcmp(argv[1], "--cost") == 0) {
      ncost = parse_costs(argv[2], costs, ncost);
      argv += 2;
      argc -= 2;
    }
    if (argc >= 2 && strcmp(argv[1], "--cost") == 0) usage("--cost needs NR=N");
  } else {
    n = parse_n(argv[1]);
    argv += 1;
    argc -= 1;
  }
  if (argc < 2 || strcmp(argv[1], "--") != 0) usage(ncost < 0 ? "expected '--' after N" : "expected '--' after the costs");
  if (argc < 3) usage("no command given after '--'");
  char **cmd = argv + 2;

  if (ncost >= 0) {
    static struct sock_filter insns[MAX_PROG_INSNS];
    if (install_cost_filter(insns, costs, ncost) != 0) {
      if (errno == EINVAL) usage("the costs do not fit one filter (their N together at most 4094 - 4 per costed call)");
      fail("installing the per-call seccomp filter");
    }
  } else if (n > 0) {
    static struct sock_filter insns[MAX_PROG_INSNS];
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("prctl(PR_SET_NO_NEW_PRIVS)");
    long filters = (n + FILL_PER_FILTER - 1) / FILL_PER_FILTER;
    for (long f = 0; f < filters; f++) {
      /* Spread N evenly: the first n % filters filters get one more. */
      long fill = n / filters + (f < n % filters ? 1 : 0);
      if (install_filter(insns, fill) != 0) {
        char what[128];
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
