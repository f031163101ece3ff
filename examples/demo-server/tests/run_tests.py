"""Run the suite with unittest discovery and optionally write a JUnit XML report.

    python3 tests/run_tests.py [--junit PATH] [-v] [TEST ...]

TEST ids run only those tests, in the order given: a JUnit id as the report names it
(`tests.test_auth.AuthTests::test_wrong_token_is_rejected`) or a unittest name
(`tests.test_auth.AuthTests.test_wrong_token_is_rejected`). unguard passes the tests
that can kill a mutant this way (`test.select` in unguard.yaml) before the full suite.

Exit codes: 0 all tests passed, 1 a test failed or errored (import errors included),
5 no tests ran. No timeout here: the caller (unguard, CI) enforces one.
"""

import argparse
import sys
import time
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the example directory


def describe(test):
    """(classname, name) of a test, including the placeholders unittest makes for
    modules that fail to import and for setUpClass/tearDownClass errors."""
    if isinstance(test, unittest.case._SubTest):
        test = test.test_case
    if type(test).__name__ == "_FailedTest":  # module import error during discovery
        return test._testMethodName, "import"
    if type(test).__name__ == "_ErrorHolder":  # e.g. "setUpClass (tests.test_x.Cls)"
        hook, _, where = test.description.partition(" (")
        return where.rstrip(")"), hook
    return f"{type(test).__module__}.{type(test).__qualname__}", test._testMethodName


def first_line(err):
    """One-line summary of an exception for the JUnit message attribute."""
    text = str(err[1]).strip()
    return text.splitlines()[0] if text else err[0].__name__


class RecordingResult(unittest.TextTestResult):
    """TextTestResult that also keeps one record per test for the JUnit report."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.records = {}  # (classname, name) -> record, in run order
        self.started = {}

    def record(self, test, outcome=None, err=None, message=""):
        key = describe(test)
        rec = self.records.setdefault(key, {"outcome": "passed", "time": 0.0})
        if outcome is not None and rec["outcome"] in ("passed", "skipped"):
            rec["outcome"] = outcome
            rec["message"] = message
            rec["text"] = self._exc_info_to_string(err, test) if err else message

    def startTest(self, test):
        self.started[describe(test)] = time.perf_counter()
        super().startTest(test)

    def stopTest(self, test):
        key = describe(test)
        self.record(test)
        started = self.started.pop(key, None)
        if started is not None:
            self.records[key]["time"] = time.perf_counter() - started
        super().stopTest(test)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.record(test, "failure", err, first_line(err))

    def addError(self, test, err):
        super().addError(test, err)
        self.record(test, "error", err, f"{err[0].__name__}: {first_line(err)}")

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            failed = issubclass(err[0], test.failureException)
            self.record(test, "failure" if failed else "error", err, first_line(err))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.record(test, "skipped", message=reason)

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self.record(test, "failure", message="unexpected success")


def write_junit(path, result, elapsed):
    records = result.records
    count = lambda kind: sum(1 for r in records.values() if r["outcome"] == kind)
    suites = ET.Element("testsuites")
    suite = ET.SubElement(suites, "testsuite", {
        "name": "unguard-demo-server", "tests": str(len(records)),
        "failures": str(count("failure")), "errors": str(count("error")),
        "skipped": str(count("skipped")), "time": f"{elapsed:.3f}"})
    for (classname, name), rec in records.items():
        case = ET.SubElement(suite, "testcase", {
            "classname": classname, "name": name, "time": f"{rec['time']:.3f}"})
        if rec["outcome"] != "passed":
            child = ET.SubElement(case, rec["outcome"], {"message": rec["message"]})
            if rec["outcome"] != "skipped":
                child.text = rec["text"]
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--junit", metavar="PATH", help="write a JUnit XML report here")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("tests", nargs="*", metavar="TEST", help="run only these tests")
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT))  # so "demo_server" and "tests.*" import from this copy
    loader = unittest.defaultTestLoader
    if args.tests:
        suite = loader.loadTestsFromNames([t.replace("::", ".") for t in args.tests])
    else:
        suite = loader.discover(str(ROOT / "tests"), top_level_dir=str(ROOT))
    runner = unittest.TextTestRunner(resultclass=RecordingResult,
                                     verbosity=2 if args.verbose else 1)
    started = time.perf_counter()
    result = runner.run(suite)
    if args.junit:
        write_junit(args.junit, result, time.perf_counter() - started)
    if result.testsRun == 0:
        return 5
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
