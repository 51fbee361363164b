#!/usr/bin/env python3
"""kibitz analyze prints what POST /v1/analyze answers: checked against
proto/openapi.yaml, with caps from KIBITZ_* variables and from a --config
file, errors on stderr, and --threads defaulting to the whole pool (the
threads the analysis used, read from its log line at log_level debug), and
exit 1 for a server error (a test build's hook, KIBITZ_TEST_FAIL_FEN).
Usage: cli_analyze_test.py KIBITZ PROTO_DIR"""
import json
import os
import subprocess
import re
import sys
import tempfile
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
        full = {k: v for k, v in dict(env, **(extra_env or {})).items() if v is not None}
        p = subprocess.run([kibitz, "analyze"] + args, capture_output=True, text=True,
                           env=full, timeout=120)
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

    # The caps of a --config file apply (JSON with comments, as
    # config/kibitz.json); the file's pool and table sizes too.
    with tempfile.TemporaryDirectory(prefix="kibitz-analyze-") as d:
        path = os.path.join(d, "caps.json")
        with open(path, "w") as f:
            f.write('// caps for kibitz analyze\n{"max_depth": 3, "max_multipv": 2,\n'
                    ' "search_threads": 1, "hash_mib_chess": 4}\n')
        no_env_caps = {"KIBITZ_SEARCH_THREADS": None, "KIBITZ_HASH_MIB_CHESS": None}
        c = result(["--depth", "30", "--multipv", "4", "--config", path], no_env_caps)
        assert c["limits"] == {"depth": 3} and c["depth"] <= 3, c
        assert c["multipv"] == 2 and len(c["lines"]) == 2, c
        # Without the file the same request is not capped there (the default
        # max_multipv is 5): the caps came from the file.
        u = result(["--depth", "2", "--multipv", "4"])
        assert u["multipv"] == 4 and len(u["lines"]) == 4, u
        # A file that cannot be read is a client error (exit 2).
        run(["--depth", "2", "--config", os.path.join(d, "none.json")], expect=2)

        # --threads defaults to the whole pool: search_threads from the
        # environment, from the file, and 0 (every hardware thread). The
        # analysis' log line (stderr, log_level debug) names its threads.
        def threads_used(args, extra_env):
            p = run(["--depth", "2"] + args, dict(extra_env, KIBITZ_LOG_LEVEL="debug"))
            used = re.findall(r"\banalysis \S+ game=chess .* threads=(\d+) ", p.stderr)
            assert len(used) == 1, p.stderr
            return int(used[0])

        assert threads_used([], {"KIBITZ_SEARCH_THREADS": "3"}) == 3
        assert threads_used(["--threads", "1"], {"KIBITZ_SEARCH_THREADS": "3"}) == 1
        pool = os.path.join(d, "pool.json")
        with open(pool, "w") as f:
            f.write('{"search_threads": 3}')
        assert threads_used(["--config", pool], {"KIBITZ_SEARCH_THREADS": None}) == 3
        assert threads_used([], {"KIBITZ_SEARCH_THREADS": "0"}) == os.cpu_count()

    # A server error (500 internal) is exit 1, its error JSON on stderr:
    # through a test build's hook that fails the analysis of one position.
    if os.environ.get("KIBITZ_TEST_HOOKS_BUILT") == "1":
        start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
        failed = run(["--fen", start, "--depth", "2"], {"KIBITZ_TEST_FAIL_FEN": start}, expect=1)
        assert failed.stdout == "", failed.stdout
        err = json.loads(failed.stderr.strip().splitlines()[-1])
        jsonschema.Draft202012Validator(error_schema, resolver=resolver).validate(err)
        assert err["error"]["code"] == "internal", err
        # The hook fails that position only.
        result(["--moves", "e2e4", "--depth", "2"], {"KIBITZ_TEST_FAIL_FEN": start})
    else:
        print("cli_analyze_test: a build without the test hooks: exit 1 for a server error "
              "is not checked here", file=sys.stderr)
    print("ok")


if __name__ == "__main__":
    main()
