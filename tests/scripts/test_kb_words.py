"""What the tools print and write into the page states what the tool does,
never a date, a machine or an experiment's history (issue 43 item 4): no
string of the package's code (docstrings and comments aside) names a month,
a year, a VM or its vCPUs, or a time of day of some campaign."""
import ast
import re

from kb_modules import PKG, modules

HISTORY = re.compile(r"\b(VMs?|vCPUs?|(?:Jan|Febr)uary|March|April|May|June|July|August|September|October|"
                     r"November|December|20[0-9]{2}|afternoon|night|morning|session)\b")
# A category of the suite's own: virtual memory, not a virtual machine.
ALLOWED = ("File and VM latency",)


def printed_strings(path):
    """[(line, text)] of the string constants of a module that are not
    docstrings (f-strings: their literal parts)."""
    tree = ast.parse(path.read_text())
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docs.add(id(body[0].value))
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def history_in(path):
    out = []
    for line, text in printed_strings(path):
        for a in ALLOWED:
            text = text.replace(a, "")
        m = HISTORY.search(text)
        if m:
            out.append((line, m.group(0), text[:80]))
    return out


def test_no_printed_string_carries_a_date_a_machine_or_a_history():
    found = {name: hits for name, path in modules().items() if (hits := history_in(path))}
    assert found == {}


def test_the_check_finds_one(tmp_path):
    p = tmp_path / "m.py"
    p.write_text('"""Measured in May 2026 on a VM."""\n'
                 'X = "an A/A of two runs on a 2-vCPU VM flagged 43 cases"\n'
                 'Y = f"on {1} afternoon"\nZ = "File and VM latency"\n')
    assert [w for _, w, _ in history_in(p)] == ["vCPU", "afternoon"]
