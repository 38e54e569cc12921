"""version: fabench's version, as the C++ binaries report it (PROJECT_VERSION of the top-level
CMakeLists.txt, compiled into them). Installed, the package has a VERSION file that CMake
writes beside it; in a checkout, the version is read from CMakeLists.txt itself; anything else
says "unknown" rather than guess."""

import os
import re

HERE = os.path.dirname(os.path.realpath(__file__))


def version():
    try:
        with open(os.path.join(HERE, "VERSION"), encoding="utf-8") as f:
            v = f.read().strip()
        if v:
            return v
    except OSError:
        pass
    try:
        with open(os.path.join(HERE, "..", "..", "CMakeLists.txt"), encoding="utf-8") as f:
            m = re.search(r"\bproject\(\s*fabench\s+VERSION\s+([0-9][0-9A-Za-z.+-]*)", f.read())
        if m:
            return m.group(1)
    except OSError:
        pass
    return "unknown"
