#!/usr/bin/env node
// A Dhara extension in Node.js, written the way most are: on the npm package
// `json-rpc-2.0` (JSONRPCServer), one JSON-RPC message per line on stdin/stdout.
//
// The crate's tests run `dhara check` against it: it must pass (warnings allowed,
// since JavaScript numbers cannot hold ids beyond 2^53, which the Core never sends).
//
// Tools:
//   greet {name}    -> "Hello, <name>!"
//   add {a, b}      -> the sum, as text
//   count {to}      -> counts up to `to` (at most 100), a progress notification per step
"use strict";

const readline = require("readline");
const { JSONRPCServer, JSONRPCErrorException } = require("json-rpc-2.0");

const INVALID_PARAMS = -32602;
const NOT_INITIALIZED = -32002;

const TOOLS = [
  {
    name: "greet",
    description: "Greet someone by name",
    inputSchema: {
      type: "object",
      properties: { name: { type: "string" } },
      required: ["name"],
    },
  },
  {
    name: "add",
    description: "Add two numbers",
    inputSchema: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
    },
  },
  {
    name: "count",
    description: "Count up to a number, reporting progress at each step",
    inputSchema: {
      type: "object",
      properties: { to: { type: "integer", minimum: 1, maximum: 100 } },
      required: ["to"],
    },
  },
];

function send(message) {
  process.stdout.write(JSON.stringify(message) + "\n");
}

function progress(message) {
  send({ jsonrpc: "2.0", method: "progress", params: { message } });
}

function text(value) {
  return { content: [{ type: "text", text: String(value) }], isError: false };
}

// The checks a tool's inputSchema asks for here: required members and their types.
function checkInput(tool, input) {
  const fail = (message) => {
    throw new JSONRPCErrorException(message, INVALID_PARAMS, { toolName: tool.name });
  };
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    fail("Input must be an object");
  }
  for (const name of tool.inputSchema.required) {
    if (!(name in input)) {
      fail(`Missing required parameter '${name}'`);
    }
  }
  for (const [name, schema] of Object.entries(tool.inputSchema.properties)) {
    if (!(name in input)) continue;
    const value = input[name];
    const ok =
      schema.type === "integer"
        ? Number.isInteger(value)
        : typeof value === schema.type;
    if (!ok) fail(`Expected ${schema.type} for '${name}'`);
  }
}

const RUN = {
  greet: ({ name }) => text(`Hello, ${name}!`),
  add: ({ a, b }) => text(a + b),
  count: ({ to }) => {
    const steps = Math.min(Math.max(to, 0), 100);
    for (let i = 1; i <= steps; i++) progress(`${i} of ${steps}`);
    return text(steps);
  },
};

let initialized = false;
const server = new JSONRPCServer();

// Every request but `initialize` waits for it.
server.applyMiddleware(async (next, request, params) => {
  if (!initialized && request.method !== "initialize" && request.id !== undefined) {
    return {
      jsonrpc: "2.0",
      id: request.id,
      error: { code: NOT_INITIALIZED, message: "Not initialized" },
    };
  }
  return next(request, params);
});

server.addMethod("initialize", () => {
  initialized = true;
  return { name: "node-interop", version: "1.0.0", tools: TOOLS };
});

server.addMethod("tools/list", () => ({ tools: TOOLS }));

server.addMethod("tools/execute", ({ toolName, input } = {}) => {
  const tool = TOOLS.find((t) => t.name === toolName);
  if (!tool) {
    throw new JSONRPCErrorException(`Unknown tool '${toolName}'`, INVALID_PARAMS, {
      toolName,
    });
  }
  checkInput(tool, input);
  return RUN[tool.name](input);
});

server.addMethod("shutdown", () => {
  process.exit(0);
});

const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  if (line.trim() === "") return;
  server.receiveJSON(line).then((reply) => {
    if (reply) send(reply);
  });
});
// End of stdin means shutdown too.
lines.on("close", () => process.exit(0));
