"""Why a case is not judged, in words.

A guard puts a case out of judgement when what it measures may be the
machine's doing rather than the kernel's: today the control cases of its
domain moved between the sides (compare.MachineShift).  Its verdict is
then stats.NOT_JUDGED, whatever its p, and Comparison.not_judged holds the
reason: a few words naming the guard, a colon, then how far the machine
moved ("memory shift: ctl_machine llc ran 9.1% slower").  Every view
says the reason as it is, and the words before the colon where room is
short; any other guard fills the same field through stats.decide."""
import math

from . import stats


def reason(shift, domain):
    """Why a case of this domain is not judged across this MachineShift
    (None: no controls on both sides); "" when it is judged.  It names the
    control that moved most, as the warning above the tables does."""
    if shift is None:
        return ""
    if shift.shifted:
        return f"machine shift: {_moved_most(shift.rows)}"
    if domain != "cpu" and shift.cpu_moved:
        kind = "memory" if domain == "memory" else "file-system"
        return f"machine moved: {_moved_most(shift.rows)}, which {kind}-bound cases do not follow"
    if domain == "memory" and shift.memory_shifted:
        return f"memory shift: {_moved_most(shift.memory_rows)}"
    return ""


def control_moved(cmp):
    """A control's comparison counts as a move of the machine: significant
    (and by the threshold), or a memory control's unconfirmed move of the
    threshold (stats.MOVED)."""
    return cmp.significant or cmp.verdict == stats.MOVED


def moved_most(rows):
    """The control (a compare.Row) that moved farthest from 1 among rows,
    of those that moved (control_moved) when any did."""
    moved = [r for r in rows if control_moved(r.cmp)] or rows
    return max(moved, key=lambda r: abs(math.log(r.cmp.ratio)) if r.cmp.ratio > 0 else 0.0)


def _moved_most(rows):
    r = moved_most(rows)
    return f"{r.case} ran {r.cmp.change_text}"
