#!/usr/bin/env python3
"""An extension that answers `initialize`, then never reads its stdin again.

A large request fills the pipe and the host's write cannot finish. It also starts a
grandchild that holds stdout open and prints its pid on stderr, so a test can check
that the kill reached the whole process group.
"""
import json
import subprocess
import sys
import time

request = json.loads(sys.stdin.readline())
tool = {"name": "sink", "description": "Takes anything, never answers", "inputSchema": {"type": "object"}}
result = {"name": "stops-reading", "version": "1.0.0", "tools": [tool]}
print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}), flush=True)

grandchild = subprocess.Popen(["sleep", "300"])
print(f"grandchild {grandchild.pid}", file=sys.stderr, flush=True)
while True:
    time.sleep(60)
