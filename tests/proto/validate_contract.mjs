// Validates the published contract with standard validators, not our own:
//   1. proto/openapi.yaml with @apidevtools/swagger-parser (the OpenAPI
//      3.1 schema, refs, paths, operation ids);
//   2. proto/openapi.yaml with `redocly lint` and its recommended rule set:
//      zero errors and zero warnings;
//   3. every schema of proto/openapi.yaml and proto/ws.schema.json compiled
//      by Ajv (JSON Schema 2020-12) in strict mode, which refuses unknown
//      keywords -- such as the junk key that a YAML flow mapping makes of a
//      description cut at its comma.
//
//   node validate_contract.mjs <proto dir>
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

import SwaggerParser from "@apidevtools/swagger-parser";
import Ajv2020 from "ajv/dist/2020.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const proto = path.resolve(process.argv[2] ?? path.join(here, "../../proto"));
const openapiFile = path.join(proto, "openapi.yaml");
const wsFile = path.join(proto, "ws.schema.json");
let failures = 0;
const fail = (what, detail) => {
  failures += 1;
  console.log(`FAIL ${what}\n${detail}`);
};

// 1. swagger-parser: structure, refs, parameters, unique operation ids.
try {
  await SwaggerParser.validate(openapiFile);
  console.log("swagger-parser: proto/openapi.yaml is valid");
} catch (e) {
  fail("swagger-parser", e.message);
}

// 2. redocly lint, recommended rules. No telemetry, no update check: the
//    tests use no network.
const require = createRequire(import.meta.url);
const redocly = path.join(path.dirname(require.resolve("@redocly/cli/package.json")), "bin/cli.js");
const lint = spawnSync(
  process.execPath,
  [redocly, "lint", "--extends=recommended", "--format=json", openapiFile],
  {
    cwd: here,
    encoding: "utf8",
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
  },
);
let report = null;
try {
  report = JSON.parse(lint.stdout);
} catch {
  fail("redocly lint", `no JSON report (exit ${lint.status}):\n${lint.stdout}\n${lint.stderr}`);
}
if (report) {
  const { errors, warnings } = report.totals;
  if (errors || warnings || lint.status !== 0) {
    const lines = report.problems.map(
      (p) => `  ${p.severity} ${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer ?? "?"}`,
    );
    fail(`redocly lint: ${errors} errors, ${warnings} warnings`, lines.join("\n"));
  } else {
    console.log("redocly lint (recommended): 0 errors, 0 warnings");
  }
}

// 3. Ajv strict. OpenAPI 3.1 schemas are JSON Schema 2020-12: the
//    components become the $defs of one schema, and every schema in the
//    document (components, request and response bodies, parameters,
//    headers) is compiled against them.
const ajv = new Ajv2020({ strict: true, allErrors: true });
const compile = (what, schema) => {
  try {
    ajv.compile(schema);
    return true;
  } catch (e) {
    fail(`ajv strict: ${what}`, `  ${e.message}`);
    return false;
  }
};

const api = await SwaggerParser.parse(openapiFile);
const componentsId = "https://kibitz.invalid/proto/openapi.yaml";
const toDefs = (node) => {
  if (Array.isArray(node)) return node.map(toDefs);
  if (node === null || typeof node !== "object") return node;
  const out = {};
  for (const [k, v] of Object.entries(node)) {
    out[k] =
      k === "$ref" && typeof v === "string" && v.startsWith("#/components/schemas/")
        ? `${componentsId}#/$defs/${v.slice("#/components/schemas/".length)}`
        : toDefs(v);
  }
  return out;
};
ajv.addSchema({ $id: componentsId, $defs: toDefs(api.components.schemas) });

const schemas = []; // [where, schema]
for (const name of Object.keys(api.components.schemas))
  schemas.push([`#/components/schemas/${name}`, { $ref: `${componentsId}#/$defs/${name}` }]);
const collect = (where, node) => {
  for (const [type, media] of Object.entries(node?.content ?? {}))
    if (media.schema) schemas.push([`${where}/content/${type}`, toDefs(media.schema)]);
  for (const [name, header] of Object.entries(node?.headers ?? {}))
    if (header.schema) schemas.push([`${where}/headers/${name}`, toDefs(header.schema)]);
};
for (const [name, resp] of Object.entries(api.components.responses ?? {}))
  collect(`#/components/responses/${name}`, resp);
for (const [p, item] of Object.entries(api.paths)) {
  for (const [method, op] of Object.entries(item)) {
    if (method === "parameters") continue;
    const where = `${method.toUpperCase()} ${p}`;
    collect(`${where} request`, op.requestBody);
    for (const [status, resp] of Object.entries(op.responses ?? {})) collect(`${where} ${status}`, resp);
  }
  for (const param of [...(item.parameters ?? []), ...Object.values(item).flatMap((op) => op?.parameters ?? [])])
    if (param.schema) schemas.push([`${p} parameter ${param.name}`, toDefs(param.schema)]);
}
let compiled = 0;
for (const [where, schema] of schemas) compiled += compile(`openapi.yaml ${where}`, schema);
console.log(`ajv strict: ${compiled} of ${schemas.length} schemas of proto/openapi.yaml compiled`);

const ws = JSON.parse(readFileSync(wsFile, "utf8"));
if (compile("ws.schema.json", ws)) {
  let defs = 0;
  for (const name of Object.keys(ws.$defs ?? {}))
    defs += compile(`ws.schema.json #/$defs/${name}`, { $ref: `${ws.$id}#/$defs/${name}` });
  console.log(`ajv strict: proto/ws.schema.json and its ${defs} definitions compiled`);
}

if (schemas.length < 40) fail("coverage", `only ${schemas.length} schemas found in openapi.yaml`);
console.log(failures ? `${failures} failure(s)` : "contract valid");
process.exit(failures ? 1 : 0);
