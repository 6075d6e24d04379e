#!/usr/bin/env python3
"""A Dhara extension with one selectable fault, for testing `dhara check`.

Usage: faulty_ext.py [FAULT]

Without a fault (or with `none`) it follows the protocol in every point `dhara check`
looks at, so the checker must pass it. Each fault breaks exactly one point:

  silent-initialize      never answers `initialize`
  silent                 answers `initialize` and nothing else
  ignores-malformed      answers nothing to a line that is not JSON
  crash-on-malformed     exits with code 2 on a line that is not JSON
  ignores-unknown        answers nothing to a request for an unknown method
  numeric-ids            echoes string ids as numbers
  float-ids              passes integer ids through a double, as JavaScript does
  other-id               answers each tool run under another id
  string-id              answers each tool run under its id turned into a string
  crash-on-tool          exits with code 3 whenever a tool runs
  bad-result             answers each tool run with `content` a string
  bad-progress           sends a `progress` notification without `message`
  no-newline             writes each tool run's reply without its newline
  no-flush               holds each tool run's reply until the end of stdin, as an
                         unflushed stdout does
  answers-notifications  answers notifications with an error
  exit-1-on-shutdown     exits with code 1 on `shutdown`
  ignores-shutdown       keeps running after `shutdown`, until the end of stdin
  hangs-on-shutdown      keeps running after `shutdown` and after the end of stdin
  duplicate-tools        offers two tools with the same name, one without a description
  bad-descriptor         offers a tool with a numeric description, one with a string
                         inputSchema
  bad-name               offers a tool whose name has a space
  loose-schema           offers a tool whose inputSchema has no type and a pattern
  skips-validation       runs a tool even when required input is missing
  logs-to-stdout         prints a log line on stdout before each answer

Standard library only.
"""

import json
import sys
import time

FAULT = sys.argv[1] if len(sys.argv) > 1 else "none"

TOOLS = [
    {
        "name": "echo",
        "description": "Return the given text.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
    {
        "name": "now",
        "description": "Return a fixed time stamp.",
        "inputSchema": {"type": "object", "properties": {}},
    },
]
if FAULT == "duplicate-tools":
    TOOLS.append({"name": "echo", "inputSchema": {"type": "object"}})
if FAULT == "bad-descriptor":
    TOOLS.append({"name": "numeric", "description": 5, "inputSchema": {"type": "object"}})
    TOOLS.append({"name": "stringy", "description": "A string schema", "inputSchema": "object"})
if FAULT == "bad-name":
    TOOLS.append(
        {"name": "read file", "description": "A name with a space", "inputSchema": {"type": "object"}}
    )
if FAULT == "loose-schema":
    TOOLS.append(
        {
            "name": "lookup",
            "description": "A schema without a type",
            "inputSchema": {"properties": {"key": {"type": "string", "pattern": "^(?!_)"}}},
        }
    )


HELD = []


def send(message, ending="\n"):
    if FAULT == "logs-to-stdout":
        sys.stdout.write("handling a message\n")
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + ending)
    sys.stdout.flush()


def send_tool_reply(message):
    """A tool run's reply, with the faults of writing it."""
    if FAULT == "no-flush":
        HELD.append(message)
    else:
        send(message, "" if FAULT == "no-newline" else "\n")


def reply_id(request_id):
    if FAULT == "numeric-ids" and isinstance(request_id, str):
        return int(request_id) if request_id.isdigit() else len(request_id)
    if FAULT == "float-ids" and isinstance(request_id, int):
        return int(float(request_id))
    return request_id


def result(request_id, value):
    return {"jsonrpc": "2.0", "id": reply_id(request_id), "result": value}


def tool_result(request_id, text):
    """The reply to a tool run, with the tool-run faults."""
    body = {"content": [{"type": "text", "text": text}], "isError": False}
    if FAULT == "bad-result":
        body["content"] = text
    reply = result(request_id, body)
    if FAULT == "other-id" and isinstance(request_id, int):
        reply["id"] = request_id + 1000
    if FAULT == "string-id":
        reply["id"] = str(request_id)
    reply["tool_run"] = True
    return reply


