// Written by unguard (outside your checkout), for its runs only: a jest
// reporter beside jest's default one that writes each test's result as
// JUnit XML to the file $UNGUARD_JEST_JUNIT names: the test file (relative
// to jest's rootDir) as classname, the test's full name (its describe
// blocks and title joined by spaces, what --testNamePattern matches) as
// name. It writes nothing else and changes no result.
'use strict';
const fs = require('fs');
const path = require('path');

const ESC = { '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' };
function esc(s) {
  return String(s)
    .replace(/[<>&"']/g, (c) => ESC[c])
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/g, '');
}

class UnguardJunitReporter {
  constructor(globalConfig) {
    this.root = (globalConfig && globalConfig.rootDir) || process.cwd();
  }

  onRunComplete(_contexts, results) {
    const out = process.env.UNGUARD_JEST_JUNIT;
    if (!out) return;
    const lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<testsuites name="jest tests">'];
    for (const file of results.testResults || []) {
      const rel = path.relative(this.root, file.testFilePath).split(path.sep).join('/');
      const cases = file.testResults || [];
      lines.push(`  <testsuite name="${esc(rel)}" tests="${cases.length}">`);
      if (file.testExecError && cases.length === 0) {
        const msg = file.testExecError.message || String(file.testExecError);
        lines.push(`    <testcase classname="${esc(rel)}" name="Test suite failed to run">`);
        lines.push(`      <error message="${esc(msg.slice(0, 2000))}"/>`);
        lines.push('    </testcase>');
      }
      for (const t of cases) {
        const full = t.fullName || [...(t.ancestorTitles || []), t.title].join(' ');
        const time = ((t.duration || 0) / 1000).toFixed(3);
        lines.push(`    <testcase classname="${esc(rel)}" name="${esc(full)}" time="${time}">`);
        if (t.status === 'failed') {
          const msg = (t.failureMessages || []).join('\n');
          lines.push(`      <failure message="${esc(msg.slice(0, 2000))}"/>`);
        } else if (t.status !== 'passed') {
          lines.push('      <skipped/>');
        }
        lines.push('    </testcase>');
      }
      lines.push('  </testsuite>');
    }
    lines.push('</testsuites>');
    fs.writeFileSync(out, lines.join('\n') + '\n');
  }
}

module.exports = UnguardJunitReporter;
