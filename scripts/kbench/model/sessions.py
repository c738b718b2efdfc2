"""Sessions: stretches of the machine's time a few hours apart at most
(runs further apart than SESSION_GAP_S start another).  What the runs of
one session share (a level of each case, the state the session left) is
not in the spread of its runs; it shows between sessions.  The run level's
spread is measured within sessions (within), and a session's own level is
added where the sides do not share their sessions (session_weight, in
units of one run's variance: SESSION_SHARE)."""
import math

from .pvalues import betainc
from .tails import D0

# A session level's variance as a share of one run's (a session: runs no more than SESSION_GAP_S
# apart), per boot of the kept A/A series (run_level.py --sessions, after the CPU's speed): 1.19 /
# 1.56 the memory manager's cases ("state"), 0.49 / 0.13 the other CPU-bound, 1.20 / 0.23 memory-,
# 0.55 / 0.12 file-system-bound: the larger.  Added for the sessions the sides do not share (none
# when they alternate in one session), and taken out of one run a side's own differences.
SESSION_SHARE = {"cpu": 0.49, "cross": 0.49, "same": 0.49, "state": 1.56, "memory": 1.2, "fs": 0.55, "control": 0.49}
SESSION_GAP_S = 3600.0


def sessions_of(starts):
    """A session number per run from its start time (seconds; nan: not
    recorded): runs sorted by start, a new session after a gap of more than
    SESSION_GAP_S; runs without a time are one session of their own with
    the run nearest to them in the list (the first session)."""
    order = sorted((t, i) for i, t in enumerate(starts) if math.isfinite(t))
    out = [0] * len(starts)
    sess, last = 0, None
    for t, i in order:
        if last is not None and t - last > SESSION_GAP_S:
            sess += 1
        out[i] = sess
        last = t
    return out


def session_weight(sessions, base_rows, other_rows):
    """sum over sessions of (the other side's share of runs in it - the
    base side's)^2: 0 when the sides share their sessions alike, 2 when
    each side is a session of its own."""
    ka, kb = len(base_rows), len(other_rows)
    got = 0.0
    for s in set(sessions[i] for i in list(base_rows) + list(other_rows)):
        wa = sum(1 for i in base_rows if sessions[i] == s) / ka
        wb = sum(1 for i in other_rows if sessions[i] == s) / kb
        got += (wb - wa) ** 2
    return got


def within(groups, sessions):
    """The groups of runs (lists of row indices, each one kernel's) split
    by session: a kernel measured on two occasions is two groups, each
    centred on its own mean, so that their spread is one run's within a
    session and a session's own level is not counted in it (the session
    term adds it where the sides need it).  sessions None: the groups as
    they are (no start times known)."""
    if sessions is None:
        return list(groups)
    out = []
    for rows in groups:
        by = {}
        for i in rows:
            by.setdefault(sessions[i], []).append(i)
        out += [by[s] for s in sorted(by)]
    return out


# The most a measured share may say (as the drift's scale: a fit further out is a kernel's change's)
SHARE_MAX = math.exp(4.0)


def measured(resid, sig2, sdf, groups, sessions, names, min_keys=8):
    """{name: (share, session dof)}: a session's level measured on the runs
    of kernels that ran in two sessions or more, per share group (names:
    per key its SESSION_SHARE group).  Per kernel and key, one-way: the
    session means' mean square MS over one run's variance (sig2, known to
    sdf degrees of freedom) follows (1 + n0 s) F(m - 1, sdf) (m sessions,
    n0 their effective size).  A group's s is where the median over its
    votes of that F's distribution function is a half (a minority of cases
    a session moved far does not carry it; genomic control's median, as
    the model's bulk checks take it).  resid: runs x keys, each run's
    estimate less what its covariates moved it by.  The session dof: the
    kernels' (m - 1) summed, which every key of the group shares."""
    votes, dofs = {}, {}
    for rows in groups:
        parts = within([rows], sessions)
        if len(parts) < 2:
            continue
        m, n = len(parts), sum(len(p) for p in parts)
        n0 = (n - sum(len(p) ** 2 for p in parts) / n) / (m - 1)
        seen = set()
        for j, name in enumerate(names):
            e = [[resid[i][j] for i in p] for p in parts]
            if not all(math.isfinite(v) for p in e for v in p) or not sig2[j] > 0 or not sdf[j] > 0:
                continue
            means = [sum(p) / len(p) for p in e]
            grand = sum(len(p) * mu for p, mu in zip(parts, means)) / n
            ms = sum(len(p) * (mu - grand) ** 2 for p, mu in zip(parts, means)) / (m - 1)
            votes.setdefault(name, []).append((ms / sig2[j], m - 1.0, float(sdf[j]), n0))
            seen.add(name)
        for name in seen:
            dofs[name] = dofs.get(name, 0.0) + (m - 1.0)

    def median_cdf(s, vs):
        cdf = sorted(betainc(v / 2.0, d / 2.0, v * q / (v * q + d)) if q > 0 else 0.0
                     for q, v, d in ((r / (1.0 + n0 * s), v, d) for r, v, d, n0 in vs))
        h = len(cdf) // 2
        return cdf[h] if len(cdf) % 2 else (cdf[h - 1] + cdf[h]) / 2.0
    out = {}
    for name, vs in votes.items():
        if len(vs) < min_keys:
            continue
        lo, hi = 0.0, SHARE_MAX
        if median_cdf(lo, vs) <= 0.5:
            out[name] = (0.0, dofs[name])
            continue
        if median_cdf(hi, vs) > 0.5:
            out[name] = (hi, dofs[name])
            continue
        for _ in range(40):
            mid = (lo + hi) / 2.0
            lo, hi = (mid, hi) if median_cdf(mid, vs) > 0.5 else (lo, mid)
        out[name] = ((lo + hi) / 2.0, dofs[name])
    return out


def taken(prior, got):
    """The share a comparison takes: the measured one (got: (share,
    session dof), or None) moderated towards the built-in prior with D0's
    weight, never below the prior (a share measured on a few sessions
    cannot tell a quieter host from the luck of those sessions: on the
    kept boots, taken below it, comparisons across sessions drew one
    false flag more at two and at three runs a side)."""
    return max(prior, moderated(prior, got, D0))


def moderated(prior, got, weight):
    """A share measured on session dof nu, moderated towards the prior
    share worth `weight` dof (the drift prior's D0): (weight prior + nu
    measured) / (weight + nu); the prior where nothing was measured."""
    if got is None:
        return prior
    s, nu = got
    return (weight * prior + nu * s) / (weight + nu)