def error(request_id, code, message, data=None):
    body = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": reply_id(request_id), "error": body}


def valid_id(value):
    return value is None or isinstance(value, str) or (
        isinstance(value, int) and not isinstance(value, bool)
    )


class Session:
    def __init__(self):
        self.initialized = False
        self.shutting_down = False

    def handle(self, message):
        """The reply to one decoded message, or None."""
        if not isinstance(message, dict):
            return error(None, -32600, "Invalid Request")
        request_id = message.get("id")
        if (
            message.get("jsonrpc") != "2.0"
            or not isinstance(message.get("method"), str)
            or not valid_id(request_id)
            or not isinstance(message.get("params", {}), (dict, list))
        ):
            return error(request_id if valid_id(request_id) else None, -32600, "Invalid Request")
        method = message["method"]
        params = message.get("params", {})
        if "id" not in message:
            if method == "shutdown":
                self.shutting_down = True
            if FAULT == "answers-notifications":
                return error(None, -32601, "Method not found: " + method)
            return None
        if method == "initialize":
            self.initialized = True
            if FAULT == "silent-initialize":
                return None
            return result(request_id, {"name": "faulty", "version": "1.0.0", "tools": TOOLS})
        if FAULT == "silent":
            return None
        if not self.initialized:
            return error(request_id, -32002, "Not initialized")
        if method == "tools/list":
            return result(request_id, {"tools": TOOLS})
        if method == "tools/execute":
            return self.execute(request_id, params)
        if FAULT == "ignores-unknown":
            return None
        return error(request_id, -32601, "Method not found", {"method": method})

    def execute(self, request_id, params):
        name = params.get("toolName") if isinstance(params, dict) else None
        tool_input = params.get("input", {}) if isinstance(params, dict) else None
        tool = next((t for t in TOOLS if t["name"] == name), None)
        if tool is None:
            return error(request_id, -32602, "Unknown tool: %s" % name, {"toolName": name})
        if not isinstance(tool_input, dict):
            return error(request_id, -32602, "Input must be an object", {"toolName": name})
        if FAULT != "skips-validation":
            for required in tool["inputSchema"].get("required", []):
                if required not in tool_input:
                    return error(
                        request_id,
                        -32602,
                        "Missing required parameter '%s'" % required,
                        {"toolName": name},
                    )
        if FAULT == "crash-on-tool":
            sys.exit(3)
        if name == "now":
            progress = {"message": "reading the clock"}
            if FAULT == "bad-progress":
                progress = {"text": "reading the clock"}
            send({"jsonrpc": "2.0", "method": "progress", "params": progress})
        text = str(tool_input.get("text", "")) if name == "echo" else "2026-01-01T00:00:00Z"
        return tool_result(request_id, text)

    def handle_line(self, line):
        try:
            message = json.loads(line)
        except ValueError:
            if FAULT == "ignores-malformed":
                return None
            if FAULT == "crash-on-malformed":
                sys.exit(2)
            return error(None, -32700, "Parse error")
        if isinstance(message, list):
            if not message:
                return error(None, -32600, "Invalid Request")
            replies = [r for r in (self.handle(m) for m in message) if r is not None]
            for r in replies:
                r.pop("tool_run", None)
            return replies or None
        return self.handle(message)


def main():
    session = Session()
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = session.handle_line(line)
        if isinstance(reply, dict) and reply.get("tool_run"):
            del reply["tool_run"]
            send_tool_reply(reply)
        elif reply is not None:
            send(reply)
        if session.shutting_down:
            if FAULT in ("ignores-shutdown", "hangs-on-shutdown"):
                continue
            sys.exit(1 if FAULT == "exit-1-on-shutdown" else 0)
    for message in HELD:
        send(message)
    if FAULT == "hangs-on-shutdown":
        while True:
            time.sleep(60)
    sys.exit(0)


if __name__ == "__main__":
    main()
