# unguard's warm Python interpreter (one per worker and test command); see src/run/warm/mod.rs.
#
# Started as `PYTHON [the command's interpreter options] -c <this file> SOCKET ENTRY ROOTS`,
# in the command's working directory, with the command's environment. It imports nothing of
# the project; on request it imports the third-party modules a run of the suite recorded, and
# forks itself for every run: the child joins the run's process group (and cgroup), takes the
# run's stdin/stdout/stderr, environment, working directory and argv, and runs the entry
# (`-m MODULE` or a script) as `python` would; its exit status goes back to the client.
import json
import os
import select
import signal
import socket
import sys

SERVER_MAIN = sys.modules["__main__"]
SOCKET_PATH, ENTRY, ROOTS = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
# The environment unguard started this interpreter with; what a wrapper on the way (a pyenv
# shim, say) changed in it is changed in every run's environment the same way.
GIVEN = json.loads(sys.argv[4])
# What a fresh `python -m M` (the working directory) or `python SCRIPT` (the script's
# directory) puts first on sys.path; nothing under -P / PYTHONSAFEPATH.
if not getattr(sys.flags, "safe_path", False):
    if ENTRY["kind"] == "module":
        sys.path[0] = os.getcwd()
    else:
        sys.path[0] = os.path.dirname(os.path.realpath(ENTRY["path"]))
elif sys.path and sys.path[0] == "":
    del sys.path[0]
sys.argv = [""]
WRAPPER_SET = {
    k: v for k, v in os.environ.items() if GIVEN.get(k) != v and not k.startswith("UNGUARD_")
}
WRAPPER_UNSET = [k for k in GIVEN if k not in os.environ]
# Variables the interpreter reads once at start-up: a run whose value differs is not forked.
STARTUP_VARS = ("PYTHON", "HOME", "VIRTUAL_ENV", "LC_", "LANG", "PATH")


_REAL = {}


def _real(path):
    real = _REAL.get(path)
    if real is None:
        try:
            real = os.path.realpath(path)
        except (OSError, ValueError):
            real = path
        _REAL[path] = real
    return real


PROJECT = [_real(r) for r in ROOTS]
PROTECTED = ("site-packages", "dist-packages")


def _project_file(path):
    """A file of the project (under a copy or the checkout, not in an installed-packages dir)."""
    if not path:
        return False
    real = _real(path)
    for root in PROJECT:
        if real == root or real.startswith(root.rstrip("/") + "/"):
            rest = real[len(root):].split("/")
            return not any(p in PROTECTED for p in rest)
    return False


def _module_files(mod):
    files = []
    f = getattr(mod, "__file__", None)
    if isinstance(f, str):
        files.append(f)
    for p in list(getattr(mod, "__path__", None) or []):
        if isinstance(p, str):
            files.append(p)
    return files


def _own_modules(names):
    """Those of the loaded modules `names` that are the project's own."""
    out = []
    for name in names:
        mod = sys.modules.get(name)
        if mod is not None and any(_project_file(f) for f in _module_files(mod)):
            out.append(name)
    return out


def _threads():
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        import threading

        return threading.active_count()


def _sockets(own):
    out = []
    try:
        for fd in os.listdir("/proc/self/fd"):
            try:
                if int(fd) in own:
                    continue
                if os.readlink("/proc/self/fd/" + fd).startswith("socket:"):
                    out.append(int(fd))
            except (OSError, ValueError):
                pass
    except OSError:
        pass
    return out


def _own_cgroup():
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                if line.startswith("0::"):
                    return line[3:].rstrip("\n")
    except OSError:
        pass
    return None


def _children():
    """(pid, zombie) of every child of this process."""
    me = str(os.getpid())
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1 and fields[1] == me:
            out.append((int(name), fields[0] == "Z"))
    return out


def _kill_children():
    """Kill and reap every child of this (subreaper) process: between runs it has none."""
    killed = 0
    for _ in range(50):
        kids = _children()
        if not kids:
            break
        for kid, zombie in kids:
            if zombie:
                continue
            try:
                os.kill(kid, signal.SIGKILL)
                killed += 1
            except OSError:
                pass
        for kid, _ in kids:
            try:
                os.waitpid(kid, 0)
            except OSError:
                pass
    return killed


def _become_subreaper():
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except Exception:  # noqa: BLE001 - without it, orphans go to the worker's supervisor
        pass


