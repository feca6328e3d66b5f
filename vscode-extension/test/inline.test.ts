/** The names the InlineValuesProvider asks VS Code to look up while a session is paused (src/inline.ts). */
import * as assert from 'node:assert/strict';

import { codeOnly, functionStart, namesToLookUp } from '../src/inline';

const DEMO = [
  'def mean(values):', //                0
  '    total = 0', //                    1
  '    for v in values:  # each one', // 2
  '        total += v', //               3
  '    return total / len(values)', //   4
  '',
  'numbers = [4, 8, 15]', //             6
  'result = mean(numbers)', //           7
];

describe('inline values: names to look up', () => {
  it('covers the paused function from its def to the stopped line, once per line, left to right', () => {
    const found = namesToLookUp(DEMO, 3).map((n) => `${n.line}:${n.name}@${n.start}`);
    assert.deepEqual(found, ['0:values@9', '1:total@4', '2:v@8', '2:values@13', '3:total@8', '3:v@17']);
  });

  it('starts at the module top for a stop outside any function', () => {
    assert.equal(functionStart(DEMO, 7), 0);
    const names = namesToLookUp(DEMO, 7).filter((n) => n.line >= 6).map((n) => n.name);
    assert.deepEqual(names, ['numbers', 'result', 'mean', 'numbers']);
  });

  it('skips keywords, strings, comments, attributes and keyword arguments', () => {
    const lines = ['def f(s):', "    t = s.strip('x y')  # z", '    return g(key=t, other=s) == t'];
    const names = namesToLookUp(lines, 2).map((n) => `${n.line}:${n.name}`);
    assert.deepEqual(names, ['0:s', '1:t', '1:s', '2:g', '2:t', '2:s']);
    assert.equal(codeOnly("a = 'b # c'  # d"), `a = ${' '.repeat(9)}`);
  });

  it('finds the enclosing def of a nested block, not a sibling function', () => {
    const lines = ['def a():', '    x = 1', 'def b(y):', '    if y:', '        z = y', '    return z'];
    assert.equal(functionStart(lines, 4), 2);
    assert.equal(functionStart(lines, 1), 0);
  });
});
