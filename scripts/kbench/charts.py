"""The charts of plot and report, and the second processes that draw those
needing the runs alone while the first compares them.

Each part is drawn by the same functions whichever process draws it, so
that a page or a chart file is the same bytes made in one process or two.
matplotlib (views/plot.py) is imported only when a chart is drawn: it
takes about a second, which summarize and compare never spend."""
import multiprocessing

from .model import scaling, workers
from .views import html, scaling_text
from .views.strips import strip_figures


def _plot():
    from .views import plot
    return plot


class Background:
    """fn() in a forked second process while this one goes on, its result
    sent back through a pipe; in this process instead where there is one
    CPU or KBENCH_JOBS=1 (as the reading's workers: workers.count), or when
    the second process fails.  Either way the same result."""

    def __init__(self, fn):
        self._fn, self._proc, self._conn = fn, None, None
        if workers.count(workers.PARALLEL_FROM) < 2:
            return
        try:
            ctx = multiprocessing.get_context("fork")
            self._conn, end = ctx.Pipe(duplex=False)
            self._proc = ctx.Process(target=_in_background, args=(fn, end), daemon=True)
            self._proc.start()
            end.close()
        except Exception:   # no fork, no process: here, later
            self._proc = None

    def result(self):
        if self._proc is not None:
            try:
                ok, value = self._conn.recv()
            except (EOFError, OSError):
                ok = False
            self._conn.close()
            self._proc.join()
            if ok:
                return value
        return self._fn()


def _in_background(fn, conn):
    """A Background's second process: fn()'s result, or (False, None) when
    it failed (the first process then makes it itself)."""
    try:
        conn.send((True, fn()))
    except BaseException:   # noqa: BLE001 -- said by making it again in the first process
        try:
            conn.send((False, None))
        except OSError:
            pass
    finally:
        conn.close()


def bars(groups, comparisons, out_dir, formats):
    """{category: charts} of each kernel after the first against it (the
    comparisons: {group key: (rows, cells)}), files in out_dir or, with
    out_dir None, in memory."""
    return _plot().category_bars(groups[0].label, [(g.label, comparisons[g.key][0]) for g in groups[1:]], out_dir,
                                 formats)


def run_charts(groups, out_dir, formats, samples, estimator):
    """plot's charts of the runs alone, written to out_dir in each of
    formats: ({name: paths} of the size and scaling curves, {case: path} of
    the raw-sample charts, with samples)."""
    plot = _plot()
    curves = plot.size_curves(groups, out_dir, formats, estimator)
    curves.update(plot.scaling_curves([(g, scaling.curves(g, estimator)) for g in groups], out_dir, formats))
    return curves, plot.strip_plots(groups, out_dir, formats, estimator) if samples else {}


def page_parts(groups, estimator, samples, plots_dir, formats):
    """What the page draws from the runs alone, whatever the comparisons
    say, started now: result() gives (the size curves, the raw-sample
    strips, the scaling section's charts and tables, the control traces).
    With plots_dir, the curves are files there.  A second process draws
    them while this one compares the kernels.  With one kernel there is
    nothing to compare, and two second processes share them, about as long
    each: the matplotlib charts (the curves, the scaling section) in one,
    the strips and the traces in the other.  (With more kernels a third
    process would slow the comparisons, the longer part, on two CPUs.)"""
    def charts():
        curves = _plot().size_curves(groups, plots_dir, formats if plots_dir is not None else ("svg",), estimator)
        return curves, scaling_text.html_kernels(groups, estimator)

    def drawn():
        return strip_figures(groups, estimator) if samples else {}, html.run_traces(groups)
    if len(groups) == 1:
        return _PageParts([Background(charts), Background(drawn)])
    return _PageParts([Background(lambda: (charts(), drawn()))])


class _PageParts:
    """page_parts' Backgrounds: the two halves (the charts, the strips and
    traces) each in its own, or both in one; result() in the page's order."""

    def __init__(self, backgrounds):
        self._backgrounds = backgrounds

    def result(self):
        got = [bg.result() for bg in self._backgrounds]
        (curves, scaling_html), (strips, traces) = got if len(got) == 2 else got[0]
        return curves, strips, scaling_html, traces
