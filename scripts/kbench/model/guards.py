"""Why a case is not judged, in words.

A guard puts a case out of judgement when what it measures may be the
machine's doing rather than the kernel's: today a control case the case
follows moved between the sides beyond what the host's runs have shown
(compare.MachineShift, the run-level model's guard).  Its verdict is
then stats.NOT_JUDGED, whatever its p, and Comparison.not_judged holds the
reason: a few words naming the guard, a colon, then how far the machine
moved ("memory shift: ctl_machine llc ran 70.0% faster against the CPU's
speed, beyond what the runs of this host have shown (up to 52%)").  Every
view says the reason as it is, and the words before the colon where room
is short; any other guard fills the same field through stats.decide."""
import math


def reason(shift, domain):
    """Why a case of this domain is not judged across this MachineShift
    (None: no controls on both sides); "" when it is judged."""
    return shift.reason(domain) if shift is not None else ""


def control_moved(cmp):
    """A control's comparison counts as a move of the machine: significant
    and by the minimum effect."""
    return cmp.significant


def moved_most(rows):
    """The control (a compare.Row) that moved farthest from 1 among rows,
    of those that moved (control_moved) when any did."""
    moved = [r for r in rows if control_moved(r.cmp)] or rows
    return max(moved, key=lambda r: abs(math.log(r.cmp.ratio)) if r.cmp.ratio > 0 else 0.0)