def _send(conn, obj):
    try:
        conn.sendall((json.dumps(obj) + "\n").encode())
    except OSError:
        pass


def _plugin_packages():
    """Top-level names of the distributions that register pytest plugins: pytest rewrites
    their asserts as it imports them, so they are left to the run to import."""
    tops = set()
    try:
        from importlib import metadata

        for dist in metadata.distributions():
            if not any(ep.group == "pytest11" for ep in dist.entry_points):
                continue
            for f in dist.files or []:
                first = f.parts[0] if f.parts else ""
                name = first[:-3] if first.endswith(".py") else first
                if name.isidentifier():
                    tops.add(name)
    except Exception:  # noqa: BLE001 - without metadata, nothing is known to be a plugin
        pass
    return tops


# Files of the project opened while the preload runs (an import that reads a data file of
# the project would hold its unmutated contents in every fork). The hook stays installed
# (audit hooks cannot be removed) but records nothing outside the preload.
_OPENED = {"on": False, "inside": False, "files": []}


def _audit(event, args):
    if not _OPENED["on"] or _OPENED["inside"] or event != "open" or not args:
        return
    _OPENED["inside"] = True
    try:
        path = args[0]
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        # Package metadata (an editable install's `*.egg-info`) is not the project's code or data.
        if (
            isinstance(path, str)
            and ".egg-info" not in path
            and ".dist-info" not in path
            and _project_file(os.path.abspath(path))
        ):
            _OPENED["files"].append(path)
    finally:
        _OPENED["inside"] = False


def _preload(names, own_fds):
    """Import `names` in order; stop at the first import that leaves a thread or a socket
    behind, pulls in a module of the project, or opens a file of the project."""
    import importlib

    plugins = _plugin_packages()
    sys.addaudithook(_audit)
    _OPENED["on"] = True
    try:
        return _import_each(names, own_fds, importlib, plugins)
    finally:
        _OPENED["on"] = False


def _import_each(names, own_fds, importlib, plugins):
    loaded, failed = 0, 0
    for name in names:
        if name in sys.modules or name.split(".")[0] in plugins:
            continue
        before = set(sys.modules)
        try:
            importlib.import_module(name)
            loaded += 1
        except BaseException:  # noqa: BLE001 - a module that fails here is simply not warm
            failed += 1
            sys.modules.pop(name, None)
        if _threads() > 1:
            return {"unsafe": "importing `%s` started a thread" % name}
        if _sockets(own_fds):
            return {"unsafe": "importing `%s` opened a socket" % name}
        own = _own_modules(set(sys.modules) - before)
        if own:
            return {"unsafe": "importing `%s` imported the project's own `%s`" % (name, own[0])}
        if _OPENED["files"]:
            return {"unsafe": "importing `%s` read the project's `%s`" % (name, _OPENED["files"][0])}
    return {"preloaded": loaded, "failed": failed}


def _record(path):
    names = []
    for name, mod in list(sys.modules.items()):
        if mod is None or name == "__main__" or name.startswith("__"):
            continue
        files = _module_files(mod)
        if not files or any(_project_file(f) for f in files):
            continue
        # What pytest's assertion rewriter loaded (plugins) must be loaded by it again.
        if type(getattr(mod, "__loader__", None)).__name__ == "AssertionRewritingHook":
            continue
        names.append(name)
    try:
        with open(path, "w") as f:
            f.write("\n".join(names) + "\n")
    except OSError:
        pass


def _exit_code(e):
    code = e.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        sys.stderr.write(str(code) + "\n")
    except Exception:  # noqa: BLE001
        pass
    return 1


