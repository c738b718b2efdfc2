"""Plain-text tables for the terminal."""


def table(headers, rows, right=None):
    """Rows of strings as an aligned table.  right: set of column indexes
    to right-align (numbers)."""
    right = set(right or ())
    cols = len(headers)
    widths = [len(h) for h in headers]
    for r in rows:
        for i in range(cols):
            widths[i] = max(widths[i], len(r[i]))

    def line(cells):
        out = []
        for i, c in enumerate(cells):
            out.append(c.rjust(widths[i]) if i in right else c.ljust(widths[i]))
        return "  ".join(out).rstrip()

    lines = [line(headers), "  ".join("-" * w for w in widths)]
    lines += [line(r) for r in rows]
    return "\n".join(lines)
