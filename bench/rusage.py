#!/usr/bin/env python3
# Runs a command and writes to OUT one line: when it was launched (since the epoch), its wall time,
# and the user and system CPU time of it and every descendant it waited for (wait4's rusage), all
# in microseconds. bench/lib/harness.ts's `timed` measures both
# sides with it: unlike GNU time (10 ms), it keeps the microseconds, and the wall time excludes
# this script's own start.
#
#   rusage.py OUT COMMAND [ARG...]
import os
import sys
import time

out, argv = sys.argv[1], sys.argv[2:]
launched_at_us = time.time_ns() // 1000
started = time.monotonic_ns()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
wall_us = (time.monotonic_ns() - started) // 1000
with open(out, "w") as f:
    f.write(f"{launched_at_us} {wall_us} {round(usage.ru_utime * 1e6)} {round(usage.ru_stime * 1e6)}\n")
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
