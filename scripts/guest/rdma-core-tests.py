#!/usr/bin/env python3
# rdma-core-tests.py --tests <src>/tests --dev <ibdev> --out <file> [--filter <glob>]...
#   [--exclude <glob>]...
#   [--timeout <s>] [--list]
# Runs rdma-core's own Python tests (tests/ of its source, what its run_tests.py runs) on
# one device and writes one JSON object per test to --out (JSON lines), for
# `rdma-interop rdma-core-tests` (src/rdma-core-tests/): id, outcome (pass, fail, error,
# skip), reason (rdma-core's own skip reason), message (the failure's last lines) and
# seconds, after a first line {"environment": {kernel, device, python, tests}}. The tests load as run_tests.py loads them (tests/__init__.py through
# SourceFileLoader, the device through their args_parser), so the ids are unittest's
# (`tests.test_qp.QPTest.test_create_rc_qp`). A test that runs longer than --timeout
# seconds is stopped with SIGALRM and recorded as an error. Needs pyverbs on PYTHONPATH.
import argparse
import fnmatch
import json
import os
import signal
import sys
import time
import traceback
import unittest
from importlib.machinery import SourceFileLoader


class TestTimeout(Exception):
    pass


def on_alarm(_signum, _frame):
    raise TestTimeout('no result within the per-test time-out')


def flatten(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from flatten(t)
        else:
            yield t


def last_lines(text, n=12):
    lines = text.rstrip('\n').split('\n')
    return '\n'.join(lines[-n:])


class JsonResult(unittest.TestResult):
    """Collects one outcome per test; a failing subtest fails its test."""

    def __init__(self):
        super().__init__()
        self.outcome = None
        self.reason = None
        self.message = None

    def _set(self, outcome, message=None, reason=None):
        # The first failure wins; a later pass never hides it.
        if self.outcome in ('fail', 'error'):
            return
        self.outcome, self.message, self.reason = outcome, message, reason

    def addSuccess(self, test):
        if self.outcome is None:
            self.outcome = 'pass'

    def addFailure(self, test, err):
        self._set('fail', last_lines(self._exc_info_to_string(err, test)))

    def addError(self, test, err):
        self._set('error', last_lines(self._exc_info_to_string(err, test)))

    def addSkip(self, test, reason):
        self._set('skip', reason=str(reason))

    def addExpectedFailure(self, test, err):
        self._set('pass')

    def addUnexpectedSuccess(self, test):
        self._set('fail', 'unexpected success')

    def addSubTest(self, test, subtest, err):
        if err is None:
            return
        if issubclass(err[0], test.failureException):
            self._set('fail', last_lines(self._exc_info_to_string(err, subtest)))
        else:
            self._set('error', last_lines(self._exc_info_to_string(err, subtest)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--tests', required=True, help="rdma-core's tests/ directory")
    ap.add_argument('--dev', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--filter', action='append', default=[])
    ap.add_argument('--exclude', action='append', default=[])
    ap.add_argument('--timeout', type=int, default=120)
    ap.add_argument('--list', action='store_true')
    args = ap.parse_args()

    tests_dir = os.path.abspath(args.tests)
    sys.path.insert(0, tests_dir)
    # The tests read their device from their own parser (args_parser.py), as run_tests.py.
    from args_parser import parser
    sys.argv = [sys.argv[0], '--dev', args.dev]
    parser.parse_args()
    tests = SourceFileLoader('tests', os.path.join(tests_dir, '__init__.py')).load_module()
    loader = unittest.TestLoader()
    all_tests = list(flatten(loader.loadTestsFromModule(tests)))
    # A module that fails to import is a _FailedTest of unittest: it runs as an error.
    chosen = [t for t in all_tests
              if (not args.filter or any(fnmatch.fnmatchcase(t.id(), f) for f in args.filter))
              and not any(fnmatch.fnmatchcase(t.id(), x) for x in args.exclude)]
    signal.signal(signal.SIGALRM, on_alarm)
    with open(args.out, 'w', encoding='utf-8') as out:
        # The first line: where it ran (the kernel decides which records hold).
        out.write(json.dumps({'environment': {
            'kernel': os.uname().release, 'device': args.dev,
            'python': sys.version.split()[0], 'tests': len(chosen)}}) + '\n')
        for t in chosen:
            if args.list:
                out.write(json.dumps({'id': t.id()}) + '\n')
                continue
            result = JsonResult()
            started = time.monotonic()
            signal.alarm(args.timeout)
            try:
                t.run(result)
            except TestTimeout:
                result._set('error', f'time-out after {args.timeout} s')
            finally:
                signal.alarm(0)
            seconds = round(time.monotonic() - started, 3)
            if result.outcome is None:
                result.outcome = 'error'
                result.message = 'the test reported no outcome'
            record = {'id': t.id(), 'outcome': result.outcome, 'seconds': seconds}
            if result.reason is not None:
                record['reason'] = result.reason
            if result.message is not None:
                record['message'] = result.message
            out.write(json.dumps(record) + '\n')
            out.flush()
            print(f'{result.outcome} {t.id()} ({seconds} s)', file=sys.stderr, flush=True)
    return 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    except Exception:  # the runner itself failed: say so on stderr, exit 2
        traceback.print_exc()
        sys.exit(2)
