// A JavaScript host for the Core endpoint compiled to WebAssembly.
//
//   node host.mjs <dhara_wasm_host.wasm> <dhara binary>
//
// It starts `dhara example-extension`, pipes its stdout into the Core, writes what
// the Core transmits to its stdin, keeps time with performance.now(), waits for the
// Core's deadlines with setTimeout, and kills the process when the Core decides so.
// The session: initialize, `echo`, `sleep` with progress, then `hang` with a short
// timeout, which ends in `shutdown`, the grace period, and the kill.
// Node's standard library only. Exits 0 only if every step happened as expected.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const [wasmPath, dharaPath] = process.argv.slice(2);
if (!wasmPath || !dharaPath) {
  console.error('usage: node host.mjs <dhara_wasm_host.wasm> <dhara binary>');
  process.exit(2);
}

// The module's ABI (see src/lib.rs).
const POLL_WAIT = 0;
const POLL_TRANSMIT = 1;
const POLL_EVENT = 2;
const POLL_KILL = 3;
const POLL_CLOSE_STDIN = 4;

const TIMEOUT_MS = 5000; // the configured per-call timeout
const GRACE_MS = 1000; // between `shutdown` and the kill
const HANG_TIMEOUT_MS = 1000; // the `hang` call's own timeout
const SLEEP_MS = 350; // `sleep` reports progress every 100 ms
const GIVE_UP_MS = 20000; // the whole session, should anything never happen

const { instance } = await WebAssembly.instantiate(readFileSync(wasmPath));
const core = instance.exports;
const utf8 = new TextDecoder();

const now = () => performance.now();
const t0 = now();
// The time last handed to the Core: what its decisions are measured against.
let coreNow = t0;
/** The current time, noted as the Core's. */
const tick = () => (coreNow = now());
const log = (text) => console.log(`[${(now() - t0).toFixed(0).padStart(5)} ms] ${text}`);
const short = (text) => (text.length > 150 ? `${text.slice(0, 150)}…` : text);

/** Copies bytes into the module's input buffer; returns their length. */
function put(bytes) {
  const ptr = core.input_buffer(bytes.length);
  new Uint8Array(core.memory.buffer, ptr, bytes.length).set(bytes);
  return bytes.length;
}

/** The module's output buffer (a view: copy it before the next call). */
function output() {
  return new Uint8Array(core.memory.buffer, core.output_ptr(), core.output_len());
}

/** Calls a tool; returns the call id, or throws with the Core's reason. */
function execute(toolName, input, timeoutMs = 0) {
  const len = put(Buffer.from(JSON.stringify({ toolName, input })));
  const call = core.core_execute(len, timeoutMs, tick());
  if (call === 0) throw new Error(`execute ${toolName} refused: ${utf8.decode(output())}`);
  log(`call ${call}: ${toolName} ${JSON.stringify(input)}${timeoutMs ? ` (timeout ${timeoutMs} ms)` : ''}`);
  return call;
}

// ---- The session and what it must show ---------------------------------------------

const seen = {
  tools: [],
  echoed: null,
  progress: [],
  slept: null,
  hangStartedAt: null,
  timedOutAt: null,
  shutdownForHang: false,
  killAt: null,
  exit: null,
  closedCode: undefined,
  problems: [],
};
const calls = {};

/** The application: acts on each event the Core gives. */
function onEvent(event) {
  log(`event ${short(JSON.stringify(event))}`);
  switch (event.event) {
    case 'CallEnded':
      if (event.call === calls.initialize && event.initialized) {
        seen.server = `${event.initialized.name} ${event.initialized.version}`;
        seen.tools = event.initialized.tools.map((tool) => tool.name);
        calls.echo = execute('echo', { text: 'hello from wasm' });
      } else if (event.call === calls.echo && event.executed) {
        seen.echoed = event.executed.content[0]?.text;
        calls.sleep = execute('sleep', { ms: SLEEP_MS });
      } else if (event.call === calls.sleep && event.executed) {
        seen.slept = event.executed.content[0]?.text;
        calls.hang = execute('hang', {}, HANG_TIMEOUT_MS);
        seen.hangStartedAt = coreNow;
      } else if (event.call === calls.hang && event.error?.kind === 'Timeout') {
        seen.timedOutAt = coreNow;
      } else {
        seen.problems.push(`unexpected end of call ${event.call}: ${JSON.stringify(event)}`);
      }
      break;
    case 'Progress':
      if (event.call === calls.sleep) seen.progress.push(event.message);
      break;
    case 'ShuttingDown':
      seen.shutdownForHang = event.reason === 'Timeout' && event.call === calls.hang;
      break;
    case 'Closed':
      seen.closedCode = event.code;
      finish();
      break;
    case 'Protocol':
      seen.problems.push(`protocol error: ${event.message}`);
      break;
  }
}

