"""Starts a real `kibitz serve --port 0` and talks to it over HTTP and
WebSocket. Shared by the server integration tests."""

import http.client
import json
import os
import signal
import shutil
import subprocess
import tempfile
import threading
import time

import yaml
import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
KIBITZ = os.environ.get("KIBITZ_BIN", os.path.join(ROOT, "build", "kibitz"))

CHESS_START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
# A middlegame position, for searches that should take a while.
CHESS_MIDDLE = "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 9"
DRAUGHTS_START = "W:Wa1,a3,b2,c1,c3,d2,e1,e3,f2,g1,g3,h2:Ba7,b6,b8,c7,d6,d8,e7,f6,f8,g7,h6,h8"


class Server:
    """`with Server(extra_args, env) as s:` runs one kibitz server."""

    def __init__(self, args=(), env=None, search_threads=2, preexec_fn=None, config=None):
        """`config`: a dict written to a file of its own for --config,
        removed again by kill()."""
        self.config_file = None
        if config is not None:
            f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
            json.dump(config, f)
            f.close()
            self.config_file = f.name
            args = ["--config", f.name, *args]
        self.args = ["serve", "--port", "0", "--search-threads", str(search_threads),
                     "--hash-chess", "8", "--hash-draughts", "8", *args]
        self.env = dict(os.environ)
        self.env.update(env or {})
        # Each server its own store, unless the test gives one (a restart
        # on the same file): servers of parallel tests never share a file.
        self.own_store = None
        if "KIBITZ_STORE_PATH" not in self.env:
            self.own_store = tempfile.mkdtemp(prefix="kibitz-store-")
            self.env["KIBITZ_STORE_PATH"] = os.path.join(self.own_store, "kibitz.db")
        self.preexec_fn = preexec_fn
        self.proc = None
        self.port = None
        self.stderr_lines = []

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.kill()

    def start(self):
        self.proc = subprocess.Popen([KIBITZ, *self.args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=self.env, text=True,
                                     preexec_fn=self.preexec_fn)
        # stderr is drained all along, so the server never blocks on its log.
        threading.Thread(target=self._drain, daemon=True).start()
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            self.proc.kill()
            raise RuntimeError("kibitz serve did not start: %r %s" % (line, self.log()))
        self.port = int(line.rsplit(":", 1)[1])
        # The start's log lines (a job recovered, the store migrated) are all
        # written before "listening on", but the drain thread may not have
        # read them yet: a test that looks at log() right after start(), for
        # a line or for its absence, would see too little. The last of them
        # at level info is "serving on"; at a quieter level, wait for nothing.
        if self._logs_info() and not wait_until(
                lambda: "serving on" in self.log() or self.proc.poll() is not None, timeout=60):
            raise RuntimeError("kibitz serve said 'listening on' but never logged 'serving on': "
                               + self.log()[-2000:])

    def _logs_info(self):
        """Whether the server logs at level info, by the precedence of its
        settings: a flag over the environment over the --config file."""
        level = "info"
        for i, a in enumerate(self.args[:-1]):
            if a == "--config":
                try:
                    with open(self.args[i + 1]) as f:
                        level = json.load(f).get("log_level", level)
                except (OSError, ValueError, AttributeError):
                    return False  # a file the server refuses: nothing to wait for
        level = self.env.get("KIBITZ_LOG_LEVEL", level)
        for i, a in enumerate(self.args):
            if a == "--log-level" and i + 1 < len(self.args):
                level = self.args[i + 1]
            elif a.startswith("--log-level="):
                level = a.split("=", 1)[1]
        return level in ("info", "debug", "trace")

    def _drain(self):
        for line in self.proc.stderr:
            self.stderr_lines.append(line)

    def log(self):
        return "".join(self.stderr_lines)

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.own_store and self.proc and self.proc.poll() is not None:
            shutil.rmtree(self.own_store, ignore_errors=True)  # its own: nobody reads it after
        if self.config_file:
            os.unlink(self.config_file)
            self.config_file = None

    def terminate(self, timeout=5):
        """SIGTERM; returns (exit status, seconds it took)."""
        start = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=timeout)
        return code, time.monotonic() - start

    # --- HTTP ---------------------------------------------------------------
    def conn(self, timeout=60):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, path, body=None, headers=None, raw=None, timeout=60):
        """Returns (status, headers dict lower-cased, parsed JSON or text)."""
        c = self.conn(timeout)
        data = raw if raw is not None else (json.dumps(body) if body is not None else None)
        h = {"Content-Type": "application/json"} if data is not None else {}
        h.update(headers or {})
        c.request(method, path, body=data, headers=h)
        r = c.getresponse()
        text = r.read().decode("utf-8")
        hdrs = {k.lower(): v for k, v in r.getheaders()}
        c.close()
        ctype = hdrs.get("content-type", "")
        return r.status, hdrs, json.loads(text) if ctype.startswith("application/json") else text

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body, **kw):
        return self.request("POST", path, body=body, **kw)

    def ws_url(self, query=""):
        return "ws://127.0.0.1:%d/v1/ws%s" % (self.port, query)

    def metric(self, name, labels=None):
        """The sum of a metric's samples whose labels include `labels`."""
        status, _, text = self.get("/metrics")
        assert status == 200
        total, found = 0.0, False
        for line in text.splitlines():
            if line.startswith("#") or not line.startswith(name):
                continue
            key, value = line.rsplit(" ", 1)
            metric, _, label_text = key.partition("{")
            if metric != name:
                continue
            if labels and not all('%s="%s"' % kv in label_text for kv in labels.items()):
                continue
            total += float(value)
            found = True
        return total if found else None



