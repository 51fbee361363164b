"""proto.routes: proto/openapi.yaml and a real `kibitz serve --port 0` agree.

- Every route of the server's route table (server/http/router.cpp, the one
  table the server routes by) is a path of the document, and the methods the
  server allows there (its own Allow header) are the documented ones.
- Every documented path and method answers (never the 404 of an unknown
  route); a sample request of each gets the answer it should.
- Every status the server answers on a documented operation is listed in
  that operation's responses (not left to "default"), and each JSON body
  fits its schema: sample requests, broken bodies, malformed targets,
  oversized bodies and headers, and -- on a second server with access
  control -- missing keys, missing scopes and rate limits.
- The conventions the document states for all paths hold: OPTIONS answers
  204 with Allow, another method 405 with Allow, another /v1/ path 404.
- GET /v1/openapi.yaml serves proto/openapi.yaml byte for byte.
"""

import http.client
import json
import os
import re
import socket
import sys
import tempfile
import unittest
import warnings

import jsonschema
import yaml

warnings.filterwarnings("ignore", category=DeprecationWarning)  # jsonschema.RefResolver
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "server"))
from kibitz_server import Schemas, Server  # noqa: E402

SCHEMAS = Schemas()
with open(os.path.join(ROOT, "proto", "openapi.yaml"), "rb") as f:
    DOCUMENT_BYTES = f.read()
API = yaml.safe_load(DOCUMENT_BYTES)
ERROR = jsonschema.Draft202012Validator(API["components"]["schemas"]["Error"],
                                        resolver=jsonschema.RefResolver.from_schema(API))
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
UNKNOWN_JOB = "0" * 32
MAX_BODY = 4096

# A request that succeeds on each documented operation: body, expected status.
SAMPLES = {
    ("/v1/analyze", "post"): ({"limits": {"depth": 2}}, 200),
    ("/v1/jobs", "post"): ({"limits": {"depth": 2}}, 202),
    ("/v1/jobs/{id}", "get"): (None, 200),
    ("/v1/jobs/{id}", "delete"): (None, 200),
    ("/v1/evals", "get"): (None, 404),  # the initial position, not in an empty library
    ("/v1/games/annotate", "post"): ({"pgn": "1. e4 e5 *", "limits": {"depth": 2}}, 202),
    ("/v1/moves", "post"): ({"moves": ["e2e4"]}, 200),
    ("/v1/tablebase", "get"): (None, 404),  # no syzygy_path: no_tablebases
    ("/api/cloud-eval", "get"): (None, 400),  # no fen: Lichess's {"error": "..."}
    ("/v1/batch", "post"): ({"positions": [{"limits": {"depth": 2}}, {"moves": ["e2e4"]}],
                            "limits": {"depth": 1}}, 200),
    ("/v1/perft", "post"): ({"depth": 2}, 200),
    ("/v1/info", "get"): (None, 200),
    ("/v1/openapi.yaml", "get"): (None, 200),
    ("/v1/openapi.yaml", "head"): (None, 200),
    ("/v1/ws", "get"): (None, 426),  # without the upgrade; with it: 101 below
    ("/healthz", "get"): (None, 200),
    ("/healthz", "head"): (None, 200),
    ("/readyz", "get"): (None, 200),
    ("/readyz", "head"): (None, 200),
    ("/metrics", "get"): (None, 200),
    ("/", "get"): (None, 200),
    ("/", "head"): (None, 200),
}


def router_paths():
    """The paths of the server's route table, as the documentation names them."""
    with open(os.path.join(ROOT, "server", "http", "router.cpp")) as f:
        source = f.read()
    paths = set(re.findall(r'Entry\{"(/[^"]*)"', source))
    paths |= set(re.findall(r'make\(Route::\w+, "(/[^"]*)"', source))  # "/v1/jobs/{id}"
    assert "Route::static_file" in source
    paths.add("/")  # Route::static_file: GET / and the page's files
    return paths


