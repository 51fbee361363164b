#!/usr/bin/env python3
"""kibitz analyze prints what POST /v1/analyze answers: checked against
proto/openapi.yaml, with caps from KIBITZ_* variables and errors on stderr.
Usage: cli_analyze_test.py KIBITZ PROTO_DIR"""
import json
import os
import subprocess
import sys
import warnings

import jsonschema
import yaml

warnings.filterwarnings("ignore", category=DeprecationWarning)


def main():
    kibitz, proto = sys.argv[1], sys.argv[2]
    with open(os.path.join(proto, "openapi.yaml")) as f:
        api = yaml.safe_load(f)
    resolver = jsonschema.RefResolver.from_schema(api)
    result_schema = {"$ref": "#/components/schemas/AnalysisResult"}
    error_schema = {"$ref": "#/components/schemas/Error"}
    env = dict(os.environ, KIBITZ_SEARCH_THREADS="1", KIBITZ_HASH_MIB_CHESS="4",
               KIBITZ_HASH_MIB_DRAUGHTS="4")

    def run(args, extra_env=None, expect=0):
        p = subprocess.run([kibitz, "analyze"] + args, capture_output=True, text=True,
                           env=dict(env, **(extra_env or {})), timeout=120)
        assert p.returncode == expect, (args, p.returncode, p.stderr)
        return p

    def result(args, extra_env=None):
        out = run(args, extra_env).stdout
        lines = out.splitlines()
        assert len(lines) == 1, out  # one JSON document, nothing else on stdout
        body = json.loads(lines[0])
        jsonschema.Draft202012Validator(result_schema, resolver=resolver).validate(body)
        return body

    r = result(["--moves", "e2e4", "--depth", "4", "--multipv", "2"])
    assert r["game"] == "chess" and r["depth"] == 4 and len(r["lines"]) == 2, r
    assert r["side_to_move"] == "black" and r["limits"] == {"depth": 4}, r

    d = result(["--game", "draughts", "--fen", "B:WC3,E5:BF6", "--depth", "3"])
    assert d["bestmove"] == "f6:d4:b2" and d["lines"][0]["score"] == {"win": -1}, d
    s = result(["--game", "draughts", "--fen", "B:WC3,E5:BF6", "--depth", "3",
                "--pov", "side_to_move"])
    assert s["lines"][0]["score"] == {"win": 1}, s

    mate = result(["--moves", "f2f3", "e7e5", "g2g4", "d8h4"])
    assert mate["bestmove"] is None and mate["status"] == "checkmate", mate

    capped = result(["--depth", "30"], {"KIBITZ_MAX_DEPTH": "3"})
    assert capped["limits"] == {"depth": 3} and capped["depth"] <= 3, capped

    bad = run(["--moves", "e2e5", "--depth", "2"], expect=2)
    assert bad.stdout == "", bad.stdout
    err = json.loads(bad.stderr.strip().splitlines()[-1])
    jsonschema.Draft202012Validator(error_schema, resolver=resolver).validate(err)
    assert err["error"]["code"] == "illegal_move" and "e2e5" in err["error"]["message"], err

    run(["--depth", "2"], {"KIBITZ_MAX_DEPTH": "deep"}, expect=2)
    print("ok")


if __name__ == "__main__":
    main()
