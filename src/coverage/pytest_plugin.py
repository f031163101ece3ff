# Written by unguard (outside your checkout) for its coverage run only: loaded
# as a conftest (PYTEST_ADDOPTS --confcutdir), it names coverage.py's context
# after the running test (its JUnit id) and, at the end, writes which tests
# executed which statements of the files under $UNGUARD_COVERAGE_ROOT.
import ast
import json
import os
import sys

import pytest

_OUT = os.environ.get("UNGUARD_COVERAGE_DIR")
_ROOT = os.path.realpath(os.environ.get("UNGUARD_COVERAGE_ROOT") or os.curdir)
_TEST = "UNGUARD_COVERAGE_TEST"
_cov = None
# Files of the copy imported before measurement began: their module-level
# statements ran, unseen, before every test.
_before = set()


def _under_root(path):
    return path == _ROOT or path.startswith(_ROOT + os.sep)


def _start():
    global _cov
    if not _OUT:
        return
    try:
        import coverage
    except Exception:
        open(os.path.join(_OUT, "missing"), "w").close()
        return
    _cov = coverage.Coverage.current()
    if _cov is None:
        for m in list(sys.modules.values()):
            f = getattr(m, "__file__", None)
            if f:
                f = os.path.realpath(f)
                if _under_root(f):
                    _before.add(f)
        _cov = coverage.Coverage(
            data_file=os.path.join(_OUT, "data"),
            data_suffix=True,
            auto_data=True,
            config_file=False,
            include=[os.path.join(_ROOT, "*")],
            omit=["*/site-packages/*", "*/dist-packages/*"],
        )
        try:
            _cov.set_option("run:disable_warnings", ["no-data-collected", "module-not-measured"])
        except Exception:
            pass
        for patches in (["_exit", "fork"], ["_exit"], None):
            try:
                if patches is not None:
                    _cov.set_option("run:patch", patches)
                elif hasattr(_cov.config, "patch"):
                    _cov.set_option("run:patch", [])
                _cov.start()
                break
            except Exception:
                if patches is None:
                    raise
    # Processes the tests start are measured too (the command may have set
    # PYTHONPATH itself, hiding unguard's sitecustomize from them).
    site = os.environ.get("UNGUARD_COVERAGE_SITE")
    path = os.environ.get("PYTHONPATH", "")
    if site and site not in path.split(os.pathsep):
        os.environ["PYTHONPATH"] = site + (os.pathsep + path if path else "")
    _watch(site)


def _watch(site):
    """Record this process as measured and what it starts (the helper beside
    unguard's sitecustomize, loaded by path; sitecustomize may have already)."""
    if not site:
        return
    name = "_unguard_coverage_watch"
    try:
        watch = sys.modules.get(name)
        if watch is None:
            import importlib.util

            spec = importlib.util.spec_from_file_location(name, os.path.join(site, name + ".py"))
            watch = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(watch)
            sys.modules[name] = watch
        watch.install(_OUT, site)
    except Exception:
        pass


_start()


def _junit_id(nodeid):
    try:
        from _pytest.junitxml import mangle_test_address
    except ImportError:
        return nodeid
    names = mangle_test_address(nodeid)
    classname = ".".join(names[:-1])
    return classname + "::" + names[-1] if classname else names[-1]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if _cov is None:
        yield
        return
    test = _junit_id(item.nodeid)
    _cov.switch_context(test)
    os.environ[_TEST] = test
    try:
        yield
    finally:
        _cov.switch_context("")
        os.environ.pop(_TEST, None)


