"""kfc: the command-line application over the three libraries (`reference_impl`, `conformance`,
`spark_checks`).  Every command lives in `kfc.commands`; `kfc.cli.main` is the click group."""

import os as _os
import signal as _signal
import sys as _sys


def _interrupted_at_once(signum: int, frame: object) -> None:
    # Ctrl-C while the program imports its modules, or once its command has ended: nothing to clean
    # up, one line and out (no locks: a write and an exit).  kfc._errors.run_one_line puts Python's
    # handler back while a command runs.
    _os.write(2, b"interrupted\n")
    _os._exit(130)


# Only when this is the kfc program (`kfc …`, `python -m kfc …`), never when imported as a library.
PROGRAM = (_sys.argv[:1] == ["-m"] or _os.path.basename(_sys.argv[0] if _sys.argv else "") == "kfc") and \
    _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler
if PROGRAM:
    _signal.signal(_signal.SIGINT, _interrupted_at_once)
