"""What the scripts need beyond the standard library, and the one line that
says so when it is missing.  Imports nothing of the package and no numpy:
the package's __init__ and cli both take it from here."""
import sys

# What the scripts need beyond the standard library (Debian's packages).
DEPENDENCIES = ("numpy", "matplotlib")
INSTALL = "apt-get install python3-numpy python3-matplotlib"


def missing_dependency(prog, error):
    """The one-line message for an ImportError of a dependency (numpy,
    matplotlib), or None when `error` is anything else."""
    name = getattr(error, "name", None) or ""
    if not isinstance(error, ImportError) or name.split(".")[0] not in DEPENDENCIES:
        return None
    return (f"{prog}: needs {name.split('.')[0]}, which {sys.executable} cannot import "
            f"({error}): {INSTALL} (make test installs them)")
