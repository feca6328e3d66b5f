/**
 * Neural Debug for VS Code: a thin layer over the Python debug adapter (`python -m dap_server dap`).
 * It fills in launch configurations, finds the interpreter that runs the adapter, checks it can
 * import the adapter before starting it, and says where values come from. For Python files it also
 * starts the neural language server (language.ts): predicted returns and values in the editor.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';

import {
  adapterArgs,
  applySettings,
  callFunctionConfig,
  checkPython,
  choosePython,
  currentFileConfig,
  DEBUG_TYPE,
  DEFAULT_SETTINGS,
  fillEmptyConfig,
  LaunchConfig,
  newLaunchConfig,
  PythonChoice,
  Settings,
  validateConfig,
} from './config';
import { debugCall, InlineValues, LanguageSettings, NeuralLanguage } from './language';

let output: vscode.OutputChannel | undefined;
let language: NeuralLanguage | undefined;

function log(line: string): void {
  output?.appendLine(`[${new Date().toISOString()}] ${line}`);
}

function readSettings(scope?: vscode.ConfigurationScope): Settings {
  const cfg = vscode.workspace.getConfiguration('neuralDebug', scope);
  return {
    pythonPath: cfg.get<string>('pythonPath', DEFAULT_SETTINGS.pythonPath),
    engine: cfg.get<'neural' | 'oracle'>('engine', DEFAULT_SETTINGS.engine),
    model: cfg.get<string>('model', DEFAULT_SETTINGS.model),
    worker: cfg.get<string>('worker', DEFAULT_SETTINGS.worker),
    stepping: cfg.get<'pdb' | 'debugpy'>('stepping', DEFAULT_SETTINGS.stepping),
    adapterLogFile: cfg.get<string>('adapterLogFile', DEFAULT_SETTINGS.adapterLogFile),
  };
}

function readLanguageSettings(scope?: vscode.ConfigurationScope): LanguageSettings {
  const cfg = vscode.workspace.getConfiguration('neuralDebug', scope);
  return {
    enabled: cfg.get<boolean>('languageServer.enabled', true),
    maxSteps: cfg.get<number>('languageServer.maxSteps', 40),
    model: cfg.get<string>('model', DEFAULT_SETTINGS.model),
    worker: cfg.get<string>('worker', DEFAULT_SETTINGS.worker),
  };
}

async function startLanguageServer(): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  try {
    const choice = await resolvePython(folder, undefined, vscode.window.activeTextEditor?.document.uri);
    await language?.start(choice, readLanguageSettings(folder));
  } catch (err) {
    log(`the language server did not start: ${String(err)}`);
  }
}

/** The Python extension's selected interpreter, when that extension is installed (no hard dependency). */
async function pythonExtensionInterpreter(resource: vscode.Uri | undefined): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension('ms-python.python');
  if (!ext) {
    return undefined;
  }
  try {
    const api = (ext.isActive ? ext.exports : await ext.activate()) as PythonExtensionApi | undefined;
    const envs = api?.environments;
    if (envs?.getActiveEnvironmentPath) {
      const active = envs.getActiveEnvironmentPath(resource);
      const resolved = envs.resolveEnvironment ? await envs.resolveEnvironment(active) : undefined;
      const exe = resolved?.executable?.uri?.fsPath ?? active?.path;
      if (exe) {
        return exe;
      }
    }
    const details = api?.settings?.getExecutionDetails?.(resource);
    return details?.execCommand?.[0];
  } catch (err) {
    log(`the Python extension did not give an interpreter: ${String(err)}`);
    return undefined;
  }
}

interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath?(resource?: vscode.Uri): { path: string } | undefined;
    resolveEnvironment?(env: unknown): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
  };
  settings?: {
    getExecutionDetails?(resource?: vscode.Uri): { execCommand?: string[] } | undefined;
  };
}

async function resolvePython(folder: vscode.WorkspaceFolder | undefined, configPython: string | undefined,
  resource?: vscode.Uri): Promise<PythonChoice> {
  const settings = readSettings(folder ?? resource);
  const fromExtension = configPython || settings.pythonPath ? undefined : await pythonExtensionInterpreter(resource ?? folder?.uri);
  return choosePython(configPython, settings.pythonPath, fromExtension, folder?.uri.fsPath);
}

async function showAdapterError(message: string): Promise<void> {
  log(message);
  const choice = await vscode.window.showErrorMessage(message, 'Open Settings', 'Select Interpreter', 'Show Log');
  if (choice === 'Open Settings') {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'neuralDebug.pythonPath');
  } else if (choice === 'Select Interpreter') {
    await vscode.commands.executeCommand('neuralDebug.selectPython');
  } else if (choice === 'Show Log') {
    output?.show(true);
  }
}

