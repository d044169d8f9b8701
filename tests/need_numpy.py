"""numpy for the test and benchmark scripts, or a loud skip.

    from need_numpy import numpy_or_skip
    np = numpy_or_skip("the --save test")

Debian's numpy belongs to /usr/bin/python3, which may not be the first python3 on PATH: the
calling script is then run again there (once). Without any numpy the script exits 77, meson's
skip, with a message saying what is missing.
"""

import os
import sys

REEXEC_MARK = "TRACER_NUMPY_REEXEC"


def numpy_or_skip(what):
    try:
        import numpy
        return numpy
    except ImportError as exc:
        system_python = "/usr/bin/python3"
        if (os.environ.get(REEXEC_MARK) is None and os.path.exists(system_python)
                and os.path.realpath(sys.executable) != os.path.realpath(system_python)):
            env = dict(os.environ, **{REEXEC_MARK: "1"})
            script = os.path.abspath(sys.argv[0])
            os.execve(system_python, [system_python, script] + sys.argv[1:], env)
        print("*" * 78, file=sys.stderr)
        print("SKIP: %s needs python3 with numpy (Debian: apt-get install python3-numpy)" % what,
              file=sys.stderr)
        print("  (%s: %s, python %s)" % (type(exc).__name__, exc, sys.executable), file=sys.stderr)
        print("*" * 78, file=sys.stderr)
        sys.exit(77)
