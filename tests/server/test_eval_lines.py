"""The evaluation library in the line format of Lichess's evaluation
database, and GET /api/cloud-eval in the shape of Lichess's API:

- `kibitz library import` of tests/data/lichess/evals-sample.jsonl (20
  positions written in the database's format: several evals a position,
  cp and mate scores, both sides to move, castling written king takes rook)
  then `kibitz library export` gives back the same lines, byte for byte;
- a file with a bad line (not JSON, an illegal move, a score missing, two
  scores, a bad FEN, no evals) is refused whole: exit status 2, the line's
  number on stderr, and the library exactly as before;
- a server on that library answers GET /api/cloud-eval for every position
  (with the database's counters or others, multiPv 1..3) with the deepest
  eval that has the lines asked (of equally deep ones, the fewest lines), as Lichess's schema CloudEval (copied in
  tests/data/lichess) validates, and 404 with Lichess's body when it has
  none (an unknown position, another variant, more lines than kept);
- the route is documented in proto/openapi.yaml and its answers fit there;
- `export` leaves out Chess960 analyses (the database is of standard chess).
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest
import urllib.parse

import jsonschema
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from kibitz_server import KIBITZ, Schemas, Server  # noqa: E402

DATA = os.path.join(ROOT, "tests", "data", "lichess")
SAMPLE = os.path.join(DATA, "evals-sample.jsonl")
SCHEMAS = Schemas()
NOT_FOUND = {"error": "No cloud evaluation available for that position"}


def lichess_schema(name):
    with open(os.path.join(DATA, name)) as f:
        schema = yaml.safe_load(f)
    schema.pop("example", None)
    return jsonschema.Draft202012Validator(schema)


CLOUD_EVAL = lichess_schema("CloudEval.yaml")
with open(os.path.join(DATA, "api-cloud-eval.yaml")) as f:
    _op = yaml.safe_load(f)["get"]
NOT_FOUND_SCHEMA = jsonschema.Draft202012Validator(
    _op["responses"]["404"]["content"]["application/json"]["schema"])


def library(args, store, stdin=None):
    env = dict(os.environ, KIBITZ_STORE_PATH=store)
    return subprocess.run([KIBITZ, "library", *args], env=env, capture_output=True, text=True,
                          timeout=120, input=stdin)


class EvalLinesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="kibitz-evals-")
        cls.store = os.path.join(cls.dir, "kibitz.db")
        with open(SAMPLE) as f:
            cls.sample = f.read()
        cls.lines = [json.loads(line) for line in cls.sample.splitlines()]
        r = library(["import", SAMPLE], cls.store)
        assert r.returncode == 0, r.stderr
        assert "20 positions" in r.stderr, r.stderr

    def export(self):
        r = library(["export"], self.store)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_round_trip(self):
        self.assertEqual(len(self.lines), 20)
        out = self.export()
        self.assertEqual(out, self.sample)
        # To a file too, and the same again after a second import of it.
        path = os.path.join(self.dir, "again.jsonl")
        r = library(["export", "--output", path], self.store)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(path) as f:
            self.assertEqual(f.read(), self.sample)
        self.assertEqual(library(["import", path], self.store).returncode, 0)
        self.assertEqual(self.export(), self.sample)

    def test_bad_lines_import_nothing(self):
        before = self.export()
        good = self.sample.splitlines()
        start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"
        one = {"fen": start, "evals": [{"pvs": [{"cp": 20, "line": "e2e4"}], "knodes": 1,
                                        "depth": 30}]}
        bad = {
            "not JSON": "{\"fen\": ",
            "illegal": json.dumps({**one, "evals": [{**one["evals"][0],
                                                     "pvs": [{"cp": 1, "line": "e2e5"}]}]}),
            "no score": json.dumps({**one, "evals": [{**one["evals"][0],
                                                      "pvs": [{"line": "e2e4"}]}]}),
            "two scores": json.dumps({**one, "evals": [{**one["evals"][0],
                                                        "pvs": [{"cp": 1, "mate": 2,
                                                                 "line": "e2e4"}]}]}),
            "bad fen": json.dumps({**one, "fen": "8/8/8 w - -"}),
            "no evals": json.dumps({"fen": start, "evals": []}),
            "san": json.dumps({**one, "evals": [{**one["evals"][0],
                                                 "pvs": [{"cp": 1, "line": "e4"}]}]}),
        }
        for why, line in bad.items():
            text = "\n".join(good[:2] + [json.dumps(one), line] + good[2:]) + "\n"
            path = os.path.join(self.dir, "bad.jsonl")
            with open(path, "w") as f:
                f.write(text)
            r = library(["import", path], self.store)
            self.assertEqual(r.returncode, 2, (why, r.stderr))
            self.assertIn("line 4", r.stderr, why)
            self.assertIn("nothing was imported", r.stderr, why)
            self.assertEqual(self.export(), before, why)

    def test_imported_analyses_are_named_imported(self):
        # Another program made them: their engine's eval says "imported",
        # not the network this server evaluates with.
        line = self.lines[0]
        with Server(env={"KIBITZ_STORE_PATH": self.store}) as s:
            status, _, got = s.get("/v1/evals?" + urllib.parse.urlencode(
                {"game": "chess", "fen": line["fen"] + " 0 1"}))
            self.assertEqual(status, 200, got)
            self.assertEqual((got["source"], got["engine"]["eval"]), ("library", "imported"))
            status, _, info = s.get("/v1/info")
            self.assertNotEqual(info["engine"]["eval"], "imported")

    def test_export_leaves_chess960_out(self):
        # The database is of standard chess: a Chess960 analysis in the
        # library (keyed apart) is not exported as if it were standard, and
        # a standard one made the same way is.
        store = os.path.join(self.dir, "chess960.db")
        env = {"KIBITZ_STORE_PATH": store, "KIBITZ_STORE_LIBRARY_MIN_DEPTH": "4"}
        chess960 = "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1"
        standard = "8/8/8/4k3/8/8/3QK3/8 w - - 0 1"
        with Server(env=env) as s:
            for body in ({"fen": chess960, "variant": "chess960", "limits": {"depth": 6}},
                         {"fen": standard, "limits": {"depth": 6}}):
                status, _, r = s.post("/v1/analyze", body)
                self.assertEqual(status, 200, r)
            # Both are in the library: asked again, each comes from it.
            for body in ({"fen": chess960, "variant": "chess960", "limits": {"depth": 5}},
                         {"fen": standard, "limits": {"depth": 5}}):
                status, _, r = s.post("/v1/analyze", body)
                self.assertEqual((status, r.get("source")), (200, "library"), r)
        r = library(["export"], store)
        self.assertEqual(r.returncode, 0, r.stderr)
        fens = [json.loads(line)["fen"] for line in r.stdout.splitlines()]
        self.assertEqual(fens, [" ".join(standard.split()[:4])], r.stdout)

    def test_cloud_eval(self):
        with Server(env={"KIBITZ_STORE_PATH": self.store}) as s:
            def ask(fen, multipv=None, variant=None):
                q = {"fen": fen}
                if multipv is not None:
                    q["multiPv"] = multipv
                if variant is not None:
                    q["variant"] = variant
                status, headers, body = s.get("/api/cloud-eval?" + urllib.parse.urlencode(q))
                SCHEMAS.check_http("/api/cloud-eval", "get", status, body)
                return status, body

            answered = 0
            for line in self.lines:
                evals = line["evals"]
                for fen in (line["fen"] + " 0 1", line["fen"] + " 7 31", line["fen"]):
                    for multipv in (None, 1, 2, 3):
                        n = multipv or 1
                        having = [e for e in evals if len(e["pvs"]) >= n]
                        status, body = ask(fen, multipv)
                        if not having:
                            self.assertEqual((status, body), (404, NOT_FOUND), (fen, n))
                            NOT_FOUND_SCHEMA.validate(body)
                            continue
                        self.assertEqual(status, 200, (fen, n, body))
                        CLOUD_EVAL.validate(body)
                        # The deepest; of equally deep ones, the one with fewest lines.
                        best = max(having, key=lambda e: (e["depth"], -len(e["pvs"])))
                        self.assertEqual(body["depth"], best["depth"])
                        self.assertEqual(body["knodes"], best["knodes"])
                        self.assertTrue(body["fen"].startswith(line["fen"] + " "))
                        want = [{"moves": pv["line"], **{k: v for k, v in pv.items()
                                                         if k in ("cp", "mate")}}
                                for pv in best["pvs"][:n]]
                        self.assertEqual(body["pvs"], want, (fen, n))
                        answered += 1
            self.assertGreater(answered, 100)

            unknown = "8/8/8/4k3/8/8/3QK3/8 w - - 0 1"
            self.assertEqual(ask(unknown), (404, NOT_FOUND))
            for variant in ("atomic", "chess960", "crazyhouse"):
                self.assertEqual(ask(self.lines[0]["fen"] + " 0 1", variant=variant),
                                 (404, NOT_FOUND))
            self.assertEqual(ask(self.lines[0]["fen"] + " 0 1", variant="standard")[0], 200)
            status, body = ask("not a fen")
            self.assertEqual(status, 400)
            self.assertIsInstance(body["error"], str)
            status, body = ask(self.lines[0]["fen"], multipv="x")
            self.assertEqual(status, 400)
            status, _, body = s.get("/api/cloud-eval")
            self.assertEqual(status, 400)
            self.assertIsInstance(body["error"], str)


if __name__ == "__main__":
    unittest.main(verbosity=2)
