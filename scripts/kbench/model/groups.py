"""Runs into kernels: which runs are one kernel (its release, label,
version string, command line and config), which were measured under the
same conditions, and the pooling of their cases.  Quick runs are never
pooled with full ones.  What does not add up is said through `warn`."""
import hashlib
import json

from . import decl as decl_mod
from .runs import Case, Group, arch_of, condition_value, meta_text


QUICK_NOTE = "kbench-run --quick, as in make quick: a check that the suite runs, not a measurement"


def quick_note(label, n_runs=1):
    """The one-line note printed above the summary or comparison of quick runs."""
    what = "a quick run" if n_runs == 1 else f"{n_runs} quick runs"
    return f"note: {label} is {what} ({QUICK_NOTE})."


def _run_list(runs):
    return ", ".join(f"{r.host}/{r.kernel} {r.run_id} ({r.path})" for r in runs)


# What makes a kernel besides its release (and the user's label): runs of one
# release that differ in any of these are different kernels (a rebuild with
# a patch, another command line).  kernel_config is compared only when every
# run of the release has it (runs recorded before it was kept have not).
IDENTITY_KEYS = ("kernel_version", "kernel_cmdline", "kernel_config")


# Conditions under which runs of one kernel should have been measured alike:
# pooled runs that differ in one of them are pooled, with a loud warning.
CONDITION_KEYS = ("arch", "build_arch", "page_size", "cpu_model", "cpu_count", "mem_total_kb", "governor", "boost", "smt", "thp", "mitigations",
                  "clocksource", "aslr", "virtualization", "virt", "compiler", "cxxflags", "suite_version")


def _identity(run, keys):
    return tuple(json.dumps(condition_value(k, run.meta.get(k)), sort_keys=True) for k in keys)


def _short_hash(text):
    return hashlib.sha256(text.encode()).hexdigest()[:6]


def split_identities(runs, warn=None):
    """Give runs of one (host, release, label) that differ in IDENTITY_KEYS
    kernels of their own: "RELEASE~abc123" (a hash of what differs), with a
    warning that names what differs.  Changes run.kernel in place."""
    by_key = {}
    for run in runs:
        by_key.setdefault(run.key, []).append(run)
    for (host, kernel), rs in by_key.items():
        keys = [k for k in IDENTITY_KEYS if k != "kernel_config" or all(r.meta.get(k) for r in rs)]
        ids = {}
        for r in rs:
            ids.setdefault(_identity(r, keys), []).append(r)
        if len(ids) < 2:
            continue
        differ = [k for i, k in enumerate(keys) if len({ident[i] for ident in ids}) > 1]
        names = []
        for ident, members in ids.items():
            name = f"{kernel}~{_short_hash(repr(ident))}"
            names.append(name)
            for r in members:
                r.kernel = name
        if warn:
            warn(f"WARNING: {host}/{kernel}: its runs come from {len(ids)} different kernels "
                 f"(they differ in {', '.join(differ)}): kept apart as {', '.join(sorted(names))}; "
                 f"name them with make run LABEL=... (kbench-run --label)")


def _condition_warnings(group, warn):
    """One warning per group whose runs differ in a condition that should be
    the same for every run of a kernel."""
    if len(group.runs) < 2 or not warn:
        return
    differ = []
    for k in CONDITION_KEYS:
        values = {json.dumps(condition_value(k, r.meta.get(k)), sort_keys=True) for r in group.runs if k in r.meta}
        if len(values) > 1:
            differ.append(f"{k} ({' | '.join(sorted(meta_text(r.meta.get(k)) for r in group.runs if k in r.meta))})")
    if differ:
        warn(f"WARNING: the {len(group.runs)} runs of {group.label} were not measured under the same conditions: "
             + "; ".join(differ) + ". They are pooled; compare them apart with --per-run or their directories.")


COUNTERS_NOTE = ("--counters changes what is measured: the perf counters are inherited by every partner and "
                 "child, which makes fork and every context switch of a counted task dearer (src/reference/"
                 "running.md, Counters)")


def counters_warning(sides):
    """sides: [(label, runs)].  A loud warning (a string) when some of these
    runs were made with --counters and others without, naming which; None
    when all were made the same way."""
    with_, without = [], []
    for label, runs in sides:
        n = sum(r.counters is not None for r in runs)
        if n == len(runs):
            with_.append(label)
        elif n == 0:
            without.append(label)
        else:
            with_.append(f"{label} ({n} of its {len(runs)} runs)")
            without.append(f"{label} (the other {len(runs) - n})")
    if not with_ or not without:
        return None
    return (f"WARNING: COUNTERS DIFFER: runs with --counters: {', '.join(with_)}; without: {', '.join(without)}. "
            f"{COUNTERS_NOTE}: a time measured with counters is not comparable with one measured without. "
            f"Compare runs made the same way.")