def _child(req, fds, ready_w, closing):
    """In the forked child: become the run's process, run the entry, exit as python would."""
    try:
        os.setpgid(0, req["pgid"])
    except OSError as e:
        os.write(ready_w, ("cannot join the run's process group: %s" % e).encode())
        os._exit(111)
    if req.get("cgroup") and req.get("cgroup_rel") != _own_cgroup():
        try:
            with open(os.path.join(req["cgroup"], "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
        except OSError as e:
            os.write(ready_w, ("cannot join the run's cgroup: %s" % e).encode())
            os._exit(111)
    os.write(ready_w, b"ok")
    os.close(ready_w)
    for target, fd in enumerate(fds[:3]):
        os.dup2(fd, target)
    for fd in set(fds) | set(closing):
        if fd > 2:
            try:
                os.close(fd)
            except OSError:
                pass
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    os.environ.update(WRAPPER_SET)
    for key in WRAPPER_UNSET:
        os.environ.pop(key, None)
    # Python's own streams were built on the server's descriptors 0-2, which now are the run's.
    import importlib
    import runpy
    import types

    importlib.invalidate_caches()
    # A `__main__` of its own, as a fresh interpreter has (not the server's globals).
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = __builtins__
    sys.modules["__main__"] = main
    code = 0
    try:
        if ENTRY["kind"] == "module":
            sys.argv = ["-m"] + req["args"]
            runpy._run_module_as_main(ENTRY["module"], alter_argv=True)
        else:
            sys.argv = [ENTRY["path"]] + req["args"]
            runpy.run_path(ENTRY["path"], run_name="__main__")
    except SystemExit as e:
        code = _exit_code(e)
    except KeyboardInterrupt:
        sys.excepthook(*sys.exc_info())
        code = -signal.SIGINT
    except BaseException:  # noqa: BLE001 - as the interpreter does: print it, exit 1
        sys.excepthook(*sys.exc_info())
        code = 1
    try:
        import threading

        threading._shutdown()
    except BaseException:  # noqa: BLE001
        pass
    try:
        import atexit

        atexit._run_exitfuncs()
    except BaseException:  # noqa: BLE001
        pass
    if req.get("record"):
        _record(req["record"])
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001
            pass
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        code = 128 - code
    os._exit(code)


def _recv_request(conn):
    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 8)
    buf = bytearray(data)
    if len(buf) < 4:
        buf += conn.recv(4 - len(buf), socket.MSG_WAITALL)
    size = int.from_bytes(buf[:4], "big")
    while len(buf) < 4 + size:
        more = conn.recv(4 + size - len(buf))
        if not more:
            raise EOFError("short request")
        buf += more
    return json.loads(bytes(buf[4 : 4 + size])), fds


def _differs(env):
    for key in set(env) | set(GIVEN):
        if key.startswith(STARTUP_VARS) and env.get(key) != GIVEN.get(key):
            return key
    return None


def _serve_run(conn, listener, req, fds):
    key = _differs(req["env"])
    if key is not None:
        _send(conn, {"refused": "`%s` differs from the warm interpreter's" % key})
        return
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        _child(req, fds, ready_w, [conn.fileno(), listener.fileno(), ready_r])
    os.close(ready_w)
    for fd in fds:
        os.close(fd)
    said = b""
    while True:
        chunk = os.read(ready_r, 512)
        if not chunk:
            break
        said += chunk
    os.close(ready_r)
    if said != b"ok":
        os.waitpid(pid, 0)
        _send(conn, {"refused": said.decode(errors="replace") or "the fork died before it ran"})
        return
    _send(conn, {"started": pid})
    pidfd = os.pidfd_open(pid) if hasattr(os, "pidfd_open") else None
    while True:
        watch = [conn] + ([pidfd] if pidfd is not None else [])
        ready, _, _ = select.select(watch, [], [], None if pidfd is not None else 0.02)
        if conn in ready:
            try:
                gone = conn.recv(1, socket.MSG_PEEK) == b""
            except OSError:
                gone = True
            if gone:
                # The client is gone (its run was killed): so is the run.
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
                os.waitpid(pid, 0)
                _kill_children()
                break
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            # What the run left (reparented here) goes before the run ends, as under its supervisor.
            left = _kill_children()
            if os.WIFSIGNALED(status):
                _send(conn, {"signal": os.WTERMSIG(status), "left": left})
            else:
                _send(conn, {"exit": os.WEXITSTATUS(status), "left": left})
            break
    if pidfd is not None:
        os.close(pidfd)


def main():
    _become_subreaper()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(SOCKET_PATH)
    listener.listen(4)
    # Ready: one line on stdout, which unguard reads, then stdout is /dev/null.
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        conn, _ = listener.accept()
        try:
            req, fds = _recv_request(conn)
        except (OSError, EOFError, ValueError) as e:
            _send(conn, {"refused": "bad request: %s" % e})
            conn.close()
            continue
        if req.get("op") == "preload":
            for fd in fds:
                os.close(fd)
            own = {conn.fileno(), listener.fileno()}
            _send(conn, _preload(req["names"], own))
        else:
            _serve_run(conn, listener, req, fds)
        conn.close()


main()
