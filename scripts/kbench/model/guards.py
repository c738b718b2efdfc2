"""Why a case is not judged, in words.

A guard puts a case out of judgement when what it measures may be the
machine's doing rather than the kernel's: today the control cases of its
domain moved between the sides (compare.MachineShift).  Its verdict is
then stats.NOT_JUDGED, whatever its p, and Comparison.not_judged holds the
reason: a few words naming the guard, a colon, then how far the machine
moved ("memory shift: the memory controls ran 9.1% slower").  Every view
says the reason as it is, and the words before the colon where room is
short; any other guard fills the same field through stats.decide."""


def reason(shift, domain):
    """Why a case of this domain is not judged across this MachineShift
    (None: no controls on both sides); "" when it is judged."""
    if shift is None:
        return ""
    if shift.shifted:
        return f"machine shift: the CPU controls ran {shift.change_text}"
    if domain != "cpu" and shift.cpu_moved:
        kind = "memory" if domain == "memory" else "file-system"
        return f"machine moved: the CPU controls ran {shift.change_text}, which {kind}-bound cases do not follow"
    if domain == "memory" and shift.memory_shifted:
        return f"memory shift: the memory controls ran {shift.memory_change_text}"
    return ""
