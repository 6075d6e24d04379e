#!/usr/bin/env python3
"""An extension written as a first-time author in any language would write one: a
plain loop over stdin lines. Its one tool, `run`, misbehaves as its mode says, for
the tests of how the `dhara` command ends a session.

Usage: ext.py MODE

  exit-3              `run` makes the process exit with code 3 before answering
  ignore-shutdown     `run` answers; `shutdown` is ignored, and the end of stdin ends it
  no-newline          `run` answers without the final newline (flushed)
  leave-child PIDFILE `run` starts a `sleep` that holds stdout and stderr, writes its
                      pid to PIDFILE, then exits with code 3

Standard library only.
"""

import json
import subprocess
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "ignore-shutdown"

TOOLS = [
    {
        "name": "run",
        "description": "Do the one thing this mode does",
        "inputSchema": {"type": "object", "properties": {}},
    }
]


def send(message, end="\n"):
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + end)
    sys.stdout.flush()


def result(request_id, text):
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "result": {"content": [{"type": "text", "text": text}], "isError": False},
    }


def run(request_id):
    if MODE == "exit-3":
        sys.exit(3)
    if MODE == "leave-child":
        child = subprocess.Popen(["sleep", "300"])  # inherits stdout and stderr
        with open(sys.argv[2], "w") as pidfile:
            pidfile.write(str(child.pid))
        sys.exit(3)
    if MODE == "no-newline":
        send(result(request_id, "done"), end="")
        return
    send(result(request_id, "done"))


for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if method == "initialize":
        send({
            "jsonrpc": "2.0",
            "id": message["id"],
            "result": {"name": "lifecycle", "version": "1.0.0", "tools": TOOLS},
        })
    elif method == "tools/execute":
        run(message["id"])
    # `shutdown` and everything else: ignored. The loop ends with stdin.