def operations():
    for path, item in API["paths"].items():
        for method in item:
            if method in METHODS:
                yield path, method


def request(server, method, target, body=None, raw=None, headers=None):
    """(status, headers lower-cased, JSON body, text or None for HEAD)."""
    conn = server.conn()
    data = raw if raw is not None else (json.dumps(body) if body is not None else None)
    conn.request(method, target, body=data, headers=dict(headers or {}))
    res = conn.getresponse()
    text = res.read().decode("utf-8")
    conn.close()
    hdrs = {k.lower(): v for k, v in res.getheaders()}
    if method == "HEAD":
        return res.status, hdrs, None
    is_json = hdrs.get("content-type", "").startswith("application/json")
    return res.status, hdrs, json.loads(text) if is_json else text


def raw_request(port, data, limit=65536):
    """Sends bytes as they are; returns the status code of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(data)
        answer = b""
        while b"\r\n" not in answer and len(answer) < limit:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
    return int(answer.split(b" ", 2)[1])


class RoutesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        web = os.path.join(cls.tmp.name, "web")
        os.mkdir(web)
        with open(os.path.join(web, "index.html"), "w") as f:
            f.write("<!doctype html><title>board</title>\n")
        cls.server = Server(["--web-root", web], env={"KIBITZ_MAX_BODY_BYTES": str(MAX_BODY)})
        cls.server.start()
        config = os.path.join(cls.tmp.name, "access.json")
        with open(config, "w") as f:
            json.dump({"access": {"keys": [
                {"id": "healthy", "token": "healthz-only", "scopes": ["info"]},
                {"id": "slow", "token": "slow-token-1", "rate": {"per_second": 1, "burst": 1}},
            ]}}, f)
        cls.guarded = Server(["--config", config, "--web-root", web])
        cls.guarded.start()
        cls.seen = []  # (path, method, status)

    @classmethod
    def tearDownClass(cls):
        cls.server.kill()
        cls.guarded.kill()
        cls.tmp.cleanup()

    def call(self, server, path, method, target=None, body=None, raw=None, headers=None):
        """One request to the operation (path, method); the answer is checked
        against the document and returned as (status, headers, body)."""
        target = target or path
        status, hdrs, answer = request(server, method.upper(), target, body=body, raw=raw,
                                       headers=headers)
        self.seen.append((path, method, status))
        self.assertIn(str(status), API["paths"][path][method]["responses"],
                      "%s %s answered %d, which openapi.yaml does not list: %r"
                      % (method.upper(), target, status, answer))
        if isinstance(answer, dict):
            SCHEMAS.check_http(path, method, status, answer)
        if status == 404 and isinstance(answer, dict):  # a 404 of its own, not "no route"
            self.assertFalse(answer["error"]["message"].startswith("no such endpoint"),
                             "%s %s: documented, but the server has no route" % (method, target))
        return status, hdrs, answer

    def job_id(self):
        status, _, answer = self.call(self.server, "/v1/jobs", "post", body={"limits": {"depth": 1}})
        self.assertEqual(status, 202, answer)
        return answer["id"]

    def target(self, path):
        return path.replace("{id}", self.job_id()) if "{id}" in path else path

    def test_every_route_is_documented(self):
        documented = set(API["paths"])
        self.assertEqual(router_paths() - documented, set(),
                         "routes of server/http/router.cpp missing from openapi.yaml")
        self.assertEqual(documented - router_paths(), set(),
                         "paths of openapi.yaml the server has no route for")
        self.assertEqual(set(operations()), set(SAMPLES), "a sample request per operation")

    def test_allowed_methods_are_documented(self):
        for path, item in API["paths"].items():
            documented = {m.upper() for m in item if m in METHODS}
            status, hdrs, answer = request(self.server, "OPTIONS", self.target(path))
            self.assertEqual(status, 204, (path, answer))
            allowed = {m.strip() for m in hdrs["allow"].split(",")} - {"OPTIONS"}
            self.assertEqual(allowed, documented, "methods of %s: Allow against openapi.yaml" % path)
            status, hdrs, answer = request(self.server, "PATCH", self.target(path))
            self.assertEqual((status, answer["error"]["code"]), (405, "method_not_allowed"), path)
            ERROR.validate(answer)

    def test_documented_operations_answer(self):
        for (path, method), (body, expected) in SAMPLES.items():
            status, hdrs, answer = self.call(self.server, path, method, target=self.target(path),
                                             body=body)
            self.assertEqual(status, expected, (method, path, answer))
        status, _, answer = self.call(self.server, "/v1/jobs/{id}", "get",
                                      target="/v1/jobs/" + UNKNOWN_JOB)
        self.assertEqual((status, answer["error"]["code"]), (404, "not_found"))
        upgrade = (b"GET /v1/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                   b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                   b"Sec-WebSocket-Version: 13\r\n\r\n")
        status = raw_request(self.server.port, upgrade)
        self.seen.append(("/v1/ws", "get", status))
        self.assertEqual(status, 101)
        self.assertIn("101", API["paths"]["/v1/ws"]["get"]["responses"])
        status, _, answer = self.server.get("/v1/no-such-route")
        self.assertEqual((status, answer["error"]["code"]), (404, "not_found"))

    def test_contract_is_served(self):
        conn = self.server.conn()
        conn.request("GET", "/v1/openapi.yaml")
        res = conn.getresponse()
        body = res.read()
        conn.close()
        self.assertEqual(res.status, 200)
        self.assertEqual(res.getheader("Content-Type"), "application/yaml")
        self.assertEqual(body, DOCUMENT_BYTES, "GET /v1/openapi.yaml is not proto/openapi.yaml")

    def test_errors_are_documented(self):
        for path, method in operations():
            target = self.target(path)
            # A malformed request target: 400 on every path.
            status, _, _ = self.call(self.server, path, method, target=target + "?q=%zz")
            self.assertEqual(status, 400, (method, path))
            # Headers over max_header_bytes: 413 on every path.
            status, _, _ = self.call(self.server, path, method, target=target,
                                     headers={"X-Pad": "x" * 20000})
            self.assertEqual(status, 413, (method, path))
            if method == "post":
                status, _, answer = self.call(self.server, path, method, raw="{")
                self.assertEqual((status, answer["error"]["code"]), (400, "invalid_json"))
                status, _, answer = self.call(self.server, path, method,
                                              raw='{"pad": "%s"}' % ("x" * MAX_BODY))
                self.assertEqual((status, answer["error"]["code"]), (413, "payload_too_large"))

    def test_access_errors_are_documented(self):
        scoped = [(p, m) for p, m in operations() if API["paths"][p][m].get("security") != []]
        self.assertGreaterEqual(len(scoped), 9)
        for path, method in operations():
            body, expected = SAMPLES[(path, method)]
            target = path.replace("{id}", UNKNOWN_JOB)
            status, _, answer = self.call(self.guarded, path, method, target=target, body=body)
            if (path, method) in scoped:
                self.assertEqual((status, answer["error"]["code"]), (401, "unauthorized"), path)
            else:
                self.assertNotIn(status, (401, 403), (method, path))
        limited = 0
        for path, method in scoped:
            body, _ = SAMPLES[(path, method)]
            target = path.replace("{id}", UNKNOWN_JOB)
            if path != "/v1/info":
                status, _, answer = self.call(self.guarded, path, method, target=target, body=body,
                                              headers={"Authorization": "Bearer healthz-only"})
                self.assertEqual((status, answer["error"]["code"]), (403, "forbidden"), path)
            for _ in range(2):
                status, _, _ = self.call(self.guarded, path, method, target=target, body=body,
                                         headers={"Authorization": "Bearer slow-token-1"})
                limited += status == 429
        self.assertGreaterEqual(limited, len(scoped))


if __name__ == "__main__":
    unittest.main(verbosity=2)
