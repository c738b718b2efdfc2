"""The machine a run was made on, in one line (summarize, the page)."""
from ..model.runs import _cache_kind, arch_of, meta_text


def machine_text(meta):
    """One line for the machine a run was made on: architecture, CPU, CPUs,
    page size, caches (what the summary shows above its tables)."""
    meta = meta or {}
    parts = [arch_of(meta) or "architecture not recorded"]
    built = meta.get("build_arch")
    if isinstance(built, str) and built and built != parts[0]:
        parts[0] += f" (binaries built for {built})"
    parts.append(meta_text(meta.get("cpu_model")) if meta.get("cpu_model") else "CPU model not recorded")
    if meta.get("cpu_count") is not None:
        parts.append(f"{meta_text(meta.get('cpu_count'))} CPUs")
    page = meta.get("page_size")
    if isinstance(page, int) and page > 0:
        parts.append(f"{page // 1024} KB pages" if page % 1024 == 0 else f"{page} B pages")
    elif page is not None:
        parts.append(f"pages {meta_text(page)}")
    cache = meta.get("cache")
    if isinstance(cache, list) and cache and all(isinstance(c, dict) for c in cache):
        parts.append("caches " + _caches_short(cache))
    elif "cache" in meta:
        parts.append("caches not reported" if cache is None else f"caches {meta_text(cache)}")
    return ", ".join(parts)


def _caches_short(cache):
    """'L1d 48K L1i 32K L2 2M L3 ? (64 B lines)': '?' where the size is not reported."""
    def size(kb):
        if not isinstance(kb, int):
            return "?"
        return f"{kb // 1024}M" if kb >= 1024 and kb % 1024 == 0 else f"{kb}K"
    words = []
    for c in cache:
        kind = _cache_kind(c)
        words.append(f"L{c.get('level')}{kind} {size(c.get('size_kb'))}")
    lines = sorted({c.get("line_bytes") for c in cache if isinstance(c.get("line_bytes"), int)})
    return " ".join(words) + (f" ({'/'.join(map(str, lines))} B lines)" if lines else "")
