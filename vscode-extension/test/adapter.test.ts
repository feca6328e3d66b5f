/**
 * The Python adapter driven as VS Code drives it, with @vscode/debugadapter-testsupport's DebugClient.
 *
 * DebugClient spawns `runtime executable` (ONE argument after the runtime), so the adapter is started
 * as `python -mdap_server.server` (stdio, the same serve_stdio that `python -m dap_server dap` runs).
 * The extension's own command line (`python -m dap_server dap`) is checked separately below.
 * Engine: oracle (exact values). Interpreter: $NEURAL_DEBUG_PYTHON, else the repository's .venv.
 * The neural-engine test uses $NEURAL_DEBUG_MODEL (a checkpoint directory), else the default checkpoint,
 * and is skipped when neither loads.
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { DebugClient } from '@vscode/debugadapter-testsupport';
import { DebugProtocol } from '@vscode/debugprotocol';

import { adapterArgs } from '../src/config';

const EXTENSION_ROOT = path.resolve(__dirname, '..', '..');
const REPO_ROOT = path.resolve(EXTENSION_ROOT, '..');
const PYTHON = process.env.NEURAL_DEBUG_PYTHON || path.join(REPO_ROOT, '.venv', 'bin', 'python');
const SAMPLE = path.join(EXTENSION_ROOT, 'test', 'fixtures', 'sample.py');
const SPIN = path.join(EXTENSION_ROOT, 'test', 'fixtures', 'spin.py'); // a loop the model walks for minutes
const LINE_SPIN_HEADER = 3; // while i < limit:
const LINE_SPIN_BODY = 4; // i += 1
const DEBUG_TYPE = 'neural-debug';

// Lines of test/fixtures/sample.py
const LINE_ADD_BODY = 2; // total = a + b
const LINE_ADD_RETURN = 3; // return total
const LINE_XS = 7; // xs = [3, 1, 2]
const LINE_N = 8; // n = len(xs)
const LINE_CALL = 9; // s = add(n, 10)
const LINE_LABEL = 10; // label = "done"
const LINE_PRINT = 11; // print(label, s)
const LINE_MODULE_CALL = 15; // result = main()

function newClient(): DebugClient {
  const client = new DebugClient(PYTHON, '-mdap_server.server', DEBUG_TYPE, { cwd: REPO_ROOT, env: { ...process.env, PYTHONUNBUFFERED: '1' } }, true);
  client.defaultTimeout = 30000;
  return client;
}

/** name -> value of the top frame's Locals. */
async function locals(dc: DebugClient): Promise<Record<string, DebugProtocol.Variable>> {
  const threads = await dc.threadsRequest();
  const threadId = threads.body.threads[0].id;
  const stack = await dc.stackTraceRequest({ threadId });
  const frameId = stack.body.stackFrames[0].id;
  const scopes = await dc.scopesRequest({ frameId });
  const scope = scopes.body.scopes.find((s) => s.name === 'Locals');
  assert.ok(scope, `a Locals scope (got ${scopes.body.scopes.map((s) => s.name).join(', ')})`);
  const vars = await dc.variablesRequest({ variablesReference: scope.variablesReference });
  return Object.fromEntries(vars.body.variables.map((v) => [v.name, v]));
}

function values(vars: Record<string, DebugProtocol.Variable>): Record<string, string> {
  return Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, v.value]));
}

/** Send a stepping request and wait for the stop it causes (the listener is registered first). */
async function step(dc: DebugClient, request: (dc: DebugClient) => Promise<unknown>, line: number, reason = 'step'): Promise<DebugProtocol.StackTraceResponse> {
  const stopped = dc.waitForEvent('stopped');
  await request(dc);
  const event = await stopped;
  assert.equal(event.body.reason, reason, `stop reason after the request (expected line ${line})`);
  const stack = await dc.stackTraceRequest({ threadId: event.body.threadId });
  const top = stack.body.stackFrames[0];
  assert.equal(top.source?.path, SAMPLE, 'stopped in the program');
  assert.equal(top.line, line, `stopped on line ${top.line} (${top.name}), expected line ${line}`);
  return stack;
}

