"""chess.js (tools/match, pinned in its package-lock.json, run by node) as
an oracle independent of the server: legal moves with their SAN, perft,
lines played out, and a deterministic legal game. One node run answers a
whole list of requests."""

import fcntl
import json
import os
import shutil
import subprocess
import tempfile

from kibitz_server import ROOT

MATCH = os.path.join(ROOT, "tools", "match")
# Its CommonJS build, loaded by require: Node 18 (Debian bookworm's) reads a
# .js file of a package without "type": "module" as CommonJS, so the ESM
# build cannot be imported by its path there.
CHESS_JS = os.path.join(MATCH, "node_modules", "chess.js", "dist", "cjs", "chess.js")

NODE_HELPER = r"""
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const { Chess } = createRequire(import.meta.url)(process.argv[2]);
const reqs = JSON.parse(readFileSync(0, 'utf8'));
const out = reqs.map((r) => {
  const c = r.fen ? new Chess(r.fen, { skipValidation: true }) : new Chess();
  // r.pre: moves (UCI) played first, for the ops that look at a position.
  for (const uci of r.pre || []) c.move({ from: uci.slice(0, 2), to: uci.slice(2, 4), promotion: uci[4] });
  if (r.op === 'moves') {
    return c.moves({ verbose: true }).map((m) => ({ uci: m.lan, san: m.san }));
  }
  if (r.op === 'perft') return c.perft(r.depth);
  if (r.op === 'game') {
    // r.plies moves, each the first of the legal moves taken from index
    // (ply * 7) on that leaves the game going on.
    const uci = [], san = [];
    while (uci.length < r.plies) {
      const options = c.moves({ verbose: true });
      let chosen = null;
      for (let k = 0; k < options.length && !chosen; k++) {
        const m = options[(uci.length * 7 + k) % options.length];
        c.move(m.san);
        if (c.isGameOver()) c.undo(); else chosen = m;
      }
      if (!chosen) return { error: 'no move keeps the game going at ply ' + uci.length };
      uci.push(chosen.lan);
      san.push(chosen.san);
    }
    return { uci, san };
  }
  // op 'play': every move legal, its SAN, and how the line ends.
  const san = [];
  for (const uci of r.moves) {
    try {
      san.push(c.move({ from: uci.slice(0, 2), to: uci.slice(2, 4), promotion: uci[4] }).san);
    } catch (e) {
      return { legal: false, bad: uci };
    }
  }
  return { legal: true, san, checkmate: c.isCheckmate(), stalemate: c.isStalemate() };
});
process.stdout.write(JSON.stringify(out));
"""


def ensure_installed():
    """npm ci in tools/match when node_modules is not what the lock file asks
    for (the stamp tools/match/run_test.sh leaves), under a lock on the
    folder that run_test.sh takes too: tests run in parallel install once."""
    stamp = os.path.join(MATCH, "node_modules", ".kibitz-lock.json")
    lock = os.path.join(MATCH, "package-lock.json")
    fd = os.open(MATCH, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with open(lock, "rb") as f:
            want = f.read()
        have = None
        if os.path.exists(stamp):
            with open(stamp, "rb") as f:
                have = f.read()
        if have != want:
            subprocess.run(["npm", "ci", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"],
                           cwd=MATCH, check=True, capture_output=True, timeout=300)
            shutil.copyfile(lock, stamp)
    finally:
        os.close(fd)


def chess_js(requests):
    """Answers of chess.js to a list of requests: {"op": "moves", "fen"},
    {"op": "perft", "fen", "depth"}, {"op": "play", "fen", "moves"} (UCI;
    answers legal, san, checkmate, stalemate) and {"op": "game", "plies"}
    (from the start: answers uci and san). No "fen": the starting position."""
    ensure_installed()
    with tempfile.NamedTemporaryFile("w", suffix=".mjs", delete=False) as f:
        f.write(NODE_HELPER)
        script = f.name
    try:
        out = subprocess.run(["node", script, CHESS_JS], input=json.dumps(requests),
                             capture_output=True, text=True, timeout=300)
    finally:
        os.unlink(script)
    if out.returncode != 0:
        raise RuntimeError("chess.js helper failed: " + out.stderr)
    return json.loads(out.stdout)
