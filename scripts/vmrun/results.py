"""What comes back from the guest: the run's archive from the data port's
text (size and md5 checked), unpacked beside the results and moved into
place only when complete; why nothing came back when nothing did; what
the run's invocations say."""
import base64
import collections
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import tarfile
import tempfile
from pathlib import Path

from .common import Failure


def read_transfer(data_file):
    """The results tarball from the data port's text, or why not."""
    text = data_file.read_bytes().decode("ascii", "replace").replace("\r", "")
    if "KBENCH-DATA-BEGIN" not in text:
        return None, "nothing came back on the data port"
    body = text.split("KBENCH-DATA-BEGIN", 1)[1]
    m = re.search(r"KBENCH-DATA-END (\d+) ([0-9a-f]{32})", body)
    if not m:
        return None, "the transfer of the run directory was cut off (no end marker)"
    try:
        raw = base64.b64decode("".join(body[:m.start()].split()), validate=True)
    except ValueError as e:
        return None, f"the transfer is corrupt ({e})"
    if len(raw) != int(m.group(1)) or hashlib.md5(raw).hexdigest() != m.group(2):
        return None, f"the transfer is corrupt ({len(raw)} bytes, the guest sent {m.group(1)}, or md5 differs)"
    return raw, ""


def unpack_run(raw, staging, run_rel):
    """Unpack into STAGING; the run directory inside it (checked complete)."""
    try:
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:gz") as t:
            for mem in t.getmembers():
                if mem.name.startswith("/") or ".." in Path(mem.name).parts or not (mem.isfile() or mem.isdir()):
                    raise Failure(f"the guest's archive holds an unexpected entry: {mem.name}", 3)
            t.extractall(staging)
    except (tarfile.TarError, EOFError, OSError) as e:
        raise Failure(f"the guest's archive cannot be unpacked: {e}", 3)
    run = staging / run_rel
    meta = run / "meta.json"
    if not run_rel or not meta.is_file() or not _run_file(run, "samples.jsonl").is_file():
        raise Failure("the guest sent no run directory (kbench-run did not start or wrote nothing)", 3)
    try:
        status = json.loads(meta.read_text()).get("status")
    except ValueError:
        status = "unreadable"
    if status != "complete":
        raise Failure(f"the guest's run is not complete (meta.json status: {status})", 3)
    return run


def place_run(run, staging, out):
    """Move the run directory from STAGING into OUT at the same relative
    path: a rename, so it appears complete or not at all."""
    rel = run.relative_to(staging)
    dest = out / rel
    if dest.exists():
        raise Failure(f"{dest} exists already", 3)
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.rename(run, dest)
    return dest


def _run_file(run_dir, name):
    """A run's NAME, or NAME.gz where kbench-run compressed it at the end of the run."""
    plain = run_dir / name
    return plain if plain.is_file() or not plain.with_name(name + ".gz").is_file() else plain.with_name(name + ".gz")


def _run_lines(run_dir, name):
    p = _run_file(run_dir, name)
    data = p.read_bytes()
    return (gzip.decompress(data) if p.name.endswith(".gz") else data).decode("utf-8", "replace").splitlines()


def invocation_lines(run_dir):
    runs = [json.loads(l) for l in _run_lines(run_dir, "runs.jsonl") if l.strip()]
    n = collections.Counter(r["status"] for r in runs)
    lines = [f"invocations: {len(runs)}: " + ", ".join(f"{v} {k}" for k, v in sorted(n.items()))]
    reasons = collections.Counter((r["status"], r["case"], r.get("reason") or "") for r in runs
                                  if r["status"] != "ok")
    lines += [f"  {s}: {c}: {why}" + (f" (x{k})" if k > 1 else "") for (s, c, why), k in sorted(reasons.items())]
    # An optional kernel feature a case ran without (a sample key "unavailable").
    without = collections.Counter()
    for line in _run_lines(run_dir, "samples.jsonl"):
        if '"unavailable"' in line:
            s = json.loads(line)
            without.update((s.get("case"), k) for k, v in s.items() if v == "unavailable")
    lines += [f"  ran without {k}: {c} ({n} samples)" for (c, k), n in sorted(without.items())]
    return lines


def no_run_message(rc, markers, console, why, out, limit):
    """Why no complete run came back (WHY: read_transfer's word on the data
    port), from qemu's exit status RC (None: killed at LIMIT), the console's
    MARKERS and its log, with the console's last lines and qemu's own."""
    log = console.read_bytes().decode("utf-8", "replace")
    if rc is None:
        cause = f"the guest did not finish within --limit {limit} s: killed"
    elif re.search(r"Kernel panic", log):
        cause = "the guest's kernel panicked: " + re.search(r"Kernel panic[^\n]*", log).group(0).strip()
    elif "KBENCH-BOOTED" not in markers:
        cause = f"the guest never reached its init (qemu exit status {rc})"
    elif "KBENCH-RC" not in markers:
        cause = f"the guest stopped during the run (qemu exit status {rc})"
    else:
        cause = f"qemu exit status {rc}"
    clean = [re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", ln).rstrip("\r").split("\r")[-1]
             for ln in log.strip().split("\n")]
    tail = "\n".join(ln for ln in clean if ln.strip())[-3000:]
    tail = "\n".join(tail.splitlines()[-15:])
    qlog = console.with_suffix(".qemu.log")
    qtail = qlog.read_text(errors="replace").strip() if qlog.is_file() else ""
    return (f"no complete run came back: {cause}; {why}. Results root {out} unchanged."
            + (f"\nlast console lines:\n{tail}" if tail else "")
            + (f"\nqemu: {qtail}" if qtail else ""))


def guest_lines(m, virt, cpus, mem, seconds):
    """What the guest's console markers M say about it: its kernel, its
    machine, how long it booted and ran."""
    booted = float((m.get("KBENCH-BOOTED") or ["nan"])[0] or "nan")
    start = float((m.get("KBENCH-START") or ["nan 0"])[0].split()[0] or "nan")
    end = float(((m.get("KBENCH-RC") or ["0 nan"])[-1].split() + ["nan"])[1])
    return [f"kernel: {(m.get('KBENCH-UNAME') or ['?'])[0]}",
            f"guest: {virt}, {cpus} CPUs, {mem}; {(m.get('KBENCH-FS') or ['?'])[0]}; clocksource "
            f"{(m.get('KBENCH-CLOCKSOURCE') or ['?'])[0]}; boot {booted:.1f} s to init, run {end - start:.0f} s, "
            f"{seconds:.0f} s in all"]


def collect_run(raw, markers, out):
    """The guest's run (RAW, its archive) moved into OUT at the path the
    console's KBENCH-RUNDIR marker names: unpacked beside the results first
    (a dot directory, which the scripts never read), so that moving it into
    place is one rename. Where it landed."""
    run_rel = (markers.get("KBENCH-RUNDIR") or [""])[-1].strip()
    run_rel = run_rel[len("/results/"):] if run_rel.startswith("/results/") else ""
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".vm-run-", dir=out))
    try:
        return place_run(unpack_run(raw, staging, run_rel), staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