class ConfigurationProvider implements vscode.DebugConfigurationProvider {
  provideDebugConfigurations(folder: vscode.WorkspaceFolder | undefined): vscode.ProviderResult<vscode.DebugConfiguration[]> {
    return [newLaunchConfig(readSettings(folder))];
  }

  resolveDebugConfiguration(folder: vscode.WorkspaceFolder | undefined,
    config: vscode.DebugConfiguration): vscode.ProviderResult<vscode.DebugConfiguration> {
    const language = vscode.window.activeTextEditor?.document.languageId;
    const filled = fillEmptyConfig(config as Partial<LaunchConfig>, language);
    if (!filled) {
      void vscode.window.showInformationMessage('Neural Debug: open a Python file to debug it (or add a launch configuration).');
      return undefined;
    }
    return filled;
  }

  async resolveDebugConfigurationWithSubstitutedVariables(folder: vscode.WorkspaceFolder | undefined,
    config: vscode.DebugConfiguration): Promise<vscode.DebugConfiguration | undefined> {
    const programUri = typeof config.program === 'string' && config.program ? vscode.Uri.file(config.program) : undefined;
    const resolved = applySettings(config as LaunchConfig, readSettings(folder ?? programUri));
    const problem = validateConfig(resolved);
    if (problem) {
      await showAdapterError(problem);
      return undefined;
    }
    const choice = await resolvePython(folder, resolved.python, programUri);
    const check = await checkPython(choice);
    if (!check.ok) {
      await showAdapterError(check.message);
      return undefined; // abort the launch; the message says what to do
    }
    log(check.message);
    resolved.python = choice.path;
    return resolved;
  }
}

class AdapterFactory implements vscode.DebugAdapterDescriptorFactory {
  async createDebugAdapterDescriptor(session: vscode.DebugSession): Promise<vscode.DebugAdapterDescriptor> {
    const config = session.configuration as LaunchConfig;
    if (typeof config.adapterPort === 'number') {
      // An adapter that already serves over TCP; `adapterToken` reaches it in the launch arguments.
      const host = config.adapterHost || '127.0.0.1';
      log(`connecting to the adapter at ${host}:${config.adapterPort}`);
      return new vscode.DebugAdapterServer(config.adapterPort, host);
    }
    const folder = session.workspaceFolder;
    const choice = config.python
      ? { path: config.python, source: 'launch configuration' as const }
      : await resolvePython(folder, undefined);
    const settings = readSettings(folder);
    const args = adapterArgs(settings.adapterLogFile || undefined);
    const cwd = folder?.uri.fsPath ?? (config.program ? path.dirname(config.program) : undefined);
    log(`starting the adapter: ${choice.path} ${args.join(' ')} (interpreter from ${choice.source})`);
    return new vscode.DebugAdapterExecutable(choice.path, args, { cwd, env: { PYTHONUNBUFFERED: '1' } });
  }
}

/** Watches each session for an adapter that dies early and says so in words. */
class TrackerFactory implements vscode.DebugAdapterTrackerFactory {
  createDebugAdapterTracker(session: vscode.DebugSession): vscode.DebugAdapterTracker {
    let initialized = false;
    return {
      onDidSendMessage: (message: { type?: string; event?: string; command?: string; success?: boolean; message?: string }) => {
        if (message.type === 'event' && message.event === 'initialized') {
          initialized = true;
        }
        if (message.type === 'response' && message.command === 'launch' && message.success === false) {
          log(`launch failed: ${message.message ?? ''}`);
        }
      },
      onError: (error: Error) => log(`adapter error (${session.name}): ${error.message}`),
      onExit: (code: number | undefined, signal: string | undefined) => {
        if (!initialized && (code ?? 0) !== 0) {
          void showAdapterError(`Neural Debug: the debug adapter exited (code ${code ?? '?'}${signal ? `, signal ${signal}` : ''}) ` +
            'before the program started. Run "Neural Debug: Check Debug Adapter" or set neuralDebug.adapterLogFile for details.');
        }
      },
    };
  }
}

async function debugFile(entry?: string): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.languageId !== 'python') {
    void vscode.window.showInformationMessage('Neural Debug: open a Python file first.');
    return;
  }
  if (editor.document.isDirty) {
    await editor.document.save();
  }
  const config = entry === undefined ? currentFileConfig() : callFunctionConfig(entry);
  const folder = vscode.workspace.getWorkspaceFolder(editor.document.uri);
  await vscode.debug.startDebugging(folder, { ...config, program: editor.document.uri.fsPath });
}

