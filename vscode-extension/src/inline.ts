/**
 * Inline values while a Neural Debug session is paused: which names of the paused function's lines,
 * up to the stopped line, VS Code should look up in the paused frame's variables (InlineValueVariableLookup).
 * Pure text work (no `vscode` import), so that the unit tests run it without an editor.
 */

const KEYWORDS = new Set([
  'False', 'None', 'True', 'and', 'as', 'assert', 'async', 'await', 'break', 'class', 'continue', 'def', 'del',
  'elif', 'else', 'except', 'finally', 'for', 'from', 'global', 'if', 'import', 'in', 'is', 'lambda', 'nonlocal',
  'not', 'or', 'pass', 'raise', 'return', 'try', 'while', 'with', 'yield', 'match', 'case', 'print', 'len', 'range',
]);

export interface NameAt {
  line: number; // 0-based
  start: number;
  end: number;
  name: string;
}

function indent(text: string): number {
  return text.length - text.trimStart().length;
}

/** The 0-based line of the `def` whose body holds `stopLine`, or 0 (the module) when none does. */
export function functionStart(lines: string[], stopLine: number): number {
  const stopIndent = indent(lines[stopLine] ?? '');
  for (let i = stopLine; i >= 0; i--) {
    const text = lines[i];
    if (/^\s*(async\s+)?def\s/.test(text) && (i === stopLine || indent(text) < stopIndent)) {
      return i;
    }
  }
  return 0;
}

/** Code of a line without its comment and string literals (replaced by spaces, so columns stay). */
export function codeOnly(text: string): string {
  return text.replace(/(["'])(?:\\.|(?!\1).)*\1/g, (s) => ' '.repeat(s.length)).replace(/#.*$/, '');
}

/** The names on the lines of the paused function from its `def` to `stopLine` (0-based), once per
 * line, left to right, not attributes (`a.b` gives `a`), keywords, or keyword arguments. */
export function namesToLookUp(lines: string[], stopLine: number): NameAt[] {
  const out: NameAt[] = [];
  const first = functionStart(lines, stopLine);
  for (let line = first; line <= stopLine && line < lines.length; line++) {
    const code = codeOnly(lines[line]);
    const seen = new Set<string>();
    for (const match of code.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)) {
      const name = match[0];
      const start = match.index ?? 0;
      const before = code.slice(0, start).trimEnd();
      const after = code.slice(start + name.length).trimStart();
      const keywordArgument = after.startsWith('=') && !after.startsWith('==') && /[(,]$/.test(before);
      if (KEYWORDS.has(name) || before.endsWith('.') || keywordArgument || seen.has(name)
        || (line === first && /\bdef\s*$/.test(before))) {
        continue;
      }
      seen.add(name);
      out.push({ line, start, end: start + name.length, name });
    }
  }
  return out;
}