# Debian's stockfish, the independent oracle of some tests (None: not installed).
STOCKFISH = shutil.which("stockfish") or ("/usr/games/stockfish"
                                          if os.path.exists("/usr/games/stockfish") else None)


class Uci:
    """A UCI engine (default: STOCKFISH; else `path` with `args`, such as
    KIBITZ, ["uci"]) on pipes, after its uciok, with `options` set (name ->
    value)."""

    def __init__(self, options=(), path=None, args=()):
        self.p = subprocess.Popen([path or STOCKFISH, *args], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, bufsize=1)
        self.send("uci")
        self.wait("uciok")
        for name, value in dict(options).items():
            self.send("setoption name %s value %s" % (name, value))

    def send(self, line):
        self.p.stdin.write(line + "\n")

    def wait(self, prefix):
        """Lines read up to and with the first that starts with `prefix`."""
        lines = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("the engine ended")
            lines.append(line.strip())
            if line.startswith(prefix):
                return lines

def wait_until(predicate, timeout=20, interval=0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    return predicate()


class Schemas:
    """Validates responses against proto/openapi.yaml and proto/ws.schema.json."""

    def __init__(self):
        proto = os.environ.get("KIBITZ_PROTO_DIR", os.path.join(ROOT, "proto"))
        with open(os.path.join(proto, "openapi.yaml")) as f:
            self.openapi = yaml.safe_load(f)
        with open(os.path.join(proto, "ws.schema.json")) as f:
            self.ws = json.load(f)

    def response_schema(self, path, method, status):
        op = self.openapi["paths"][path][method.lower()]
        responses = op["responses"]
        resp = responses.get(str(status)) or responses.get("%dXX" % (status // 100)) \
            or responses.get("default")
        if resp is None:
            raise AssertionError("openapi.yaml: no response %s for %s %s" % (status, method, path))
        resp = self._deref(resp)
        content = resp.get("content", {})
        for ctype in ("application/json", "application/x-ndjson"):
            if ctype in content:
                return content[ctype].get("schema")
        return None

    def _deref(self, node):
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            assert ref.startswith("#/")
            target = self.openapi
            for part in ref[2:].split("/"):
                target = target[part]
            node = target
        return node

    def _validate(self, document, schema, instance):
        if "$schema" not in schema:
            schema = dict(schema)
        resolver = jsonschema.RefResolver.from_schema(document)
        cls = jsonschema.validators.validator_for(document, default=jsonschema.Draft202012Validator) \
            if isinstance(document, dict) and "$schema" in document else jsonschema.Draft202012Validator
        cls(schema, resolver=resolver).validate(instance)

    def check_http(self, path, method, status, body):
        schema = self.response_schema(path, method, status)
        if schema is not None:
            self._validate(self.openapi, schema, body)

    def check_ws(self, message):
        self._validate(self.ws, self.ws, message)
