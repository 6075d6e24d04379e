// The official TypeScript SDK's Client, over StdioClientTransport, against
// `dhara mcp serve` (tests/mcp/interop.rs):
//
//   node sdk-client.mjs example -- dhara mcp serve -- dhara example-extension
//   node sdk-client.mjs chain -- dhara mcp serve -- dhara mcp adapt -- node sdk-server.mjs
//
// Each check that fails throws; the last line on stdout is `ok: N checks`.
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [mode, dashes, command, ...args] = process.argv.slice(2);
assert.ok(["example", "chain"].includes(mode) && dashes === "--" && command, "usage: sdk-client.mjs example|chain -- CMD ARGS...");

let checks = 0;
async function check(name, body) {
  try {
    await body();
  } catch (error) {
    console.error(`FAIL ${name}: ${error?.stack ?? error}`);
    process.exit(1);
  }
  checks += 1;
  console.log(`ok ${name}`);
}

const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
const client = new Client({ name: "sdk-interop-client", version: "1.0.0" });
let listChanged = 0;
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  listChanged += 1;
});
await client.connect(transport);

const text = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("");

/** Calls `name` and aborts it after `afterMs`; the call must end rejected, quickly. */
async function cancelled(name, args, afterMs) {
  const controller = new AbortController();
  const started = Date.now();
  const call = client.callTool({ name, arguments: args }, undefined, { signal: controller.signal });
  setTimeout(() => controller.abort("the test cancels it"), afterMs);
  await assert.rejects(call);
  assert.ok(Date.now() - started < 2000, "the cancelled call ended at once");
}

/** Calls `name` with a progress token; returns the result and the progress seen. */
async function withProgress(name, args) {
  const progress = [];
  const result = await client.callTool({ name, arguments: args }, undefined, {
    onprogress: (p) => progress.push(p),
  });
  return { result, progress };
}

await check("ping", async () => {
  assert.deepEqual(await client.ping(), {});
});

if (mode === "example") {
  await check("initialize: server info and version", async () => {
    assert.equal(client.getServerVersion().name, "dhara-example");
    assert.ok(client.getServerCapabilities().tools);
  });
  await check("tools/list", async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of ["echo", "add", "sleep", "image", "fail"]) assert.ok(names.includes(name), name);
    const echo = tools.find((t) => t.name === "echo");
    assert.deepEqual(echo.inputSchema.required, ["text"]);
  });
  await check("tools/call: text", async () => {
    const result = await client.callTool({ name: "echo", arguments: { text: "hi there" } });
    assert.equal(text(result), "hi there");
    assert.ok(!result.isError);
  });
  await check("tools/call: progress for the progressToken", async () => {
    const { result, progress } = await withProgress("sleep", { ms: 350 });
    assert.equal(text(result), "Slept 350 ms.");
    assert.ok(progress.length >= 3, `progress: ${JSON.stringify(progress)}`);
    for (let i = 1; i < progress.length; i++) assert.ok(progress[i].progress > progress[i - 1].progress);
    assert.match(progress[0].message, /slept 100 of 350 ms/);
  });
  await check("tools/call: isError", async () => {
    const result = await client.callTool({ name: "fail", arguments: {} });
    assert.equal(result.isError, true);
  });
  await check("tools/call: image", async () => {
    const result = await client.callTool({ name: "image", arguments: {} });
    const image = result.content.find((c) => c.type === "image");
    assert.equal(image.mimeType, "image/png");
    assert.ok(Buffer.from(image.data, "base64").subarray(1, 4).toString() === "PNG");
  });
  await check("tools/call: unknown tool is a JSON-RPC error", async () => {
    await assert.rejects(client.callTool({ name: "no-such-tool", arguments: {} }), (e) => e.code === -32602);
  });
  await check("cancellation ends the call, and the extension goes on", async () => {
    await cancelled("sleep", { ms: 5000 }, 150);
    const result = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } });
    assert.equal(text(result), "5");
  });
} else {
  await check("initialize: the MCP server's info through both bridges", async () => {
    assert.deepEqual(client.getServerVersion(), { name: "sdk-test-server", version: "4.5.6" });
  });
  await check("tools/list", async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ["greet", "count", "media", "refuse", "explode", "slow", "grow"],
    );
    const greet = tools.find((t) => t.name === "greet");
    assert.equal(greet.inputSchema.properties.name.type, "string");
  });
  await check("tools/call: text", async () => {
    assert.equal(text(await client.callTool({ name: "greet", arguments: { name: "Ada" } })), "Hello, Ada!");
  });
  await check("tools/call: progress through both bridges", async () => {
    const { result, progress } = await withProgress("count", { n: 3 });
    assert.equal(text(result), "3");
    assert.deepEqual(progress.map((p) => p.message), ["counted 1", "counted 2", "counted 3"]);
  });
  await check("tools/call: content blocks", async () => {
    const result = await client.callTool({ name: "media", arguments: {} });
    assert.deepEqual(result.content, [
      { type: "text", text: "media follows" },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
      { type: "audio", data: "UklGRiQAAABXQVZF", mimeType: "audio/wav" },
      { type: "resource_link", uri: "file:///tmp/report.csv", name: "report.csv", mimeType: "text/csv" },
      { type: "text", text: "an embedded note" },
    ]);
  });
  await check("tools/call: isError, returned or thrown", async () => {
    const refused = await client.callTool({ name: "refuse", arguments: {} });
    assert.equal(refused.isError, true);
    assert.equal(text(refused), "refused on purpose");
    const exploded = await client.callTool({ name: "explode", arguments: {} });
    assert.equal(exploded.isError, true);
    assert.match(text(exploded), /exploded on purpose/);
  });
  await check("tools/call: input the server's schema refuses", async () => {
    const result = await client.callTool({ name: "count", arguments: { n: "many" } }).catch((e) => e);
    // The SDK server answers with isError or a -32602 error, by version: either
    // reaches the client as the server gave it.
    assert.ok(result.isError === true || result.code === -32602, JSON.stringify(result));
  });
  await check("cancellation ends the call on our side", async () => {
    await cancelled("slow", { ms: 4000 }, 150);
    assert.equal(text(await client.callTool({ name: "greet", arguments: { name: "Bo" } })), "Hello, Bo!");
  });
  await check("list_changed through both bridges", async () => {
    assert.equal(text(await client.callTool({ name: "grow", arguments: {} })), "grown");
    const until = Date.now() + 5000;
    while (listChanged === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    assert.ok(listChanged >= 1, "notifications/tools/list_changed came");
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === "extra"));
    assert.equal(text(await client.callTool({ name: "extra", arguments: {} })), "extra here");
  });
}

await client.close();
console.log(`ok: ${checks} checks`);
