#!/usr/bin/env python3
"""scripts/test.sh's own promises (README, "Two commands" and "Tests"): its
exit status is 0 only when everything passed; a stage name that is not
release, asan, tsan or fuzz is refused with exit status 2 before anything
runs; a failing stage does not stop the later ones; the last line counts
every stage, `N passed, N failed` (a build that fails, a test that could not
run and a ctest run that fails without a failing test each count as one
failure).

The runner itself, not what it builds: a copy of scripts/test.sh runs in a
folder of its own beside stub scripts (install-deps.sh, build.sh, fuzz.sh)
and a stub `ctest` first on PATH, each doing what the case asks of it.

Usage: test_runner_test.py SOURCE_DIR"""
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

SOURCE = None
TIMEOUT = 120  # a hang guard, not a speed check

# ctest: writes the JUnit file it is asked for, one test case per word of
# STUB_CTEST_CASES (run|fail|notrun), and exits STUB_CTEST_EXIT (else 8
# when a case failed, as ctest does, else 0).
CTEST = r"""#!/usr/bin/env bash
echo "ctest $*" >>"$STUB_LOG"
junit=
while [ $# -gt 0 ]; do
  [ "$1" = --output-junit ] && junit=$2
  shift
done
status=0
{
  echo '<testsuite>'
  i=0
  for c in ${STUB_CTEST_CASES:-}; do
    i=$((i + 1))
    echo "<testcase name=\"t$i\" status=\"$c\">"
    [ "$c" = notrun ] && echo '<skipped message="Required executable not found"/>'
    echo '</testcase>'
    [ "$c" = run ] || status=8
  done
  echo '</testsuite>'
} >"$junit"
exit "${STUB_CTEST_EXIT:-$status}"
"""
INSTALL = '#!/usr/bin/env bash\necho "install-deps $*" >>"$STUB_LOG"\n'
# build.sh: makes the build folder; fails when STUB_BUILD_FAILS names it.
BUILD = r"""#!/usr/bin/env bash
echo "build $KIBITZ_BUILD_DIR" >>"$STUB_LOG"
mkdir -p "${KIBITZ_BUILD_DIR:-build}"
[[ " ${STUB_BUILD_FAILS:-} " != *" ${KIBITZ_BUILD_DIR:-build} "* ]]
"""
# fuzz.sh: one line per word of STUB_FUZZ (ok|FAILED), as scripts/fuzz.sh.
FUZZ = r"""#!/usr/bin/env bash
echo "fuzz $*" >>"$STUB_LOG"
status=0
i=0
for r in ${STUB_FUZZ:-}; do
  i=$((i + 1))
  if [ "$r" = ok ]; then echo "fuzz: target_$i ok: 10 runs"
  else echo "fuzz: target_$i FAILED"; status=1; fi
done
exit $status
"""


