# Written by unguard (outside your checkout) for its coverage run only, beside
# its sitecustomize. Loaded by path (never imported by name) into every Python
# process that unguard's coverage measures, it records what the map needs to
# know it is complete:
#   started.<pid>      this interpreter is measured (one per process and per
#                      fork);
#   finished.<pid>     its data is saved (written after every save: at exit,
#                      on SIGTERM, in os._exit, before exec); a started
#                      process that never finished was killed or is still
#                      running at the end;
#   unmeasured.<pid>.<n>  a process this one started whose environment will not
#                      load unguard's sitecustomize (an `env=` of the test's own,
#                      the MCP SDK's stdio client with its default environment,
#                      `python -I`/`-E`/`-S`): whatever it runs is unseen.
# It changes nothing a process does: every hook calls the original with the
# same arguments.
import inspect
import json
import os
import sys

_STATE = {"out": None, "site": None, "n": 0}
_FLAGS_UNSEEN = set("IES")


def _write(name, record):
    out = _STATE["out"]
    if not out:
        return
    try:
        path = os.path.join(out, name)
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            json.dump(record, f)
        os.replace(path + ".tmp", path)
    except Exception:
        pass


def _test():
    return os.environ.get("UNGUARD_COVERAGE_TEST") or ""


def _own_argv():
    try:
        with open("/proc/self/cmdline", "rb") as f:
            words = f.read().split(b"\0")
        return [w.decode("utf-8", "replace") for w in words if w][:6]
    except Exception:
        return [str(a) for a in sys.argv[:6]]


def _started():
    _write(
        "started.%d" % os.getpid(),
        {"pid": os.getpid(), "test": _test(), "argv": _own_argv()},
    )


