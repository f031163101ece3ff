#!/usr/bin/env node
// The `unguard` command of the npm package: runs the native binary from this
// platform's optional package (@unguard/<os>-<arch>, installed by npm with no
// install script and no download) with the same arguments, and exits as it
// did: with its exit code, or by its signal.
//
// Ctrl-C in a terminal reaches the binary directly (same process group), so
// the launcher ignores SIGINT and SIGHUP itself instead of sending a second
// one (unguard's second interrupt means "kill everything now"); a SIGTERM sent
// to the launcher alone is passed on.
"use strict";

const { spawn } = require("child_process");

const PACKAGES = {
  "linux x64": "@unguard/linux-x64",
  "linux arm64": "@unguard/linux-arm64",
};

function fail(message) {
  process.stderr.write(`unguard: ${message}\n`);
  process.exit(1);
}

function binary() {
  const platform = `${process.platform} ${process.arch}`;
  const pkg = PACKAGES[platform];
  if (!pkg) {
    fail(`no unguard binary for ${platform}: the npm package supports Linux x64 and arm64 (glibc)`);
  }
  try {
    return require.resolve(`${pkg}/bin/unguard`);
  } catch (_) {
    fail(
      `${pkg} is not installed. It is an optional dependency of unguard: ` +
        "reinstall without --omit=optional / --no-optional.",
    );
  }
}

const child = spawn(binary(), process.argv.slice(2), { stdio: "inherit" });
const ignore = () => {};
process.on("SIGINT", ignore);
process.on("SIGHUP", ignore);
process.on("SIGTERM", () => child.kill("SIGTERM"));
child.on("error", (e) => fail(`could not start ${e.path || "the binary"}: ${e.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code === null ? 1 : code);
});
