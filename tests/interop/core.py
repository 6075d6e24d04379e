#!/usr/bin/env python3
"""A small Dhara Core in Python (standard library only).

It starts an extension command, speaks the protocol to it line by line, and checks
the answers: initialize, a call to `echo`, a call to `sleep` with its progress, and
shutdown with exit code 0. The crate's tests run it against `dhara example-extension`
to show that the Rust Extension endpoint works with a Core written in another language.

Usage: core.py CMD [ARGS...]    (exit code 0 when everything worked)
"""
import json
import subprocess
import sys


class Core:
    def __init__(self, command):
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
        )
        self.next_id = 1

    def send(self, message):
        line = json.dumps(message, separators=(",", ":")) + "\n"
        self.process.stdin.write(line.encode("utf-8"))
        self.process.stdin.flush()

    def request(self, method, params, on_progress=None):
        id_ = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError("the extension closed its stdout during %s" % method)
            message = json.loads(line)
            if message.get("method") == "progress":
                if on_progress is not None:
                    on_progress(message["params"])
                continue
            if message.get("id") != id_:
                raise RuntimeError("unexpected message: %r" % message)
            if "error" in message:
                raise RuntimeError("%s failed: %r" % (method, message["error"]))
            return message["result"]

    def call(self, tool, input_, on_progress=None):
        params = {"toolName": tool, "input": input_}
        return self.request("tools/execute", params, on_progress)

    def shutdown(self, timeout=5):
        self.send({"jsonrpc": "2.0", "method": "shutdown"})
        return self.process.wait(timeout=timeout)


def expect(condition, what):
    if not condition:
        raise RuntimeError("expected " + what)


def main(command):
    core = Core(command)
    info = core.request("initialize", {"version": "0.1.0", "cwd": "."})
    names = [tool["name"] for tool in info["tools"]]
    expect("echo" in names and "sleep" in names, "echo and sleep among %r" % names)
    print("initialized %s %s: %s" % (info["name"], info["version"], ", ".join(names)))

    result = core.call("echo", {"text": "hello from Python"})
    expect(result["content"] == [{"type": "text", "text": "hello from Python"}], "the echo")
    expect(result["isError"] is False, "isError false")
    print("echo: " + result["content"][0]["text"])

    progress = []
    result = core.call("sleep", {"ms": 300}, lambda p: progress.append(p))
    expect(len(progress) >= 2, "progress while sleeping, got %r" % progress)
    expect(all(p.get("id") == 3 for p in progress), "progress naming request 3")
    print("sleep: %d progress notifications, then %r"
          % (len(progress), result["content"][0]["text"]))

    code = core.shutdown()
    expect(code == 0, "exit code 0 after shutdown, got %r" % code)
    print("shutdown: exit code 0")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    try:
        sys.exit(main(sys.argv[1:]))
    except Exception as error:  # report any failure as one line and a non-zero code
        sys.stderr.write("core.py: %s\n" % error)
        sys.exit(1)
