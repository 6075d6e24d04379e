// An MCP server written with the official TypeScript SDK's McpServer, for
// `dhara mcp adapt -- node sdk-server.mjs` (tests/mcp/interop.rs).
//
// Its tools cover what the adapter maps: text, image, audio, a resource link, an
// embedded resource, isError, a thrown error, progress for the caller's token, a log
// message, and a tool that adds a tool (notifications/tools/list_changed).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer(
  { name: "sdk-test-server", version: "4.5.6" },
  { capabilities: { logging: {} } },
);

server.registerTool(
  "greet",
  { description: "Greet someone by name", inputSchema: { name: z.string() } },
  async ({ name }) => ({ content: [{ type: "text", text: `Hello, ${name}!` }] }),
);

server.registerTool(
  "count",
  {
    description: "Count to n, with progress and a log message",
    inputSchema: { n: z.number().int().min(1).max(20) },
  },
  async ({ n }, extra) => {
    const token = extra._meta?.progressToken;
    // A pause after each notification, as a tool doing work has: the SDK's Client
    // drops progress that it reads in the same chunk as the result (it handles the
    // notification a microtask after the response).
    const pause = () => new Promise((resolve) => setTimeout(resolve, 40));
    for (let i = 1; i <= n; i++) {
      if (token !== undefined) {
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress: i, total: n, message: `counted ${i}` },
        });
      }
      await pause();
    }
    await server.server.sendLoggingMessage({ level: "info", logger: "count", data: `counted to ${n}` });
    return { content: [{ type: "text", text: `${n}` }] };
  },
);

server.registerTool(
  "media",
  { description: "One of each content block", inputSchema: {} },
  async () => ({
    content: [
      { type: "text", text: "media follows" },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
      { type: "audio", data: "UklGRiQAAABXQVZF", mimeType: "audio/wav" },
      { type: "resource_link", uri: "file:///tmp/report.csv", name: "report.csv", mimeType: "text/csv" },
      { type: "resource", resource: { uri: "memo://note", mimeType: "text/plain", text: "an embedded note" } },
    ],
  }),
);

server.registerTool(
  "refuse",
  { description: "A tool-level error", inputSchema: {} },
  async () => ({ content: [{ type: "text", text: "refused on purpose" }], isError: true }),
);

server.registerTool(
  "explode",
  { description: "Throws", inputSchema: {} },
  async () => {
    throw new Error("exploded on purpose");
  },
);

server.registerTool(
  "slow",
  { description: "Waits ms milliseconds, or until cancelled", inputSchema: { ms: z.number().int() } },
  async ({ ms }, extra) => {
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      extra.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve();
      });
    });
    return { content: [{ type: "text", text: extra.signal.aborted ? "cancelled" : `waited ${ms} ms` }] };
  },
);

let grown = false;
server.registerTool(
  "grow",
  { description: "Adds the tool `extra` (the tool list changes)", inputSchema: {} },
  async () => {
    if (!grown) {
      grown = true;
      server.registerTool(
        "extra",
        { description: "Added at run time", inputSchema: {} },
        async () => ({ content: [{ type: "text", text: "extra here" }] }),
      );
    }
    return { content: [{ type: "text", text: "grown" }] };
  },
);

await server.connect(new StdioServerTransport());
console.error("sdk-test-server running on stdio");
