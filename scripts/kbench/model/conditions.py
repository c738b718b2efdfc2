"""The conditions of two sides' runs besides the kernel: which meta keys a
comparison must be made under (the machine's state, the build, the options
that change what is measured), which of them differ between the sides, and
the cases that ran differently on one side (a kernel feature missing, a
skip).  compare warns about each (model/compare.py re-exports these)."""
from .runs import condition_value, meta_text

# meta keys that describe the run itself, not the conditions it ran under:
# never reported as a difference between the sides.
RUN_ONLY_KEYS = {
    "schema", "run_id", "kernel_release", "kernel_version", "seed", "started_utc", "ended_utc",
    "loadavg_before", "loadavg_after", "busy_processes", "swap_before", "swap_after", "warnings",
    "status", "driver_seconds", "budget_rounds", "label", "busy_processes_after", "resumed_utc",
    "quick",  # also in options.quick, which runs made before this key have
    "profile",  # kbench-run --profile: which cases have profiles, not a condition of the measurement
    "boot_id",  # which boot: the run level counts boots, they are not a condition
}


def flatten_meta(meta, skip=RUN_ONLY_KEYS):
    """meta dict -> {key or key.subkey: text}; nested objects one level;
    keys in `skip` (by default those that differ between any two runs) left
    out."""
    out = {}
    for k, v in meta.items():
        if k in skip:
            continue
        if isinstance(v, dict) and v:
            for sk, sv in v.items():
                out[f"{k}.{sk}"] = meta_text(sv)
        else:
            out[k] = meta_text(v)
    return out


# The conditions a comparison must be made under, besides the kernel: the
# machine's state, the build, and the options that change what is measured.
# Only these are reported as differences (per-run bookkeeping such as
# options.out or the start time never is).
COMPARED_CONDITIONS = ("arch", "build_arch", "page_size", "cpu_model", "cpu_count", "cpus_online", "mem_total_kb", "governor", "boost", "smt", "thp",
                       "mitigations", "clocksource", "aslr", "virtualization", "virt", "perf_event_paranoid",
                       "kernel_cmdline", "compiler", "cxxflags", "suite_version", "quick",
                       "options.counters", "options.pin_cpu", "options.samples", "options.bench_args")


# What a kernel is beyond its release and version (which the sides' labels
# and "Comparing" line carry): the compared change itself, never a
# condition (a config differs because the kernel does).
KERNEL_IDENTITY = ("kernel_config",)


def _compared(key, keys=COMPARED_CONDITIONS):
    top = key.split(".", 1)[0]
    return key in keys or (top in keys and top != "options")


def meta_differences(base_meta, other_meta, keys=COMPARED_CONDITIONS):
    """[(key, base text, other text)] for every condition of `keys`
    (COMPARED_CONDITIONS; KERNEL_IDENTITY for the kernels themselves) that
    differs between the sides.  A side pooling runs that disagree shows
    every run's value ("a | b")."""
    a = {k: v for k, v in flatten_meta(base_meta).items() if _compared(k, keys)}
    b = {k: v for k, v in flatten_meta(other_meta).items() if _compared(k, keys)}
    keys = list(a) + [k for k in b if k not in a]
    keys.sort(key=lambda k: k != "arch")        # the architecture first: it outweighs everything else
    return [(k, a.get(k, "(not recorded)"), b.get(k, "(not recorded)")) for k in keys
            if condition_value(k, a.get(k)) != condition_value(k, b.get(k))]


def how_cases_ran(base, other):
    """Lines for the cases that ran differently on the two sides: without an
    optional kernel feature on one side only (a sample key whose value is
    "unavailable"), or skipped on one side (the reason from runs.jsonl).
    A failure on one side is the FAILED verdict (mark_failures)."""
    def not_run(side):
        why = {}
        for run in side.runs:
            for inv in run.invocations:
                # failed, timed out, crashed: the FAILED verdict says it
                if inv["status"] == "skipped" and inv["case"] not in side.cases:
                    why.setdefault(inv["case"], f"{inv['status']} on {side.label}: {inv['reason']}")
        return why
    lines = []
    base_why, other_why = not_run(base), not_run(other)
    names = sorted(set(base.cases) | set(other.cases) | set(base_why) | set(other_why))
    for n in names:
        b, o = base.cases.get(n), other.cases.get(n)
        if (b or o) and (b or o).control:
            continue
        for why in (base_why.get(n), other_why.get(n)):
            if why and (b or o):      # ran on the other side
                lines.append(f"{n}: {why}")
        if b and o:
            lines += [f"{n}: ran without {k} on {other.label}" for k in sorted(o.without - b.without)]
            lines += [f"{n}: ran without {k} on {base.label}" for k in sorted(b.without - o.without)]
    return lines
