"""The reference behind the JSON-lines protocol, sleeping SECONDS (argv[1]) before each apply: a
Spark job lasts long enough to be interrupted, or to lose a worker mid-task."""

from __future__ import annotations

import json
import sys
import time

from conformance.serving.jsonlines import handle
from conformance.targets import make_target

if __name__ == "__main__":
    delay = float(sys.argv[1])
    target = make_target("reference")
    for line in sys.stdin:
        if '"apply"' in line:
            time.sleep(delay)
        sys.stdout.write(json.dumps(handle(target, line)) + "\n")
        sys.stdout.flush()
