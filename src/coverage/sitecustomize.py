# Written by unguard (outside your checkout) for its coverage run only: it is
# on PYTHONPATH there and nowhere else. It measures this Python process (the
# test runner, or a process a test started) with coverage.py, under the test
# that was running when the process started, then hands over to any other
# sitecustomize module on the path.
import os
import sys


def _unguard_measure():
    out = os.environ.get("UNGUARD_COVERAGE_DIR")
    root = os.environ.get("UNGUARD_COVERAGE_ROOT")
    if not out or not root:
        return
    try:
        import coverage
    except Exception:
        try:
            open(os.path.join(out, "missing"), "w").close()
        except OSError:
            pass
        return
    if coverage.Coverage.current() is not None:
        return
    cov = coverage.Coverage(
        data_file=os.path.join(out, "data"),
        data_suffix=True,
        auto_data=True,
        config_file=False,
        include=[os.path.join(os.path.realpath(root), "*")],
        omit=["*/site-packages/*", "*/dist-packages/*"],
    )
    try:
        cov.set_option("run:sigterm", True)
    except Exception:
        pass
    try:
        cov.set_option("run:disable_warnings", ["no-data-collected", "module-not-measured", "module-not-imported"])
    except Exception:
        pass
    _unguard_start(cov)
    test = os.environ.get("UNGUARD_COVERAGE_TEST")
    if test:
        cov.switch_context(test)
    _unguard_watch(out)


def _unguard_watch(out):
    """Record this process as measured, and what it starts (see
    _unguard_coverage_watch.py beside this file)."""
    import importlib.util

    site = os.environ.get("UNGUARD_COVERAGE_SITE") or os.path.dirname(os.path.abspath(__file__))
    name = "_unguard_coverage_watch"
    watch = sys.modules.get(name)
    if watch is None:
        spec = importlib.util.spec_from_file_location(name, os.path.join(site, name + ".py"))
        watch = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(watch)
        sys.modules[name] = watch
    watch.install(out, site)


def _unguard_start(cov):
    """Start `cov` with coverage.py's own patches where the installed version
    has them (a process ending in os._exit saves its data, a forked child is
    measured); without those it cannot have."""
    for patches in (["_exit", "fork"], ["_exit"], None):
        try:
            if patches is not None:
                cov.set_option("run:patch", patches)
            elif hasattr(cov.config, "patch"):
                cov.set_option("run:patch", [])
            cov.start()
            return
        except Exception:
            if patches is None:
                raise


def _unguard_hand_over():
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


try:
    _unguard_measure()
except Exception:
    pass
_unguard_hand_over()