class Runner(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="kibitz-test-sh-")
        root = self.dir.name
        os.makedirs(os.path.join(root, "scripts"))
        os.makedirs(os.path.join(root, "bin"))
        shutil.copy(os.path.join(SOURCE, "scripts", "test.sh"), os.path.join(root, "scripts"))
        for path, text in (("bin/ctest", CTEST), ("scripts/install-deps.sh", INSTALL),
                           ("scripts/build.sh", BUILD), ("scripts/fuzz.sh", FUZZ)):
            full = os.path.join(root, path)
            with open(full, "w") as f:
                f.write(text)
            os.chmod(full, os.stat(full).st_mode | stat.S_IXUSR)
        self.log = os.path.join(root, "stub.log")

    def tearDown(self):
        self.dir.cleanup()

    def run_sh(self, **env):
        """(the run, the stubs' calls in order)."""
        if os.path.exists(self.log):
            os.remove(self.log)
        full = {k: v for k, v in os.environ.items() if not k.startswith(("KIBITZ_", "STUB_"))}
        full.update(env, STUB_LOG=self.log,
                    PATH=os.path.join(self.dir.name, "bin") + os.pathsep + os.environ["PATH"])
        p = subprocess.run(["bash", os.path.join(self.dir.name, "scripts", "test.sh")],
                           capture_output=True, text=True, timeout=TIMEOUT, env=full)
        calls = []
        if os.path.exists(self.log):
            with open(self.log) as f:
                calls = f.read().splitlines()
        return p, calls

    def last_line(self, p):
        return p.stdout.strip().splitlines()[-1]

    def test_everything_passed_is_exit_0(self):
        p, calls = self.run_sh(KIBITZ_TEST_STAGES="release", STUB_CTEST_CASES="run run run")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(self.last_line(p), "3 passed, 0 failed")
        self.assertEqual(calls[0], "install-deps --test")
        self.assertIn("build build-test", calls)
        self.assertEqual(len([c for c in calls if c.startswith("ctest ")]), 1, calls)
        # And with the fuzz stage beside it: every target ok.
        p, _ = self.run_sh(KIBITZ_TEST_STAGES="release,fuzz", STUB_CTEST_CASES="run",
                           STUB_FUZZ="ok ok")
        self.assertEqual((p.returncode, self.last_line(p)), (0, "3 passed, 0 failed"), p.stdout)

    def test_anything_that_did_not_pass_is_a_failure(self):
        cases = {
            "a failing test": dict(STUB_CTEST_CASES="run fail run"),
            "a test that could not run": dict(STUB_CTEST_CASES="run notrun"),
            "a ctest run that failed with no failing test": dict(STUB_CTEST_CASES="run",
                                                                 STUB_CTEST_EXIT="8"),
            "no test at all (ctest --no-tests=error)": dict(STUB_CTEST_CASES="",
                                                           STUB_CTEST_EXIT="8"),
            "the build": dict(STUB_CTEST_CASES="run", STUB_BUILD_FAILS="build-test"),
        }
        for what, env in cases.items():
            p, calls = self.run_sh(KIBITZ_TEST_STAGES="release", **env)
            self.assertNotEqual(p.returncode, 0, (what, p.stdout))
            passed, failed = self.last_line(p).replace(",", "").split()[::2]
            self.assertGreaterEqual(int(failed), 1, (what, p.stdout))
        # A stage that failed does not stop the later ones.
        p, calls = self.run_sh(KIBITZ_TEST_STAGES="release,fuzz", STUB_BUILD_FAILS="build-test",
                               STUB_FUZZ="ok ok")
        self.assertNotEqual(p.returncode, 0, p.stdout)
        # (10: the fuzz stage's default seconds a target, KIBITZ_FUZZ_SECONDS)
        self.assertIn("fuzz 10", calls)
        self.assertEqual(self.last_line(p), "2 passed, 1 failed")
        # A failing fuzz target after a release stage that passed.
        p, _ = self.run_sh(KIBITZ_TEST_STAGES="release,fuzz", STUB_CTEST_CASES="run run",
                           STUB_FUZZ="ok FAILED")
        self.assertNotEqual(p.returncode, 0, p.stdout)
        self.assertEqual(self.last_line(p), "3 passed, 1 failed")

    def test_a_mistyped_stage_is_exit_2_before_anything_runs(self):
        for stages in ("relase", "release,tsna", "release,,fuzz", "ASAN"):
            p, calls = self.run_sh(KIBITZ_TEST_STAGES=stages, STUB_CTEST_CASES="run")
            self.assertEqual(p.returncode, 2, (stages, p.stdout, p.stderr))
            self.assertEqual(calls, [], stages)  # nothing installed, built or run
            self.assertEqual(p.stdout, "", stages)
            self.assertIn("unknown stage", p.stderr)


if __name__ == "__main__":
    SOURCE = sys.argv[1]
    del sys.argv[1]
    unittest.main(verbosity=2)
