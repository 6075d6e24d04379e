#!/usr/bin/env python3
"""A small Dhara extension in Python (standard library only).

It speaks the protocol over stdin/stdout: one JSON-RPC 2.0 message per line.
The crate's tests serve it through `dhara call`, `dhara tools` and `dhara check`
to show that the Rust Core works with an extension written in another language.

Tools:
  greet {name}        -> "Hello, <name>!"
  reverse {text}      -> the text reversed
  count {to}          -> counts up to `to`, sending a progress notification per step
  shout {text}        -> isError: true when the text is empty, else the text upper-cased
"""
import json
import sys

NAME = "python-interop"
VERSION = "1.0.0"

TOOLS = [
    {
        "name": "greet",
        "description": "Greet someone by name",
        "inputSchema": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        },
    },
    {
        "name": "reverse",
        "description": "Reverse a text",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
    {
        "name": "count",
        "description": "Count up to a number, reporting progress at each step",
        "inputSchema": {
            "type": "object",
            "properties": {"to": {"type": "integer"}},
            "required": ["to"],
        },
    },
    {
        "name": "shout",
        "description": "Upper-case a text; an empty text is a tool error",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
]

TYPES = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
}

initialized = False
EXIT = "exit"


def send(message):
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def reply(id_, result):
    return {"jsonrpc": "2.0", "id": id_, "result": result}


def error(id_, code, message, data=None):
    err = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": id_, "error": err}


def valid_id(id_):
    return id_ is None or isinstance(id_, str) or (
        isinstance(id_, int) and not isinstance(id_, bool)
    )


def text(value, is_error=False):
    return {"content": [{"type": "text", "text": value}], "isError": is_error}


def check_input(tool, value):
    """Return an error message when the input does not fit the tool's schema."""
    schema = tool["inputSchema"]
    if not isinstance(value, dict):
        return "Input must be an object"
    for name in schema["required"]:
        if name not in value:
            return "Missing required parameter '%s'" % name
    for name, prop in schema["properties"].items():
        if name in value and not TYPES[prop["type"]](value[name]):
            return "Parameter '%s' must be of type %s" % (name, prop["type"])
    return None


def execute(id_, params):
    if not isinstance(params, dict) or not isinstance(params.get("toolName"), str):
        return error(id_, -32602, "Invalid params: expected toolName and input")
    name = params["toolName"]
    tool = next((t for t in TOOLS if t["name"] == name), None)
    if tool is None:
        return error(id_, -32602, "Unknown tool '%s'" % name, {"toolName": name})
    value = params.get("input", {})
    problem = check_input(tool, value)
    if problem is not None:
        return error(id_, -32602, problem, {"toolName": name})
    if name == "greet":
        return reply(id_, text("Hello, %s!" % value["name"]))
    if name == "reverse":
        return reply(id_, text(value["text"][::-1]))
    if name == "count":
        for step in range(1, max(0, value["to"]) + 1):
            notification = {"message": "step %d of %d" % (step, value["to"]), "id": id_}
            send({"jsonrpc": "2.0", "method": "progress", "params": notification})
        return reply(id_, text("counted to %d" % value["to"]))
    if value["text"] == "":
        return reply(id_, text("nothing to shout", is_error=True))
    return reply(id_, text(value["text"].upper()))


def handle(message):
    """Handle one message: returns the response to send, None, or EXIT."""
    global initialized
    if not isinstance(message, dict):
        return error(None, -32600, "Invalid Request: not an object")
    id_ = message.get("id")
    has_id = "id" in message
    method = message.get("method")
    if message.get("jsonrpc") != "2.0" or not valid_id(id_) or not isinstance(method, str):
        if "method" not in message and ("result" in message or "error" in message):
            return None  # a response: this extension sends no requests, so ignore it
        return error(id_ if valid_id(id_) else None, -32600, "Invalid Request")
    params = message.get("params")
    if "params" in message and not isinstance(params, (dict, list)):
        return error(id_ if has_id else None, -32600, "Invalid Request: params")
    if method == "shutdown":
        return EXIT
    if not has_id:
        return None  # other notifications need no reply
    if method == "initialize":
        initialized = True
        return reply(id_, {"name": NAME, "version": VERSION, "tools": TOOLS})
    if method not in ("tools/list", "tools/execute"):
        return error(id_, -32601, "Method not found: %s" % method)
    if not initialized:
        return error(id_, -32002, "Not initialized")
    if method == "tools/list":
        return reply(id_, {"tools": TOOLS})
    return execute(id_, params)


def main():
    for raw in sys.stdin.buffer:
        line = raw.strip()
        if not line:
            continue
        try:
            message = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            send(error(None, -32700, "Parse error"))
            continue
        if isinstance(message, list):
            if not message:
                send(error(None, -32600, "Invalid Request: empty batch"))
                continue
            outcomes = [handle(entry) for entry in message]
            replies = [r for r in outcomes if isinstance(r, dict)]
            if replies:
                send(replies)
            if EXIT in outcomes:
                return 0
            continue
        outcome = handle(message)
        if outcome == EXIT:
            return 0
        if outcome is not None:
            send(outcome)
    return 0


if __name__ == "__main__":
    sys.exit(main())