def _text(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return v if isinstance(v, str) else str(v)


def _env_measured(env):
    """Whether a process started with `env` (None: this one's) loads unguard's
    sitecustomize: it carries the data directory and the site directory is on
    its PYTHONPATH."""
    if env is None:
        env = os.environ
    try:
        items = {_text(k): _text(v) for k, v in dict(env).items()}
    except Exception:
        return False
    if items.get("UNGUARD_COVERAGE_DIR") != _STATE["out"]:
        return False
    return _STATE["site"] in (items.get("PYTHONPATH") or "").split(os.pathsep)


def _argv(args):
    if isinstance(args, (str, bytes, os.PathLike)):
        return [_text(os.fspath(args))]
    try:
        return [_text(os.fspath(a)) if isinstance(a, os.PathLike) else _text(a) for a in args]
    except Exception:
        return [repr(args)]


def _flags_unseen(argv):
    """Whether a Python command line turns off what loads sitecustomize
    (-I, -E, -S, alone or grouped), before its script, -c or -m."""
    if not argv:
        return False
    name = os.path.basename(argv[0])
    if not (name.startswith("python") or argv[0] == sys.executable):
        return False
    for a in argv[1:]:
        if not a.startswith("-") or a == "-" or a.startswith("--"):
            return False
        letters = a[1:]
        if _FLAGS_UNSEEN & set(letters.split("c")[0].split("m")[0]):
            return True
        if "c" in letters or "m" in letters:
            return False
    return False


# Programs that run other programs: a child of theirs may be Python.
_LAUNCHERS = {
    "sh", "bash", "dash", "zsh", "ksh", "fish", "busybox",
    "env", "nohup", "timeout", "setsid", "stdbuf", "nice", "xargs", "sudo", "exec",
    "uv", "uvx", "poetry", "pdm", "hatch", "tox", "nox", "pipenv", "pipx", "rye",
    "make", "just", "coverage", "pytest", "py.test",
}


def _resolve(program, env):
    if os.sep in program:
        return program
    path = None
    if env is not None:
        try:
            path = {_text(k): _text(v) for k, v in dict(env).items()}.get("PATH")
        except Exception:
            path = None
    import shutil

    return shutil.which(program, path=path or os.environ.get("PATH")) or program


def _may_run_python(argv):
    """Whether the program `argv` starts can run Python code of the copy:
    a Python interpreter, a shell or a program that runs others, a script
    whose #! line names one of those, or a program that cannot be told. A
    plain native tool (ldconfig, git, node, uname) cannot."""
    if not argv:
        return True
    program = argv[0]
    name = os.path.basename(program)
    if name.startswith("python") or name.startswith("pypy") or name in _LAUNCHERS:
        return True
    try:
        if os.path.realpath(program) == os.path.realpath(sys.executable):
            return True
        with open(program, "rb") as f:
            head = f.read(256)
    except Exception:
        return True
    if head.startswith(b"\x7fELF"):
        return False
    if head.startswith(b"#!"):
        words = head[2:].split(b"\n")[0].split()
        if not words:
            return True
        names = [os.path.basename(w.decode("utf-8", "replace")) for w in words[:2]]
        return any(n.startswith("python") or n.startswith("pypy") or n in _LAUNCHERS for n in names)
    return True


def _record(argv, env, how):
    why = None
    if argv:
        argv = [_resolve(argv[0], env)] + list(argv[1:])
    if not _may_run_python(argv):
        return
    if not _env_measured(env):
        why = "its environment does not carry unguard's coverage (an env of its own)"
    elif _flags_unseen(argv):
        why = "its Python options (-I, -E or -S) skip unguard's coverage"
    if why is None:
        return
    _STATE["n"] += 1
    _write(
        "unmeasured.%d.%d" % (os.getpid(), _STATE["n"]),
        {"test": _test(), "argv": argv[:6], "how": how, "why": why},
    )


def _hook_popen():
    import subprocess

    original = subprocess.Popen.__init__
    try:
        signature = inspect.signature(original)
    except (TypeError, ValueError):
        return

    def __init__(self, *args, **kwargs):
        try:
            bound = signature.bind(self, *args, **kwargs)
            a = bound.arguments
            argv = _argv(a.get("args"))
            if a.get("shell"):
                argv = ["/bin/sh", "-c"] + argv
            elif a.get("executable"):
                argv = [_text(os.fspath(a["executable"]))] + argv[1:]
            _record(argv, a.get("env"), "subprocess")
        except Exception:
            pass
        return original(self, *args, **kwargs)

    __init__.__wrapped__ = original
    subprocess.Popen.__init__ = __init__


def _hook_os():
    def wrap(name, env_at):
        original = getattr(os, name, None)
        if original is None:
            return

        def hooked(*args, **kwargs):
            try:
                env = kwargs.get("env", args[env_at] if len(args) > env_at else None)
                argv = _argv(args[1]) if len(args) > 1 else []
                _record(argv, env, name)
            except Exception:
                pass
            return original(*args, **kwargs)

        hooked.__wrapped__ = original
        setattr(os, name, hooked)

    for name in ("posix_spawn", "posix_spawnp"):
        wrap(name, 2)
    # exec replaces this measured process: its data is saved first (as
    # coverage.py's own execv patch does), and the new program is checked
    # as a started one would be.
    for name, env_at in (("execv", 9), ("execve", 2)):
        original = getattr(os, name, None)
        if original is None:
            continue

        def hooked(*args, _original=original, _name=name, _env_at=env_at, **kwargs):
            try:
                env = kwargs.get("env", args[_env_at] if len(args) > _env_at else None)
                _record(_argv(args[1]) if len(args) > 1 else [], env, _name)
                import coverage

                cov = coverage.Coverage.current()
                if cov is not None:
                    cov.save()
            except Exception:
                pass
            return _original(*args, **kwargs)

        hooked.__wrapped__ = original
        setattr(os, name, hooked)


def _wrap_save(cov):
    """Have every save of `cov` (at exit, on SIGTERM, in os._exit) leave a
    finished record once it is done."""
    if cov is None or getattr(cov, "_unguard_watched", False):
        return
    original = cov.save

    def save():
        done = original()
        _write("finished.%d" % os.getpid(), {"pid": os.getpid()})
        return done

    cov.save = save
    cov._unguard_watched = True


def _current():
    try:
        import coverage

        return coverage.Coverage.current()
    except Exception:
        return None


def install(out, site):
    """Record this process as measured, and watch what it starts; once."""
    if _STATE["out"] is not None or not out or not site:
        return
    _STATE["out"] = out
    _STATE["site"] = site
    _wrap_save(_current())
    _started()
    try:
        os.register_at_fork(after_in_child=_after_fork)
    except Exception:
        pass
    for hook in (_hook_popen, _hook_os):
        try:
            hook()
        except Exception:
            pass


def _after_fork():
    _STATE["n"] = 0
    # coverage.py's own fork patch (where it has one) restarted measurement
    # in this child: keep the running test's name on what it executes.
    cov = _current()
    try:
        test = _test()
        if cov is not None and test:
            cov.switch_context(test)
    except Exception:
        pass
    _wrap_save(cov)
    _started()