// ---- The driver ----------------------------------------------------------------------

const child = spawn(dharaPath, ['example-extension'], { stdio: ['pipe', 'pipe', 'inherit'] });
log(`started ${dharaPath} example-extension (pid ${child.pid})`);
child.stdin.on('error', (e) => log(`stdin: ${e.code ?? e.message} (the process is gone)`));

let timer = null;

/** Polls the Core until it says wait, doing what it asks. */
function pump() {
  for (;;) {
    const kind = core.poll();
    if (kind === POLL_TRANSMIT) {
      const bytes = output().slice();
      for (const line of utf8.decode(bytes).split('\n').filter(Boolean)) log(`core -> extension ${short(line)}`);
      child.stdin.write(bytes);
    } else if (kind === POLL_EVENT) {
      onEvent(JSON.parse(utf8.decode(output())));
    } else if (kind === POLL_CLOSE_STDIN) {
      log('core closes the extension\'s stdin (after shutdown)');
      child.stdin.end();
    } else if (kind === POLL_KILL) {
      seen.killAt = coreNow;
      log(`kill decision: SIGKILL to pid ${child.pid}`);
      child.kill('SIGKILL');
    } else if (kind === POLL_WAIT) {
      clearTimeout(timer);
      timer = null;
      const deadline = core.wait_deadline_ms();
      if (deadline >= 0) {
        timer = setTimeout(() => {
          timer = null;
          core.core_timeout(tick());
          pump();
        }, Math.max(0, Math.ceil(deadline - now())));
      }
      return;
    } else {
      throw new Error(`unknown poll kind ${kind}`);
    }
  }
}

child.stdout.on('data', (chunk) => {
  for (const line of utf8.decode(chunk).split('\n').filter(Boolean)) log(`extension -> core ${short(line)}`);
  const len = put(chunk);
  core.core_stdout(len, tick());
  pump();
});
child.stdout.on('end', () => {
  log('extension stdout closed');
  core.core_stdout_closed(tick());
  pump();
});
child.on('close', (code, signal) => {
  seen.exit = { code, signal };
  log(`extension exited: code ${code}, signal ${signal}`);
  core.core_stdout_closed(tick());
  core.core_exited(code ?? -1, coreNow);
  pump();
});
child.on('error', (e) => {
  console.error(`FAILED: cannot run ${dharaPath}: ${e.message}`);
  process.exit(1);
});

const giveUp = setTimeout(() => {
  seen.problems.push(`the session did not end within ${GIVE_UP_MS} ms`);
  child.kill('SIGKILL');
  finish();
}, GIVE_UP_MS);

core.core_new(TIMEOUT_MS, GRACE_MS);
const cwd = put(Buffer.from(process.cwd()));
calls.initialize = core.core_initialize(cwd, tick());
if (calls.initialize === 0) throw new Error(`initialize refused: ${utf8.decode(output())}`);
pump();

// ---- The verdict -----------------------------------------------------------------

function finish() {
  clearTimeout(giveUp);
  clearTimeout(timer);
  const checks = [
    [
      seen.tools.includes('sleep') && seen.tools.includes('hang'),
      `initialize round trip: ${seen.server}, tools ${seen.tools.join(', ')}`,
    ],
    [seen.echoed === 'hello from wasm', `tools/execute round trip done: echo gave ${JSON.stringify(seen.echoed)}`],
    [
      seen.progress.length >= 2 && seen.slept === `Slept ${SLEEP_MS} ms.`,
      `progress seen: ${seen.progress.length} reports (${seen.progress.join('; ')}), then ${JSON.stringify(seen.slept)}`,
    ],
    [
      seen.timedOutAt !== null && seen.timedOutAt - seen.hangStartedAt >= HANG_TIMEOUT_MS && seen.shutdownForHang,
      `hang timed out after ${(seen.timedOutAt - seen.hangStartedAt).toFixed(0)} ms; shutdown sent`,
    ],
    [
      seen.killAt !== null && seen.killAt - seen.timedOutAt >= GRACE_MS,
      `kill decision carried out ${(seen.killAt - seen.timedOutAt).toFixed(0)} ms after shutdown`,
    ],
    [
      seen.exit?.signal === 'SIGKILL' && seen.closedCode === null,
      `process killed: signal ${seen.exit?.signal}; session closed`,
    ],
    [seen.problems.length === 0, `no surprises${seen.problems.map((p) => `\n    ${p}`).join('')}`],
  ];
  console.log('');
  for (const [ok, what] of checks) console.log(`${ok ? 'ok' : 'FAILED'}: ${what}`);
  const passed = checks.every(([ok]) => ok);
  console.log(passed ? 'all steps happened as expected' : 'some steps did not happen as expected');
  process.exit(passed ? 0 : 1);
}