async function debugFunction(): Promise<void> {
  const entry = await vscode.window.showInputBox({
    title: 'Neural Debug: call a function',
    prompt: 'A call expression run after the module, with literal arguments',
    placeHolder: 'main()  or  f([3, 1, 2])',
    validateInput: (value) => (/^\s*[A-Za-z_][\w.]*\s*\(.*\)\s*$/s.test(value) ? undefined : 'a call such as f([3, 1, 2])'),
  });
  if (entry) {
    await debugFile(entry.trim());
  }
}

async function selectPython(): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  const current = readSettings(folder).pythonPath;
  const value = await vscode.window.showInputBox({
    title: 'Neural Debug: Python interpreter for the debug adapter',
    prompt: 'It must be able to import dap_server (e.g. the repository\'s .venv/bin/python)',
    value: current || (folder ? path.join(folder.uri.fsPath, '.venv', 'bin', 'python') : ''),
  });
  if (value === undefined) {
    return;
  }
  const choice = choosePython(undefined, value, undefined, folder?.uri.fsPath);
  const check = await checkPython(choice);
  const target = folder ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  await vscode.workspace.getConfiguration('neuralDebug', folder).update('pythonPath', value, target);
  if (check.ok) {
    void vscode.window.showInformationMessage(`Neural Debug: ${check.message}`);
  } else {
    void vscode.window.showWarningMessage(check.message);
  }
}

async function checkAdapter(): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  const choice = await resolvePython(folder, undefined, vscode.window.activeTextEditor?.document.uri);
  const check = await checkPython(choice);
  log(check.message);
  if (check.ok) {
    void vscode.window.showInformationMessage(`Neural Debug: ${check.message}`);
  } else {
    await showAdapterError(check.message);
  }
}

/** VS Code shows a variable's DAP `type` (where the adapter puts "(p=0.93)") next to its name only with debug.showVariableTypes. */
async function toggleTypes(): Promise<void> {
  const debug = vscode.workspace.getConfiguration('debug');
  const now = debug.get<boolean>('showVariableTypes', false);
  await debug.update('showVariableTypes', !now, vscode.ConfigurationTarget.Global);
  void vscode.window.showInformationMessage(now
    ? 'Neural Debug: types and confidence are shown when hovering a variable\'s name.'
    : 'Neural Debug: types and confidence (p=...) are shown next to variable names.');
}

export function activate(context: vscode.ExtensionContext): void {
  output = vscode.window.createOutputChannel('Neural Debug');
  const provider = new ConfigurationProvider();
  context.subscriptions.push(
    output,
    vscode.debug.registerDebugConfigurationProvider(DEBUG_TYPE, provider),
    vscode.debug.registerDebugConfigurationProvider(DEBUG_TYPE, {
      provideDebugConfigurations: (folder) => [newLaunchConfig(readSettings(folder))],
    }, vscode.DebugConfigurationProviderTriggerKind.Dynamic),
    vscode.debug.registerDebugAdapterDescriptorFactory(DEBUG_TYPE, new AdapterFactory()),
    vscode.debug.registerDebugAdapterTrackerFactory(DEBUG_TYPE, new TrackerFactory()),
    vscode.commands.registerCommand('neuralDebug.debugFile', () => debugFile()),
    vscode.commands.registerCommand('neuralDebug.debugFunction', debugFunction),
    vscode.commands.registerCommand('neuralDebug.selectPython', selectPython),
    vscode.commands.registerCommand('neuralDebug.checkAdapter', checkAdapter),
    vscode.commands.registerCommand('neuralDebug.toggleTypes', toggleTypes),
    vscode.commands.registerCommand('neuralDebug.debugCall', debugCall),
    vscode.commands.registerCommand('neuralDebug.inferInputs', (uri: string, name: string) => language?.inferInputs(uri, name)),
    vscode.languages.registerInlineValuesProvider({ language: 'python' }, new InlineValues()),
    vscode.debug.onDidStartDebugSession((session) => {
      if (session.type === DEBUG_TYPE) {
        void language?.setLaunchEntry(session.configuration);
      }
    }),
  );
  language = new NeuralLanguage(log);
  context.subscriptions.push(language);
  void startLanguageServer();
}

export async function deactivate(): Promise<void> {
  await language?.dispose();
  language = undefined;
  output = undefined;
}
