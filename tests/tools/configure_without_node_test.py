#!/usr/bin/env python3
"""The README's promise on configuring the tests (Development, "Building by
hand"): they need node and npm at configure time, and without them
configuring fails, naming what is missing; KIBITZ_ALLOW_MISSING_NODE
configures all the same, leaving out the tests that need them, with a
warning.

node and npm are hidden from CMake's search (CMAKE_IGNORE_PATH, their
folders), in a configure of the source into a temporary folder; what else
the configure needs from those folders is named to it.

Usage: configure_without_node_test.py SOURCE_DIR CMAKE CXX_COMPILER MAKE_PROGRAM"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE = CMAKE = CXX = MAKE = None
TIMEOUT = 300  # a hang guard, not a speed check
NODE_TESTS = ["tools.match", "server.extreme_positions", "server.http", "web.unit",
              "web.browser", "proto.contract"]


def configure(build, *extra):
    # Every folder of PATH, and of CMake's own system folders, with a node or
    # an npm in it (/bin beside /usr/bin where one links to the other).
    folders = os.environ.get("PATH", "").split(os.pathsep) + [
        "/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"]
    hidden = sorted({f for f in folders if f and any(
        os.path.exists(os.path.join(f, p)) for p in ("node", "npm"))})
    args = [CMAKE, "-S", SOURCE, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
            "-DCMAKE_CXX_COMPILER=" + CXX, "-DCMAKE_MAKE_PROGRAM=" + MAKE,
            "-DPKG_CONFIG_EXECUTABLE=" + shutil.which("pkg-config"),
            "-DPython3_EXECUTABLE=" + sys.executable,
            "-DCMAKE_IGNORE_PATH=" + ";".join(hidden), *extra]
    if os.path.basename(MAKE).startswith("ninja"):
        args += ["-G", "Ninja"]
    env = {k: v for k, v in os.environ.items() if k not in ("CXX", "CC")}
    return subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT, env=env)


def flat(text):
    return re.sub(r"\s+", " ", text)


class ConfigureWithoutNode(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="kibitz-configure-")

    def tearDown(self):
        self.dir.cleanup()

    def test_without_node_and_npm_configuring_fails_naming_them(self):
        p = configure(self.dir.name)
        self.assertNotEqual(p.returncode, 0, p.stdout)
        err = flat(p.stderr)
        self.assertIn("node and npm not found, and the tests " + ", ".join(NODE_TESTS) +
                      " need them.", err)
        self.assertIn("-DKIBITZ_ALLOW_MISSING_NODE=ON", err)

    def test_without_node_alone_it_names_node(self):
        p = configure(self.dir.name, "-DKIBITZ_NPM=" + shutil.which("npm"))
        self.assertNotEqual(p.returncode, 0, p.stdout)
        self.assertIn("CMake Error", p.stderr)
        self.assertIn(" node not found, and the tests ", flat(p.stderr))

    def test_allow_missing_node_leaves_those_tests_out(self):
        p = configure(self.dir.name, "-DKIBITZ_ALLOW_MISSING_NODE=ON")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("node and npm not found: KIBITZ_ALLOW_MISSING_NODE leaves out " +
                      ", ".join(NODE_TESTS), flat(p.stderr))
        listed = subprocess.run([os.path.join(os.path.dirname(CMAKE), "ctest"), "--test-dir",
                                 self.dir.name, "-N"], capture_output=True, text=True,
                                timeout=TIMEOUT)
        names = set(re.findall(r"Test +#\d+: (\S+)", listed.stdout))
        self.assertIn("cli.commands", names, listed.stdout)
        self.assertFalse(names & set(NODE_TESTS), names & set(NODE_TESTS))


if __name__ == "__main__":
    SOURCE, CMAKE, CXX, MAKE = sys.argv[1:5]
    del sys.argv[1:5]
    unittest.main(verbosity=2)