/**
 * Resolves when the output events of `category` received from now on contain `expected`
 * (DebugClient's assertOutput wants a prefix of everything received).
 */
function waitForOutput(dc: DebugClient, category: string, expected: string, timeout = 30000): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`no ${category} output containing ${JSON.stringify(expected)} within ${timeout} ms; got ${JSON.stringify(seen)}`)), timeout);
    const listener = (event: DebugProtocol.OutputEvent) => {
      if ((event.body.category ?? 'console') === category) {
        seen += event.body.output;
        if (seen.includes(expected)) {
          clearTimeout(timer);
          dc.removeListener('output', listener);
          resolve(seen);
        }
      }
    };
    dc.on('output', listener);
  });
}

describe('Python adapter through DebugClient (oracle engine)', function () {
  this.timeout(90000);
  let dc: DebugClient;

  before(function () {
    if (!fs.existsSync(PYTHON)) {
      throw new Error(`no Python interpreter at ${PYTHON}: run \`make install\` in the repository or set NEURAL_DEBUG_PYTHON`);
    }
  });

  beforeEach(async () => {
    dc = newClient();
    await dc.start();
  });

  afterEach(async () => {
    await dc.stop();
  });

  it('answers initialize with the capabilities VS Code relies on', async () => {
    const response = await dc.initializeRequest({ adapterID: DEBUG_TYPE, linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' });
    const caps = response.body ?? {};
    assert.equal(caps.supportsConfigurationDoneRequest, true);
    assert.equal(caps.supportsStepBack, true);
    assert.equal(caps.supportsSetVariable, true);
    assert.equal(caps.supportsEvaluateForHovers, true);
    assert.equal(caps.supportsConditionalBreakpoints, true);
    assert.deepEqual(caps.exceptionBreakpointFilters?.map((f) => f.filter), ['raised', 'uncaught']);
  });

  it('launches, says values are exact, hits a breakpoint and shows stack, scopes and variables', async () => {
    const banner = waitForOutput(dc, 'console', 'values are exact');
    await dc.hitBreakpoint({ program: SAMPLE, engine: 'oracle' }, { path: SAMPLE, line: LINE_N });
    await banner;
    const threads = await dc.threadsRequest();
    assert.deepEqual(threads.body.threads.map((t) => t.name), ['MainThread']);
    const stack = await dc.stackTraceRequest({ threadId: threads.body.threads[0].id });
    assert.deepEqual(stack.body.stackFrames.map((f) => [f.name, f.line]), [['main', LINE_N], ['<module>', LINE_MODULE_CALL]]);
    const vars = await locals(dc);
    assert.deepEqual(values(vars), { xs: '[3, 1, 2]' });
    assert.equal(vars.xs.type, 'list');
    assert.ok(vars.xs.variablesReference > 0, 'a list is expandable');
    const items = await dc.variablesRequest({ variablesReference: vars.xs.variablesReference });
    assert.deepEqual(items.body.variables.map((v) => [v.name, v.value]), [['0', '3'], ['1', '1'], ['2', '2']]);
  });

  it('steps over, in and out, and back', async () => {
    await dc.hitBreakpoint({ program: SAMPLE, engine: 'oracle', stepping: 'debugpy' }, { path: SAMPLE, line: LINE_N });
    await step(dc, (c) => c.nextRequest({ threadId: 1 }), LINE_CALL);
    assert.deepEqual(values(await locals(dc)), { xs: '[3, 1, 2]', n: '3' });

    const inAdd = await step(dc, (c) => c.stepInRequest({ threadId: 1 }), LINE_ADD_BODY);
    assert.deepEqual(inAdd.body.stackFrames.map((f) => f.name), ['add', 'main', '<module>']);
    assert.deepEqual(values(await locals(dc)), { a: '3', b: '10' });

    await step(dc, (c) => c.nextRequest({ threadId: 1 }), LINE_ADD_RETURN);
    assert.deepEqual(values(await locals(dc)), { a: '3', b: '10', total: '13' });

    // As debugpy: stepOut stops in the caller still on its call line, `s` not yet bound, the value shown.
    const out = await step(dc, (c) => c.stepOutRequest({ threadId: 1 }), LINE_CALL);
    assert.deepEqual(out.body.stackFrames.map((f) => [f.name, f.line]), [['main', LINE_CALL], ['<module>', LINE_MODULE_CALL]]);
    assert.deepEqual(values(await locals(dc)), { xs: '[3, 1, 2]', n: '3', '(return) add': '13' });

    // Step back from there: add's last line again; next: past its return, to the caller's next line.
    await step(dc, (c) => c.stepBackRequest({ threadId: 1 }), LINE_ADD_RETURN);
    assert.deepEqual(values(await locals(dc)), { a: '3', b: '10', total: '13' });
    await step(dc, (c) => c.nextRequest({ threadId: 1 }), LINE_LABEL);
    assert.deepEqual(values(await locals(dc)), { xs: '[3, 1, 2]', n: '3', s: '13', '(return) add': '13' });

    await step(dc, (c) => c.stepBackRequest({ threadId: 1 }), LINE_CALL);
    assert.deepEqual(values(await locals(dc)), { xs: '[3, 1, 2]', n: '3' });
    await step(dc, (c) => c.stepBackRequest({ threadId: 1 }), LINE_N);
    await step(dc, (c) => c.stepBackRequest({ threadId: 1 }), LINE_XS);
    assert.deepEqual(values(await locals(dc)), {});
  });

  it('stops on call events with pdb stepping (the adapter\'s default, as the terminal debugger)', async () => {
    await dc.hitBreakpoint({ program: SAMPLE, engine: 'oracle', stepping: 'pdb' }, { path: SAMPLE, line: LINE_CALL });
    // pdb's `s` on a line that calls stops at the call event, on the def line.
    const call = await step(dc, (c) => c.stepInRequest({ threadId: 1 }), 1);
    assert.equal(call.body.stackFrames[0].name, 'add');
    await step(dc, (c) => c.stepInRequest({ threadId: 1 }), LINE_ADD_BODY);
  });

  it('evaluates expressions and sets a variable', async () => {
    await dc.hitBreakpoint({ program: SAMPLE, engine: 'oracle', stepping: 'debugpy' }, { path: SAMPLE, line: LINE_LABEL });
    const stack = await dc.stackTraceRequest({ threadId: 1 });
    const frameId = stack.body.stackFrames[0].id;
    const sum = await dc.evaluateRequest({ expression: 's * 2 + len(xs)', frameId, context: 'repl' });
    assert.equal(sum.body.result, '29');
    const hover = await dc.evaluateRequest({ expression: 'xs', frameId, context: 'hover' });
    assert.equal(hover.body.result, '[3, 1, 2]');
    assert.ok(hover.body.variablesReference > 0);
    await assert.rejects(dc.evaluateRequest({ expression: 'main()', frameId, context: 'repl' }), /never runs the program/);

    const scopes = await dc.scopesRequest({ frameId });
    const localsRef = scopes.body.scopes.find((s) => s.name === 'Locals')!.variablesReference;
    const set = await dc.setVariableRequest({ variablesReference: localsRef, name: 's', value: 's + 100' });
    assert.equal(set.body.value, '113');
    assert.equal(values(await locals(dc)).s, '113');
    // The next step goes on from the changed state: print(label, s) prints 113.
    const printed = waitForOutput(dc, 'stdout', 'done 113');
    await step(dc, (c) => c.nextRequest({ threadId: 1 }), LINE_PRINT);
    await step(dc, (c) => c.nextRequest({ threadId: 1 }), LINE_PRINT + 1);
    await printed;
  });

  it('jumps to a line (Jump to Cursor) and shows a caller frame\'s variables', async () => {
    await dc.hitBreakpoint({ program: SAMPLE, engine: 'oracle' }, { path: SAMPLE, line: LINE_N });
    const targets = await dc.gotoTargetsRequest({ source: { path: SAMPLE }, line: LINE_LABEL });
    assert.deepEqual(targets.body.targets.map((t) => t.line), [LINE_LABEL]);
    const stack = await step(dc, (c) => c.gotoRequest({ threadId: 1, targetId: targets.body.targets[0].id }), LINE_LABEL, 'goto');
    assert.deepEqual(values(await locals(dc)), { xs: '[3, 1, 2]' }); // lines 8 and 9 never ran
    const scopes = await dc.scopesRequest({ frameId: stack.body.stackFrames[1].id });
    const outer = await dc.variablesRequest({ variablesReference: scopes.body.scopes[0].variablesReference });
    assert.deepEqual(outer.body.variables.map((v) => v.name), ['add', 'main']); // <module> at its call site
    await assert.rejects(dc.gotoRequest({ threadId: 1, targetId: LINE_ADD_BODY }), /not (code|a line)|jump/);
  });

  it('runs to the end: program output, exited and terminated', async () => {
    await dc.hitBreakpoint({ program: SAMPLE, engine: 'oracle' }, { path: SAMPLE, line: LINE_LABEL });
    const output = waitForOutput(dc, 'stdout', 'done 13');
    const exited = dc.waitForEvent('exited');
    const terminated = dc.waitForEvent('terminated');
    await dc.continueRequest({ threadId: 1 });
    await output;
    assert.equal((await exited).body.exitCode, 0);
    await terminated;
  });

  it('fails the launch with a readable message for a missing program', async () => {
    await dc.initializeRequest({ adapterID: DEBUG_TYPE, linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' });
    await assert.rejects(dc.launchRequest({ program: path.join(EXTENSION_ROOT, 'no-such-file.py'), engine: 'oracle' } as DebugProtocol.LaunchRequestArguments),
      /no-such-file\.py/);
  });

  it('the neural engine: the console says values are predictions and variables carry a confidence', async function () {
    this.timeout(300000);
    const banner = waitForOutput(dc, 'console', 'prediction', 240000);
    banner.catch(() => undefined);
    const initialized = dc.waitForEvent('initialized', 240000);
    initialized.catch(() => undefined);
    const launched = dc.launch({ program: SAMPLE, engine: 'neural', stopOnEntry: true, model: process.env.NEURAL_DEBUG_MODEL || undefined });
    launched.catch(() => undefined);
    const first = await Promise.race([initialized.then(() => undefined), launched.then(() => undefined, (err: Error) => err)]);
    if (first instanceof Error) {
      // No trained model on this machine (the default checkpoint comes from training): nothing to show.
      console.log(`      (neural engine unavailable: ${first.message.split('\n')[0]})`);
      this.skip();
    }
    const stopped = dc.waitForEvent('stopped', 240000);
    await dc.configurationDoneRequest();
    await launched;
    await banner;
    await stopped;
    const vars = await locals(dc);
    for (const v of Object.values(vars)) {
      assert.match(v.type ?? '', /p=\d\.\d\d/, `variable ${v.name} shows its confidence in its type`);
    }
  });

  it('the neural engine: Pause stops a long predicted continue; an inference shows cancellable progress; a breakpoint set while it runs stops it', async function () {
    this.timeout(300000);
    // As VS Code does: it shows progress reports, with a Cancel button that sends `cancel` with the progressId.
    await dc.initializeRequest({ adapterID: DEBUG_TYPE, linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path', supportsProgressReporting: true });
    const initialized = dc.waitForEvent('initialized', 240000);
    initialized.catch(() => undefined);
    const launched = dc.launchRequest({ program: SPIN, engine: 'neural', entry: 'spin(1000)', stopOnEntry: true, followSteps: 5000, model: process.env.NEURAL_DEBUG_MODEL || undefined } as DebugProtocol.LaunchRequestArguments);
    launched.catch(() => undefined);
    const first = await Promise.race([initialized.then(() => undefined), launched.then(() => undefined, (err: Error) => err)]);
    if (first instanceof Error) {
      console.log(`      (neural engine unavailable: ${first.message.split('\n')[0]})`);
      this.skip();
    }
    // A breakpoint whose condition never holds: continue walks the loop one predicted step at a time.
    await dc.setBreakpointsRequest({ source: { path: SPIN }, breakpoints: [{ line: LINE_SPIN_BODY, condition: 'i < 0' }] });
    const entry = dc.waitForEvent('stopped', 240000);
    await dc.configurationDoneRequest();
    await launched;
    await entry;
    // The entry stop comes from the program's text while the model loads: a step waits for the model.
    const stepped = dc.waitForEvent('stopped', 240000);
    await dc.nextRequest({ threadId: 1 });
    await stepped;
    await dc.continueRequest({ threadId: 1 });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const paused = dc.waitForEvent('stopped', 60000);
    await dc.pauseRequest({ threadId: 1 });
    const event = (await paused) as DebugProtocol.StoppedEvent;
    assert.equal(event.body.reason, 'pause');
    const stack = await dc.stackTraceRequest({ threadId: 1 });
    assert.equal(stack.body.stackFrames[0].name, 'spin');
    assert.ok('i' in (await locals(dc)), 'the loop variable is shown where the run was paused');

    const started = dc.waitForEvent('progressStart', 60000);
    const inferring = dc.evaluateRequest({ expression: 'infer spin 5', context: 'repl', frameId: stack.body.stackFrames[0].id });
    inferring.catch(() => undefined);
    const start = (await started) as DebugProtocol.ProgressStartEvent;
    assert.equal(start.body.cancellable, true);
    assert.equal(start.body.title, 'Inferring the arguments of spin');
    const ended = dc.waitForEvent('progressEnd', 60000);
    await dc.customRequest('cancel', { progressId: start.body.progressId });
    await assert.rejects(inferring, /cancelled/);
    await ended;
    const again = await dc.stackTraceRequest({ threadId: 1 });
    assert.equal(again.body.stackFrames[0].line, stack.body.stackFrames[0].line, 'the paused state is kept');

    // As a user clicks the gutter while the program runs: the breakpoint is answered at once, and the
    // continue under way stops on it (the loop header, where no breakpoint was before).
    await dc.continueRequest({ threadId: 1 });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const hit = dc.waitForEvent('stopped', 60000);
    const set = await dc.setBreakpointsRequest({ source: { path: SPIN }, breakpoints: [{ line: LINE_SPIN_HEADER }] });
    assert.equal(set.body.breakpoints[0].verified, true);
    const stopped = (await hit) as DebugProtocol.StoppedEvent;
    assert.equal(stopped.body.reason, 'breakpoint');
    assert.deepEqual(stopped.body.hitBreakpointIds, [set.body.breakpoints[0].id]);
    const there = await dc.stackTraceRequest({ threadId: 1 });
    assert.equal(there.body.stackFrames[0].line, LINE_SPIN_HEADER);
  });
});

describe('the extension\'s adapter command line', function () {
  this.timeout(60000);

  it(`${path.basename(PYTHON)} ${adapterArgs().join(' ')} answers initialize over stdio`, async () => {
    const child = spawn(PYTHON, adapterArgs(), { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    try {
      const body = JSON.stringify({ seq: 1, type: 'request', command: 'initialize', arguments: { adapterID: DEBUG_TYPE } });
      child.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      const response = await new Promise<Record<string, unknown>>((resolve, reject) => {
        let buffer = Buffer.alloc(0);
        const timer = setTimeout(() => reject(new Error('no answer to initialize within 30 s')), 30000);
        child.stdout.on('data', (chunk: Buffer) => {
          buffer = Buffer.concat([buffer, chunk]);
          const text = buffer.toString('utf8');
          const match = /Content-Length: (\d+)\r\n\r\n/.exec(text);
          if (match) {
            const start = match.index + match[0].length;
            const length = Number(match[1]);
            const bytes = buffer.subarray(Buffer.byteLength(text.slice(0, start)));
            if (bytes.length >= length) {
              clearTimeout(timer);
              resolve(JSON.parse(bytes.subarray(0, length).toString('utf8')) as Record<string, unknown>);
            }
          }
        });
        child.on('exit', (code) => reject(new Error(`the adapter exited with ${code}`)));
      });
      assert.equal(response.type, 'response');
      assert.equal(response.command, 'initialize');
      assert.equal(response.success, true);
    } finally {
      child.kill();
    }
  });
});
