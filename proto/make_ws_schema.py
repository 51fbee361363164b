#!/usr/bin/env python3
"""Writes proto/ws.schema.json (JSON Schema 2020-12 for the WebSocket
messages of GET /v1/ws) from the component schemas of proto/openapi.yaml, so
that REST and WebSocket share one definition of every result.

Run after editing openapi.yaml:  python3 proto/make_ws_schema.py
With --check it writes nothing and exits 1 when ws.schema.json is not what
openapi.yaml makes (the test proto.ws_schema_current).
"""
import json
import os
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))


def rewrite(node):
    """OpenAPI component refs -> $defs refs. The components are OpenAPI 3.1
    schemas, that is JSON Schema 2020-12 already: nothing else changes."""
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k == "$ref" and v.startswith("#/components/schemas/"):
                v = "#/$defs/" + v[len("#/components/schemas/"):]
            out[k] = rewrite(v)
        return out
    if isinstance(node, list):
        return [rewrite(v) for v in node]
    return node


def message(type_name, base=None, required=("type", "id"), extra=None, description=""):
    own = {
        "type": "object",
        "required": list(required),
        "properties": {
            "type": {"const": type_name},
            "id": {"type": "string", "description": "The client's tag for this search or review."},
        },
    }
    if extra:
        own["properties"].update(extra)
    schema = {"allOf": [{"$ref": "#/$defs/" + base}, own]} if base else own
    if description:
        schema["description"] = description
    return schema


def main():
    with open(os.path.join(HERE, "openapi.yaml")) as f:
        api = yaml.safe_load(f)
    defs = rewrite(api["components"]["schemas"])
    messages = {
        # client -> server
        "AnalyzeMessage": message(
            "analyze", "AnalyzeRequest",
            description="Starts a search (fields as POST /v1/analyze; limits.infinite allowed). "
                        "An analyze with the id of a running search replaces it."),
        "StopMessage": message("stop", description="Stops the search or review with this id."),
        "AnnotateMessage": message(
            "annotate", "AnnotateRequest",
            description="Reviews a whole game (fields as POST /v1/games/annotate)."),
        # server -> client
        "InfoMessage": message("info", "AnalysisResult",
                               description="After every completed iteration (all MultiPV lines)."),
        "BestmoveMessage": message("bestmove", "AnalysisResult",
                                   description="The final result of a search."),
        "ProgressMessage": message("progress", "ReviewProgress",
                                   description="A review's progress: positions analysed so far."),
        "ReviewMessage": message("review", "ReviewResult", description="A review's result."),
        "ErrorMessage": message(
            "error", required=("type", "error"),
            extra={"id": {"type": ["string", "null"],
                          "description": "The id of the message that failed, null if unknown."},
                   "error": {"$ref": "#/$defs/ErrorBody"}},
            description="A refused message or a failed search."),
    }
    defs.update(messages)
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://kibitz.invalid/proto/ws.schema.json",
        "title": "Kibitz WebSocket messages (GET /v1/ws)",
        "description": "Generated from proto/openapi.yaml by proto/make_ws_schema.py; edit those. "
                       "Every message is one JSON object with a 'type'; fields not listed may be added.",
        "oneOf": [{"$ref": "#/$defs/" + name} for name in messages],
        "$defs": defs,
    }
    text = json.dumps(schema, indent=2) + "\n"
    target = os.path.join(HERE, "ws.schema.json")
    if "--check" in sys.argv[1:]:
        with open(target) as f:
            if f.read() != text:
                print("proto/ws.schema.json is stale: run python3 proto/make_ws_schema.py")
                sys.exit(1)
        print("proto/ws.schema.json is what proto/openapi.yaml makes")
        return
    with open(target, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
