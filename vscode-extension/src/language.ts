/**
 * The neural language server (`python -m dap_server lsp`, pygls) for Python files: code lenses with the
 * predicted return of each function's example call, inlay hints with what each line binds, hover, and
 * the "Infer inputs for a return value…" code action. This module starts it with vscode-languageclient
 * and implements the client side of its commands:
 * - `neuralDebug.debugCall` (the lens): a Neural Debug session at that call;
 * - `neuralDebug.inferInputs` (the code action): asks for the value, then runs the server's
 *   `ndb.inferInputs` and offers the confirmed argument lists, each one a session at that call;
 * and tells the server the entry of each Neural Debug launch (`ndb.setLaunchEntry`): it becomes the
 * example of the function it calls.
 * Also the InlineValuesProvider: while a Neural Debug session is paused, the paused function's names
 * show their values beside the code (VS Code looks them up in the paused frame).
 */
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions } from 'vscode-languageclient/node';

import { callFunctionConfig, checkPython, DEBUG_TYPE, PythonChoice } from './config';
import { namesToLookUp } from './inline';

export interface LanguageSettings {
  enabled: boolean;
  maxSteps: number;
  model: string;
  worker: string;
}

export function serverArgs(settings: LanguageSettings): string[] {
  const args = ['-m', 'dap_server', 'lsp', '--max-steps', String(settings.maxSteps)];
  if (settings.model) {
    args.push('--model', settings.model);
  }
  if (settings.worker) {
    args.push('--worker', settings.worker);
  }
  return args;
}

interface InferResult {
  function?: string;
  returned?: string;
  confirmed?: string[];
  checked?: { arguments: string; predicted: string | null }[];
  error?: string;
}

export class NeuralLanguage implements vscode.Disposable {
  private client: LanguageClient | undefined;

  constructor(private readonly log: (line: string) => void) {}

  async start(python: PythonChoice, settings: LanguageSettings): Promise<void> {
    if (!settings.enabled) {
      this.log('the language server is off (neuralDebug.languageServer.enabled)');
      return;
    }
    const check = await checkPython(python);
    if (!check.ok) {
      this.log(`the language server does not start: ${check.message}`);
      return;
    }
    const serverOptions: ServerOptions = { command: python.path, args: serverArgs(settings), options: { env: { ...process.env, PYTHONUNBUFFERED: '1' } } };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file', language: 'python' }, { scheme: 'untitled', language: 'python' }],
    };
    this.client = new LanguageClient('neuralDebugLanguageServer', 'Neural Debug Language Server', serverOptions, clientOptions);
    this.log(`starting the language server: ${python.path} ${serverArgs(settings).join(' ')}`);
    await this.client.start();
  }

  async setLaunchEntry(config: vscode.DebugConfiguration): Promise<void> {
    if (!this.client || typeof config.entry !== 'string' || typeof config.program !== 'string' || !config.entry) {
      return;
    }
    const uri = vscode.Uri.file(config.program).toString();
    await this.client.sendRequest('workspace/executeCommand', { command: 'ndb.setLaunchEntry', arguments: [uri, config.entry] })
      .catch((err: unknown) => this.log(`ndb.setLaunchEntry: ${String(err)}`));
  }

  async inferInputs(uri: string, name: string): Promise<void> {
    if (!this.client) {
      return;
    }
    const value = await vscode.window.showInputBox({
      title: `Neural Debug: infer inputs of ${name}`,
      prompt: `The value ${name}(...) should return, as a Python literal`,
      placeHolder: "[1, 2, 3]  or  'abc'  or  42",
    });
    if (value === undefined || !value.trim()) {
      return;
    }
    const client = this.client;
    const result = await vscode.window.withProgress({
      location: vscode.ProgressLocation.Notification,
      title: `Neural Debug: inputs of ${name} that return ${value.trim()} (the model proposes and checks; nothing runs)`,
    }, () => client.sendRequest<InferResult>('workspace/executeCommand', { command: 'ndb.inferInputs', arguments: [uri, name, value.trim(), 3] }));
    if (!result || result.error) {
      void vscode.window.showWarningMessage(`Neural Debug: ${result?.error ?? 'no answer from the language server'}`);
      return;
    }
    const confirmed = result.confirmed ?? [];
    if (!confirmed.length) {
      void vscode.window.showInformationMessage(`Neural Debug: no argument list of ${name} confirmed to return ${value.trim()}.`);
      return;
    }
    const picked = await vscode.window.showQuickPick(confirmed.map((args) => ({ label: `${name}(${args})`, description: 'confirmed by the model\'s run' })), {
      title: `${confirmed.length} argument list(s) confirmed: debug one`,
    });
    if (picked) {
      await debugCall(vscode.Uri.parse(uri).toString(), name, picked.label);
    }
  }

  async dispose(): Promise<void> {
    await this.client?.stop().catch(() => undefined);
    this.client = undefined;
  }
}

/** The code lens's command: a Neural Debug session stopped at the start of `call` in that file. */
export async function debugCall(uri: string, _name: string, call: string): Promise<void> {
  const fileUri = vscode.Uri.parse(uri);
  const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === fileUri.toString());
  if (document?.isDirty) {
    await document.save();
  }
  const folder = vscode.workspace.getWorkspaceFolder(fileUri);
  await vscode.debug.startDebugging(folder, { ...callFunctionConfig(call), name: `Neural Debug: ${call}`, program: fileUri.fsPath });
}

/** While a Neural Debug session is paused: the names of the paused function's lines up to the stop. */
export class InlineValues implements vscode.InlineValuesProvider {
  provideInlineValues(document: vscode.TextDocument, viewPort: vscode.Range,
    context: vscode.InlineValueContext): vscode.InlineValue[] | undefined {
    if (vscode.debug.activeDebugSession?.type !== DEBUG_TYPE) {
      return undefined;
    }
    const lines = Array.from({ length: document.lineCount }, (_, i) => document.lineAt(i).text);
    return namesToLookUp(lines, context.stoppedLocation.end.line)
      .filter((n) => n.line >= viewPort.start.line && n.line <= viewPort.end.line)
      .map((n) => new vscode.InlineValueVariableLookup(new vscode.Range(n.line, n.start, n.line, n.end), n.name, true));
  }
}
