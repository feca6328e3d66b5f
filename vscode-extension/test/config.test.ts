/** The extension's pure logic (src/config.ts) and its package.json contributions. */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import {
  adapterArgs,
  applySettings,
  checkPython,
  choosePython,
  DEFAULT_SETTINGS,
  expandPath,
  fillEmptyConfig,
  LaunchConfig,
  newLaunchConfig,
  validateConfig,
} from '../src/config';

const EXTENSION_ROOT = path.resolve(__dirname, '..', '..');
const REPO_ROOT = path.resolve(EXTENSION_ROOT, '..');
const PYTHON = process.env.NEURAL_DEBUG_PYTHON || path.join(REPO_ROOT, '.venv', 'bin', 'python');

describe('launch configurations', () => {
  it('F5 without launch.json on a Python file debugs the current file', () => {
    const config = fillEmptyConfig({}, 'python');
    assert.deepEqual(config, { type: 'neural-debug', request: 'launch', name: 'Neural Debug: Current File', program: '${file}', stopOnEntry: false });
  });

  it('F5 without launch.json elsewhere gives nothing to debug', () => {
    assert.equal(fillEmptyConfig({}, 'markdown'), undefined);
    assert.equal(fillEmptyConfig({}, undefined), undefined);
  });

  it('a partial configuration gets a program and a request', () => {
    const config = fillEmptyConfig({ type: 'neural-debug', name: 'x', entry: 'f(1)' }, undefined);
    assert.equal(config?.program, '${file}');
    assert.equal(config?.request, 'launch');
    assert.equal(config?.entry, 'f(1)');
  });

  it('settings fill engine, model, worker and stepping, the configuration wins', () => {
    const settings = { ...DEFAULT_SETTINGS, engine: 'oracle' as const, model: '/m', worker: 'ws://h:1', stepping: 'debugpy' as const };
    const base: LaunchConfig = { type: 'neural-debug', request: 'launch', name: 'n', program: '/p.py' };
    assert.deepEqual(applySettings(base, settings), { ...base, engine: 'oracle', model: '/m', worker: 'ws://h:1', stepping: 'debugpy' });
    const own = applySettings({ ...base, engine: 'neural', model: '/mine' }, settings);
    assert.equal(own.engine, 'neural');
    assert.equal(own.model, '/mine');
    const defaults = applySettings(base, DEFAULT_SETTINGS);
    assert.equal(defaults.engine, 'neural');
    assert.equal(defaults.model, undefined);
    assert.equal(defaults.worker, undefined);
  });

  it("debugpy's stepping is the default in VS Code: F5, new launch.json, the setting", () => {
    assert.equal(DEFAULT_SETTINGS.stepping, 'debugpy');
    const f5 = fillEmptyConfig({}, 'python');
    assert.ok(f5);
    assert.equal(applySettings(f5, DEFAULT_SETTINGS).stepping, 'debugpy');
    assert.equal(newLaunchConfig(DEFAULT_SETTINGS).stepping, 'debugpy');
    assert.equal(newLaunchConfig({ ...DEFAULT_SETTINGS, stepping: 'pdb' }).stepping, 'pdb');
    assert.equal(applySettings({ ...f5, stepping: 'pdb' }, DEFAULT_SETTINGS).stepping, 'pdb');
  });

  it('validation explains what is wrong', () => {
    const ok: LaunchConfig = { type: 'neural-debug', request: 'launch', name: 'n', program: '/p.py', engine: 'oracle' };
    assert.equal(validateConfig(ok), undefined);
    assert.match(validateConfig({ ...ok, request: 'attach' }) ?? '', /only launches/);
    assert.match(validateConfig({ ...ok, program: '' }) ?? '', /no program/);
    assert.match(validateConfig({ ...ok, engine: 'gpt' as never }) ?? '', /unknown engine/);
  });
});

