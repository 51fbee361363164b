#!/usr/bin/env python3
"""Runs dump_samples and validates every answer against proto/openapi.yaml
(REST) and proto/ws.schema.json (WebSocket messages), the way the
integration tests do. Usage: validate_samples.py DUMP_SAMPLES PROTO_DIR"""
import json
import os
import subprocess
import sys
import warnings

import jsonschema
import yaml

warnings.filterwarnings("ignore", category=DeprecationWarning)


def main():
    dump, proto = sys.argv[1], sys.argv[2]
    with open(os.path.join(proto, "openapi.yaml")) as f:
        api = yaml.safe_load(f)
    with open(os.path.join(proto, "ws.schema.json")) as f:
        ws = json.load(f)
    jsonschema.Draft202012Validator.check_schema(ws)
    resolver = jsonschema.RefResolver.from_schema(api)

    def deref(node):
        while isinstance(node, dict) and "$ref" in node:
            target = api
            for part in node["$ref"][2:].split("/"):
                target = target[part]
            node = target
        return node

    out = subprocess.run([dump], check=True, capture_output=True, text=True).stdout
    checked = {"rest": 0, "ws": 0}
    failures = 0
    for line in out.splitlines():
        if not line.startswith("{"):
            continue  # log lines
        sample = json.loads(line)
        try:
            if "ws" in sample:
                jsonschema.Draft202012Validator(ws).validate(sample["ws"])
                checked["ws"] += 1
                continue
            op = api["paths"][sample["path"]][sample["method"].lower()]
            resp = op["responses"].get(str(sample["status"])) or op["responses"]["default"]
            schema = deref(resp)["content"]["application/json"]["schema"]
            jsonschema.Draft202012Validator(schema, resolver=resolver).validate(sample["body"])
            checked["rest"] += 1
        except jsonschema.ValidationError as e:
            failures += 1
            print("FAIL", json.dumps(sample)[:300], "\n   ", e.message, list(e.absolute_path))
    # The schemas must mean something: broken answers are refused.
    def refused(path, method, status, body):
        op = api["paths"][path][method]
        schema = deref(op["responses"][str(status)])["content"]["application/json"]["schema"]
        try:
            jsonschema.Draft202012Validator(schema, resolver=resolver).validate(body)
        except jsonschema.ValidationError:
            return True
        print("FAIL: schema accepts", path, json.dumps(body)[:200])
        return False

    good = None
    for line in out.splitlines():
        if line.startswith("{") and '"path":"/v1/analyze"' in line and '"status":200' in line:
            good = json.loads(line)["body"]
            break
    broken = []
    for mutate in (lambda b: b.pop("bestmove"),
                   lambda b: b["lines"][0].update(score={"cp": "12"}),
                   lambda b: b["lines"][0].update(bound="maybe"),
                   lambda b: b["lines"][0].update(wdl=[1, 2]),
                   lambda b: b.update(game="go"),
                   lambda b: b["engine"].pop("version")):
        b = json.loads(json.dumps(good))
        mutate(b)
        broken.append(b)
    failures += sum(not refused("/v1/analyze", "post", 200, b) for b in broken)
    failures += not refused("/v1/jobs/{id}", "get", 200, {"id": "x", "status": "done"})
    failures += not refused("/v1/analyze", "post", 400, {"error": {"code": "x"}})
    if not all(jsonschema.Draft202012Validator(ws).is_valid(m) is False for m in
               ({"type": "info", "id": "a"}, {"type": "nonsense", "id": "a"},
                {"type": "error", "id": "a", "error": {"code": 1, "message": "m"}})):
        failures += 1
        print("FAIL: ws schema accepts a broken message")
    print("validated", checked)
    if failures or checked["rest"] < 20 or checked["ws"] < 5:
        sys.exit(1)


if __name__ == "__main__":
    main()
