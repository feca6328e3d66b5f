/**
 * Pure logic of the extension (no `vscode` import, so the unit tests run it in plain Node):
 * filling in launch configurations, choosing the adapter's interpreter, checking that it can
 * import the adapter, and the adapter's command line.
 */
import { execFile } from 'node:child_process';
import * as os from 'node:os';
import * as path from 'node:path';

export const DEBUG_TYPE = 'neural-debug';
export const CURRENT_FILE_NAME = 'Neural Debug: Current File';
export const CALL_FUNCTION_NAME = 'Neural Debug: Call a function';

/** The launch configuration the adapter understands (docs/dap.md, "Launch"), plus `python`. */
export interface LaunchConfig {
  type: string;
  request: string;
  name: string;
  program?: string;
  entry?: string;
  args?: string[];
  cwd?: string;
  stopOnEntry?: boolean;
  engine?: 'neural' | 'oracle';
  model?: string;
  worker?: string;
  python?: string;
  stepping?: 'pdb' | 'debugpy';
  noDebug?: boolean;
  /** An adapter already serving over TCP (`ndb dap --port N [--host H --token T]`) instead of one started here. */
  adapterPort?: number;
  adapterHost?: string;
  /** That adapter's token, sent in the launch arguments (required when it listens beyond loopback). */
  adapterToken?: string;
  [key: string]: unknown;
}

/** The extension's settings (`neuralDebug.*`). */
export interface Settings {
  pythonPath: string;
  engine: 'neural' | 'oracle';
  model: string;
  worker: string;
  stepping: 'pdb' | 'debugpy';
  adapterLogFile: string;
}

export const DEFAULT_SETTINGS: Settings = {
  pythonPath: '',
  engine: 'neural',
  model: '',
  worker: '',
  stepping: 'debugpy',
  adapterLogFile: '',
};

export function currentFileConfig(): LaunchConfig {
  return {
    type: DEBUG_TYPE,
    request: 'launch',
    name: CURRENT_FILE_NAME,
    program: '${file}',
    stopOnEntry: false,
  };
}

/** The configuration written into a new launch.json: the current file, with the stepping style spelled out. */
export function newLaunchConfig(settings: Settings): LaunchConfig {
  return { ...currentFileConfig(), stepping: settings.stepping };
}

export function callFunctionConfig(entry: string): LaunchConfig {
  return {
    type: DEBUG_TYPE,
    request: 'launch',
    name: CALL_FUNCTION_NAME,
    program: '${file}',
    entry,
    stopOnEntry: true,
  };
}

/**
 * Before variable substitution: F5 with no launch.json gives an empty configuration; when the
 * active editor holds a Python file, debug that file. Returns undefined when there is nothing to
 * debug (the caller tells the user).
 */
export function fillEmptyConfig(config: Partial<LaunchConfig>, activeLanguage: string | undefined): LaunchConfig | undefined {
  const empty = !config.type && !config.request && !config.name;
  if (empty) {
    if (activeLanguage !== 'python') {
      return undefined;
    }
    return currentFileConfig();
  }
  const filled = { ...config } as LaunchConfig;
  filled.type = filled.type || DEBUG_TYPE;
  filled.request = filled.request || 'launch';
  filled.name = filled.name || CURRENT_FILE_NAME;
  if (!filled.program) {
    filled.program = '${file}';
  }
  return filled;
}

/** After variable substitution: defaults from the settings for what the configuration leaves out. */
export function applySettings(config: LaunchConfig, settings: Settings): LaunchConfig {
  const out: LaunchConfig = { ...config };
  if (!out.engine) {
    out.engine = settings.engine;
  }
  if (!out.model && settings.model) {
    out.model = settings.model;
  }
  if (!out.worker && settings.worker) {
    out.worker = settings.worker;
  }
  if (!out.stepping && settings.stepping) {
    out.stepping = settings.stepping;
  }
  return out;
}

/** Check the configuration before starting anything: a readable message, or undefined when fine. */
export function validateConfig(config: LaunchConfig): string | undefined {
  if (config.request !== 'launch') {
    return `Neural Debug only launches programs (request "launch"), not "${config.request}".`;
  }
  if (!config.program || config.program.includes('${file}')) {
    return 'Neural Debug: no program to debug. Open a Python file, or set "program" in the launch configuration.';
  }
  if (config.engine && config.engine !== 'neural' && config.engine !== 'oracle') {
    return `Neural Debug: unknown engine "${String(config.engine)}" (use "neural" or "oracle").`;
  }
  return undefined;
}

