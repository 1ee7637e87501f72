"""The ``hlo-opt`` console script: the command line, run in this process
by the same code as the Rust binary (``hlo_opt::cli``)."""

import signal
import sys

from ._hlo_opt import cli_main


def main() -> None:
    # Python buffers its own streams; the command writes to the process's
    # descriptors directly, so nothing of Python's may be left pending.
    sys.stdout.flush()
    sys.stderr.flush()
    # Ctrl-C ends the command as it ends the binary (exit 130, temporary
    # files removed), not as a KeyboardInterrupt nobody polls.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(cli_main(sys.argv))


if __name__ == "__main__":
    main()
