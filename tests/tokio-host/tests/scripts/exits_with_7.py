#!/usr/bin/env python3
"""An extension that echoes, ignores `shutdown`, and exits with code 7 at the end of stdin."""
import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if method == "initialize":
        tool = {"name": "echo", "inputSchema": {"type": "object"}}
        result = {"name": "exits-with-7", "version": "1.0.0", "tools": [tool]}
    elif method == "tools/execute":
        text = json.dumps(message["params"]["input"])
        result = {"content": [{"type": "text", "text": text}], "isError": False}
    else:
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
sys.exit(7)
