// Written by unguard (outside your checkout) for its coverage run only: it
// is on NODE_OPTIONS there and nowhere else. It records that this Node
// process ran (and, under `node --test`, which test file it runs), writes
// V8's coverage when the process exits or is stopped by a signal, and
// passes unguard's variables on to the processes it starts.
'use strict';
(function unguardCoverage() {
  const fs = require('fs');
  const path = require('path');
  const out = process.env.UNGUARD_COVERAGE_DIR;
  const v8dir = process.env.UNGUARD_COVERAGE_V8;
  const preload = process.env.UNGUARD_COVERAGE_REQUIRE;
  if (!out || !v8dir || !preload || !process.env.NODE_V8_COVERAGE) return;
  const procs = path.join(out, 'procs');
  // The test file: the one a `node --test` child runs, or, in a process
  // a test started, its test's.
  const child = String(process.env.NODE_TEST_CONTEXT || '').startsWith('child');
  let file = process.env.UNGUARD_COVERAGE_FILE || null;
  if (!file && child && process.argv[1]) {
    file = path.resolve(process.argv[1]);
    process.env.UNGUARD_COVERAGE_FILE = file;
  }
  const record = { pid: process.pid, runner: process.execArgv.includes('--test'), file };
  try {
    fs.mkdirSync(procs, { recursive: true });
    fs.writeFileSync(path.join(procs, process.pid + '.start'), JSON.stringify(record));
  } catch (e) {
    return;
  }
  let finished = false;
  function finish() {
    if (finished) return;
    finished = true;
    try {
      require('v8').takeCoverage();
    } catch (e) {}
    try {
      fs.writeFileSync(path.join(procs, process.pid + '.done'), '');
    } catch (e) {}
  }
  process.on('exit', finish);
  // A signal without a handler of the program's own: write the coverage,
  // then let the signal end the process as it would have.
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
    const on = () => {
      if (process.listenerCount(sig) > 1) return;
      finish();
      process.removeListener(sig, on);
      process.kill(process.pid, sig);
    };
    process.on(sig, on);
  }
  // A process started with an environment of its own (an MCP client's
  // server, spawned with a few variables) is measured too.
  const vars = {
    NODE_V8_COVERAGE: v8dir,
    UNGUARD_COVERAGE_DIR: out,
    UNGUARD_COVERAGE_V8: v8dir,
    UNGUARD_COVERAGE_REQUIRE: preload,
  };
  if (file) vars.UNGUARD_COVERAGE_FILE = file;
  function withVars(env) {
    const e = Object.assign({}, env);
    for (const k of Object.keys(vars)) {
      if (e[k] === undefined) e[k] = vars[k];
    }
    const opts = e.NODE_OPTIONS || '';
    if (!opts.includes(preload)) e.NODE_OPTIONS = opts ? opts + ' ' + preload : preload;
    return e;
  }
  const cp = require('child_process');
  const proto = cp.ChildProcess.prototype;
  const spawn = proto.spawn;
  proto.spawn = function (options) {
    if (options && Array.isArray(options.envPairs)) {
      const env = {};
      for (const pair of options.envPairs) {
        const at = pair.indexOf('=');
        if (at > 0) env[pair.slice(0, at)] = pair.slice(at + 1);
      }
      options.envPairs = Object.entries(withVars(env)).map(([k, v]) => k + '=' + v);
    }
    return spawn.call(this, options);
  };
  for (const name of ['spawnSync', 'execSync', 'execFileSync']) {
    const original = cp[name];
    cp[name] = function (...args) {
      for (let i = args.length - 1; i >= 1; i--) {
        const a = args[i];
        if (a && typeof a === 'object' && !Array.isArray(a)) {
          if (a.env) args[i] = Object.assign({}, a, { env: withVars(a.env) });
          break;
        }
      }
      return original.apply(this, args);
    };
  }
})();
