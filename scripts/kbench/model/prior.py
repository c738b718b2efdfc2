"""Making a drift prior from A/A runs (scripts/drift-prior): per case, how
far whole runs of one kernel drift beyond their reps' noise, moderated
across cases (drift.estimate), widened by `inflate`, never below an
earlier prior's (drift.at_least); with the file's source and method."""
from . import compare, drift


class NoCases(Exception):
    """The runs share no case with reps enough to measure."""


class Overlap(Exception):
    """The earlier prior was made from some of these runs."""


def make(lists, runs, estimator, inflate, machine="", earlier=None, earlier_name=""):
    """lists: [[Run]], each the runs of one kernel (two or more); runs:
    every run read.  (taus, source, method, used runs, boot ids)."""
    opts = compare.Options(estimator=estimator, relative=False)     # the drift as measured: the built-in
    groups = [[compare.run_estimates(r, opts) for r in rs] for rs in lists]
    med = compare.Options(estimator="median", relative=False)
    memory = {n for r in runs for n, c in r.cases.items() if compare.domain_of(c) == "memory"}
    bulk = [[{k: v for k, v in compare.run_estimates(r, med).items() if k in memory} for r in rs] for rs in lists]
    taus = drift.estimate(drift.run_spreads(groups), inflate=inflate, bulk=drift.run_spreads(bulk))
    if not taus:
        raise NoCases("the runs share no case with reps enough to measure (each needs 2 reps or more)")
    used = [r for rs in lists for r in rs]
    boots = {(r.meta or {}).get("boot_id") or r.run_id for r in used}
    metas = [r.meta or {} for r in used]
    source = {
        "runs": len(used), "kernels": len(lists), "boots": len(boots),
        "machine": machine or ", ".join(sorted({f"{m.get('cpu_count', '?')}-CPU {m.get('virt') or 'machine'} "
                                                   f"({m.get('cpu_model', '?')})" for m in metas})),
        "kernels_seen": sorted({r.kernel for r in used}),
        "suite_versions": sorted({str(m.get("suite_version")) for m in metas}),
        "run_ids": sorted(r.run_id for r in used),
        "started_utc": sorted(str(m.get("started_utc")) for m in metas),
        "boot_ids": sorted(boots - {r.run_id for r in used}),   # the recorded ones
    }
    if earlier is not None:
        overlap = set(source["run_ids"]) & set(earlier.source.get("run_ids", []))
        if overlap:
            raise Overlap(f"was made from {len(overlap)} of these runs "
                          f"({', '.join(sorted(overlap))}): give only runs it was not made from")
        taus = drift.at_least(taus, earlier)
        source = drift.merged_source(source, earlier)
    method = (f"per case: the runs' estimates ({estimator} estimator) of each kernel around their mean; their "
              f"pooled variance beyond the runs' own squared standard errors, moderated towards the binary's "
              f"cases (empirical Bayes), never below the case's own nor, for a memory-bound case, the pooled "
              f"variance of the runs' medians, times {inflate:g}, never below tau {drift.TAU_FLOOR:g}; df = the moderated degrees "
              f"of freedom, at most {drift.MAX_DF:g}. A case not listed takes its bench's largest tau, else the "
              f"default (the 90th percentile over cases). A case of a bench in shared_benches (file-system-"
              f"bound: one file system's state moves them all) takes at least the root mean square of its "
              f"bench's taus.")
    if earlier is not None:
        method += (f" Each case's tau is at least that of the earlier prior {earlier_name} "
                   f"({earlier.source.get('runs', '?')} runs on {earlier.source.get('boots', '?')} boot(s); "
                   f"its source under source.at_least), with that prior's df where its tau is the larger.")
    return taus, source, method, used, boots


def shared_benches(runs):
    """The benches whose cases share one drift in a prior made from `runs`:
    those with file-system-bound cases (declared domain fs)."""
    return sorted({c.bench for r in runs for c in r.cases.values() if compare.domain_of(c) == "fs"})