/** Expand `~` and `${workspaceFolder}` and resolve a relative path against the workspace folder. */
export function expandPath(value: string, workspaceFolder: string | undefined): string {
  let out = value.trim();
  if (workspaceFolder) {
    out = out.split('${workspaceFolder}').join(workspaceFolder);
  }
  out = out.split('${userHome}').join(os.homedir());
  if (out === '~' || out.startsWith('~/')) {
    out = path.join(os.homedir(), out.slice(1));
  }
  const looksLikePath = out.includes('/') || out.includes('\\');
  if (looksLikePath && !path.isAbsolute(out) && workspaceFolder) {
    out = path.resolve(workspaceFolder, out);
  }
  return out;
}

export type PythonSource = 'launch configuration' | 'setting neuralDebug.pythonPath' | 'Python extension' | 'default';

export interface PythonChoice {
  path: string;
  source: PythonSource;
}

/**
 * The adapter's interpreter, in order: the configuration's `python`, the setting, the Python
 * extension's selected interpreter, `python3`.
 */
export function choosePython(
  configPython: string | undefined,
  settingPython: string | undefined,
  pythonExtension: string | undefined,
  workspaceFolder: string | undefined,
): PythonChoice {
  if (configPython && configPython.trim()) {
    return { path: expandPath(configPython, workspaceFolder), source: 'launch configuration' };
  }
  if (settingPython && settingPython.trim()) {
    return { path: expandPath(settingPython, workspaceFolder), source: 'setting neuralDebug.pythonPath' };
  }
  if (pythonExtension && pythonExtension.trim()) {
    return { path: pythonExtension, source: 'Python extension' };
  }
  return { path: 'python3', source: 'default' };
}

/** The adapter's command line after the interpreter. */
export function adapterArgs(logFile?: string): string[] {
  const args = ['-m', 'dap_server', 'dap'];
  if (logFile) {
    args.push('--log-file', logFile);
  }
  return args;
}

export interface CheckResult {
  ok: boolean;
  /** A readable message: the interpreter's version and where dap_server lives, or what is wrong. */
  message: string;
}

const CHECK_SCRIPT = [
  'import sys',
  'try:',
  '    import dap_server, dap_server.server',
  'except Exception as exc:',
  '    print("IMPORT-ERROR " + type(exc).__name__ + ": " + str(exc))',
  '    sys.exit(3)',
  'print("OK " + sys.version.split()[0] + " " + dap_server.__file__)',
].join('\n');

/**
 * Can `python` start the adapter? Runs the interpreter once (it imports dap_server and its
 * server module, nothing else) and turns every failure into a sentence for the user.
 */
export function checkPython(choice: PythonChoice, timeoutMs = 30000): Promise<CheckResult> {
  const where = `${choice.path} (from ${choice.source})`;
  return new Promise((resolve) => {
    execFile(choice.path, ['-c', CHECK_SCRIPT], { timeout: timeoutMs, encoding: 'utf8' }, (error, stdout, stderr) => {
      const out = (stdout || '').trim();
      if (!error && out.startsWith('OK ')) {
        const [, version, file] = out.split(' ');
        resolve({ ok: true, message: `Python ${version} at ${where} imports dap_server from ${path.dirname(file ?? '')}` });
        return;
      }
      const code = (error as NodeJS.ErrnoException | null)?.code;
      if (code === 'ENOENT') {
        resolve({
          ok: false,
          message: `Neural Debug cannot start its debug adapter: the Python interpreter ${where} was not found. ` +
            'Set "neuralDebug.pythonPath" (or "python" in the launch configuration) to an interpreter with Neural Debug installed.',
        });
        return;
      }
      if (code === 'EACCES') {
        resolve({ ok: false, message: `Neural Debug cannot start its debug adapter: ${where} is not executable.` });
        return;
      }
      if ((error as { killed?: boolean } | null)?.killed) {
        resolve({ ok: false, message: `Neural Debug cannot start its debug adapter: ${where} did not answer within ${Math.round(timeoutMs / 1000)} s.` });
        return;
      }
      const importError = out.split('\n').find((line) => line.startsWith('IMPORT-ERROR '));
      if (importError) {
        resolve({
          ok: false,
          message: `Neural Debug cannot start its debug adapter: ${where} cannot import dap_server ` +
            `(${importError.slice('IMPORT-ERROR '.length)}). Install Neural Debug into that environment ` +
            '(`pip install -e .` in the repository, or `make install` there), or point "neuralDebug.pythonPath" at its .venv/bin/python.',
        });
        return;
      }
      const detail = (stderr || out || String(error)).trim().split('\n').slice(-3).join(' ');
      resolve({ ok: false, message: `Neural Debug cannot start its debug adapter with ${where}: ${detail}` });
    });
  });
}