def emulated_warning(sides):
    """sides: [(label, runs)].  A loud warning (a string) when any of these
    runs was made in an emulated guest (scripts/vm-run without KVM: meta
    virt "emulated"), naming them; None when none was."""
    emulated = []
    for label, runs in sides:
        n = sum(r.meta.get("virt") == "emulated" for r in runs)
        if n:
            emulated.append(label if n == len(runs) else f"{label} ({n} of its {len(runs)} runs)")
    if not emulated:
        return None
    return (f"WARNING: EMULATED: {', '.join(emulated)} ran in a QEMU guest without KVM (meta virt: emulated): "
            f"its timings are 5-30x off and not comparable with native ones; it shows that the cases run "
            f"on that kernel, and compares only with other emulated runs, roughly.")


def group_runs(runs, warn=None):
    """Group runs by (host, kernel) and pool each case's reps.

    A kernel is its release, plus the label of make run LABEL=..., plus
    (split_identities) its version string, command line and config: runs of
    one release that differ there are kept apart, with a warning.  Runs of
    one kernel measured under different conditions are pooled with a
    warning; runs with and without --counters, of one kernel or of
    different kernels, with a loud one (counters_warning).

    Quick runs are never pooled with full runs: a kernel that has both keeps
    its full runs, and the quick ones are named in one warning.  A kernel
    with only quick runs keeps them (Group.quick).
    Returns a list of Groups in natural order of (host, kernel).
    """
    split_identities(runs, warn)
    groups = {}
    for run in runs:
        g = groups.get(run.key)
        if g is None:
            g = groups[run.key] = Group(run.host, run.kernel)
        g.runs.append(run)
    left_out = []
    for g in groups.values():
        if not g.quick and any(r.quick for r in g.runs):
            left_out += [r for r in g.runs if r.quick]
            g.runs = [r for r in g.runs if not r.quick]
    if left_out and warn:
        warn(f"left out {len(left_out)} quick run(s) found among full runs of the same kernel "
             f"({QUICK_NOTE}; never pooled with full runs; give a quick run's directory alone to see it): "
             + _run_list(left_out))
    # First: of everything two runs can differ in, the architecture weighs most.
    w = arch_warning([(g.label, r.meta) for g in groups.values() for r in g.runs])
    if w and warn:
        warn(w)
    for g in groups.values():
        g.cases = pool_cases(g.runs, warn)
        _condition_warnings(g, warn)
    w = counters_warning([(g.label, g.runs) for g in groups.values()])
    if w and warn:
        warn(w)
    w = emulated_warning([(g.label, g.runs) for g in groups.values()])
    if w and warn:
        warn(w)
    return [groups[k] for k in sorted(groups, key=lambda k: (decl_mod.natural_key(k[0]), decl_mod.natural_key(k[1])))]


def drop_quick_groups(groups, warn=None):
    """The groups without the quick-only ones, when there is any full run
    (for the report and the charts, which gather everything under
    results/: make quick never changes them); the groups left out are
    named in one warning.  Only quick runs: all of them, unchanged."""
    full = [g for g in groups if not g.quick]
    if not full or len(full) == len(groups):
        return groups
    quick = [g for g in groups if g.quick]
    if warn:
        warn(f"left out {sum(len(g.runs) for g in quick)} quick run(s) of kernels that have no full run "
             f"({QUICK_NOTE}): " + _run_list([r for g in quick for r in g.runs]))
    return full


def pool_cases(runs, warn=None):
    """Pool the cases of several runs; rep identity is (run_id, rep_idx)."""
    pooled = {}
    for run in runs:
        for name, c in run.cases.items():
            p = pooled.get(name)
            if p is None:
                p = pooled[name] = Case(c.name, c.bench, c.variant, c.params, c.placement, c.metric,
                                        control=c.control, declared=c.declared, bytes_per_op=c.bytes_per_op)
            elif p.metric != c.metric:
                if warn:
                    warn(f"{run.path}: case {name!r} is {c.metric} here but {p.metric} in another run; "
                         f"this run's samples of it are left out")
                continue
            p.without |= c.without
            for k, v in c.reps.items():
                if k in p.reps:
                    if warn:
                        warn(f"{run.path}: rep {k[1]} of run {k[0]} of {name!r} also appears in "
                             f"another directory (a copied run?); counted once")
                    continue
                p.reps[k] = list(v)
                if k in c.rep_start:
                    p.rep_start[k] = c.rep_start[k]
                if k in c.disturbed:
                    p.disturbed.add(k)
                if k in c.blocked:
                    p.blocked[k] = list(c.blocked[k])
                for name_, by_rep in c.counters.items():
                    if k in by_rep:
                        p.counters.setdefault(name_, {})[k] = list(by_rep[k])
                for name_, by_rep in c.per_event.items():
                    if k in by_rep:
                        p.per_event.setdefault(name_, {})[k] = list(by_rep[k])
    return pooled


def arch_warning(items):
    """The loud line for runs or sides of more than one architecture, None
    when they share one.  ITEMS: [(label, meta)]."""
    archs = {}
    for label, meta in items:
        labels = archs.setdefault(arch_of(meta) or "not recorded", [])
        if label not in labels:
            labels.append(label)
    if len(archs) < 2:
        return None
    which = "; ".join(f"{a}: {', '.join(labels)}" for a, labels in archs.items())
    return (f"WARNING: DIFFERENT ARCHITECTURES ({which}): another CPU, another build of the kernel and of the "
            f"suite; their figures are not one kernel against another")