describe('the adapter interpreter', () => {
  it('is chosen from the configuration, the setting, the Python extension, python3, in that order', () => {
    assert.deepEqual(choosePython('/a/python', '/b/python', '/c/python', '/ws'), { path: '/a/python', source: 'launch configuration' });
    assert.deepEqual(choosePython(undefined, '/b/python', '/c/python', '/ws'), { path: '/b/python', source: 'setting neuralDebug.pythonPath' });
    assert.deepEqual(choosePython('', ' ', '/c/python', '/ws'), { path: '/c/python', source: 'Python extension' });
    assert.deepEqual(choosePython(undefined, '', undefined, '/ws'), { path: 'python3', source: 'default' });
  });

  it('paths are expanded against the workspace folder', () => {
    assert.equal(expandPath('.venv/bin/python', '/ws'), '/ws/.venv/bin/python');
    assert.equal(expandPath('${workspaceFolder}/.venv/bin/python', '/ws'), '/ws/.venv/bin/python');
    assert.equal(expandPath('~/env/bin/python', '/ws'), path.join(os.homedir(), 'env/bin/python'));
    assert.equal(expandPath('python3.11', '/ws'), 'python3.11');
  });

  it('the adapter runs as `python -m dap_server dap`', () => {
    assert.deepEqual(adapterArgs(), ['-m', 'dap_server', 'dap']);
    assert.deepEqual(adapterArgs('/tmp/log'), ['-m', 'dap_server', 'dap', '--log-file', '/tmp/log']);
  });

  it('the check accepts the repository interpreter', async function () {
    this.timeout(60000);
    const result = await checkPython({ path: PYTHON, source: 'setting neuralDebug.pythonPath' });
    assert.equal(result.ok, true, result.message);
    assert.match(result.message, /imports dap_server from/);
  });

  it('the check explains a missing interpreter', async () => {
    const result = await checkPython({ path: '/no/such/python', source: 'setting neuralDebug.pythonPath' });
    assert.equal(result.ok, false);
    assert.match(result.message, /\/no\/such\/python \(from setting neuralDebug\.pythonPath\) was not found/);
  });

  it('the check explains an interpreter without Neural Debug', async function () {
    this.timeout(60000);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ndb-ext-'));
    const fake = path.join(dir, 'python');
    // An interpreter that runs, but has no dap_server: isolated mode (-I) ignores PYTHONPATH and the cwd.
    fs.writeFileSync(fake, `#!/bin/sh\nexec /usr/bin/env python3 -I -S "$@"\n`, { mode: 0o755 });
    try {
      const result = await checkPython({ path: fake, source: 'launch configuration' });
      assert.equal(result.ok, false);
      assert.match(result.message, /cannot import dap_server \(ModuleNotFoundError: No module named 'dap_server'\)/);
      assert.match(result.message, /neuralDebug\.pythonPath/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('package.json contributions', () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(EXTENSION_ROOT, 'package.json'), 'utf8'));
  const debuggers = manifest.contributes.debuggers;

  it('contributes the neural-debug type with python breakpoints', () => {
    assert.equal(debuggers.length, 1);
    assert.equal(debuggers[0].type, 'neural-debug');
    assert.equal(debuggers[0].label, 'Neural Debug');
    assert.deepEqual(manifest.contributes.breakpoints, [{ language: 'python' }]);
    assert.ok(manifest.activationEvents.includes('onDebugResolve:neural-debug'));
    assert.ok(manifest.activationEvents.includes('onDebugDynamicConfigurations:neural-debug'));
  });

  it('describes every launch attribute', () => {
    const props = Object.keys(debuggers[0].configurationAttributes.launch.properties);
    for (const name of ['program', 'entry', 'args', 'cwd', 'stopOnEntry', 'engine', 'model', 'worker', 'python']) {
      assert.ok(props.includes(name), `launch attribute ${name}`);
    }
    assert.deepEqual(debuggers[0].configurationAttributes.launch.properties.engine.enum, ['neural', 'oracle']);
  });

  it('offers the two snippets and settings', () => {
    assert.deepEqual(debuggers[0].configurationSnippets.map((s: { label: string }) => s.label),
      ['Neural Debug: Current File', 'Neural Debug: Call a function']);
    const settings = Object.keys(manifest.contributes.configuration.properties);
    for (const name of ['neuralDebug.pythonPath', 'neuralDebug.engine', 'neuralDebug.model', 'neuralDebug.worker', 'neuralDebug.stepping']) {
      assert.ok(settings.includes(name), `setting ${name}`);
    }
  });

  it("defaults to debugpy's stepping in the schema, the setting, the snippets and initialConfigurations", () => {
    assert.equal(debuggers[0].configurationAttributes.launch.properties.stepping.default, 'debugpy');
    assert.deepEqual(debuggers[0].configurationAttributes.launch.properties.stepping.enum, ['pdb', 'debugpy']);
    assert.equal(manifest.contributes.configuration.properties['neuralDebug.stepping'].default, 'debugpy');
    for (const config of debuggers[0].initialConfigurations) {
      assert.equal(config.stepping, 'debugpy', config.name);
    }
    for (const snippet of debuggers[0].configurationSnippets) {
      assert.equal(snippet.body.stepping, 'debugpy', snippet.label);
    }
  });
});