def _statements(path):
    """(first line, last line, module level) of every statement of `path`:
    a compound statement's header only (up to its body), a decorated
    definition from its first decorator."""
    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read())
    except Exception:
        return None
    found = []

    def visit(body, top):
        for st in body:
            start = st.lineno
            for d in getattr(st, "decorator_list", ()) or ():
                start = min(start, d.lineno)
            blocks = []
            for field in ("body", "orelse", "finalbody"):
                b = getattr(st, field, None)
                if isinstance(b, list) and b and isinstance(b[0], ast.stmt):
                    blocks.append(b)
            handlers = list(getattr(st, "handlers", ()) or ())
            cases = list(getattr(st, "cases", ()) or ())
            if blocks or handlers or cases:
                first = min(
                    [b[0].lineno for b in blocks]
                    + [h.lineno for h in handlers]
                    + [c.pattern.lineno for c in cases]
                )
                end = max(start, first - 1) if first > start else start
            else:
                end = getattr(st, "end_lineno", None) or start
            found.append((start, end, top))
            inner = top and not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))
            for b in blocks:
                visit(b, inner)
            for h in handlers:
                hend = max(h.lineno, h.body[0].lineno - 1) if h.body else h.lineno
                found.append((h.lineno, hend, inner))
                visit(h.body, inner)
            for c in cases:
                cend = max(c.pattern.lineno, c.body[0].lineno - 1) if c.body else c.pattern.lineno
                found.append((c.pattern.lineno, cend, inner))
                visit(c.body, inner)

    visit(tree.body, True)
    return found


def _blind_spots():
    """What the map cannot see: processes started with an environment that
    does not load unguard's coverage (recorded as they started), and measured
    processes that never saved their data (killed, or still running now)."""
    saved = set()
    started = []
    blind = []
    for name in sorted(os.listdir(_OUT)):
        path = os.path.join(_OUT, name)
        if name.startswith("finished.") and name[9:].isdigit():
            saved.add(int(name[9:]))
        elif name.startswith("started.") and not name.endswith(".tmp"):
            started.append(path)
        elif name.startswith("unmeasured.") and not name.endswith(".tmp"):
            try:
                with open(path, encoding="utf-8") as f:
                    blind.append(json.load(f))
            except Exception:
                blind.append({"test": "", "argv": [], "why": "unreadable record " + name})
    for path in started:
        try:
            with open(path, encoding="utf-8") as f:
                record = json.load(f)
        except Exception:
            continue
        if record.get("pid") in saved or record.get("pid") == os.getpid():
            continue
        blind.append(
            {
                "test": record.get("test", ""),
                "argv": record.get("argv", []),
                "why": "a measured Python process left no coverage data (killed, or still running when the suite ended)",
            }
        )
    return blind


def _write_map():
    import coverage

    blind = _blind_spots()

    combined = coverage.Coverage(data_file=os.path.join(_OUT, "data"), config_file=False)
    combined.combine(data_paths=[_OUT], keep=True)
    data = combined.get_data()
    tests = {}
    files = {}
    for measured in sorted(data.measured_files()):
        real = os.path.realpath(measured)
        if not _under_root(real):
            continue
        statements = _statements(real)
        if statements is None:
            continue
        by_line = data.contexts_by_lineno(measured)
        rows = []
        for start, end, top in statements:
            names = set()
            for line in range(start, end + 1):
                names.update(by_line.get(line, ()))
            # Import-time code (module and class level) is everyone's: a
            # test that imported the module first did not run it for itself.
            if "" in names or (top and (names or real in _before)):
                hit = "*"
            else:
                hit = sorted(tests.setdefault(n, len(tests)) for n in names)
            rows.append([start, end, hit])
        files[os.path.relpath(real, _ROOT).replace(os.sep, "/")] = rows
    order = sorted(tests, key=tests.get)
    with open(os.path.join(_OUT, "map.json.tmp"), "w", encoding="utf-8") as f:
        json.dump({"tests": order, "files": files, "blind": blind}, f)
    os.replace(os.path.join(_OUT, "map.json.tmp"), os.path.join(_OUT, "map.json"))


def pytest_unconfigure(config):
    # An xdist worker's data is saved when it exits, before the controller
    # tears its workers down and gets here.
    if _cov is None or hasattr(config, "workerinput"):
        return
    _cov.stop()
    _cov.save()
    try:
        _write_map()
    except Exception as e:
        with open(os.path.join(_OUT, "failed"), "w", encoding="utf-8") as f:
            f.write("%s: %s" % (type(e).__name__, e))
