#!/usr/bin/env node
// A tiny UCI engine for tools/match/test.mjs: plays a legal move chosen from
// the position (the same position and seed give the same move), or
// misbehaves on demand.
//
//   node fake_engine.mjs [--name NAME] [--mode MODE] [--after K] [--sleep MS]
//                        [--seed S] [--log FILE]
//
// MODE: random (default) | illegal (bestmove e2e2) | crash (exits) |
//       hang (never answers go, ignores SIGTERM) | slow (sleeps MS first) |
//       noinit (never answers uci) | mater (mates in one when it can, else
//       takes the biggest capture, else random).
// The misbehaviour starts at the K-th go (counted from 0 over the process's
// life, default 0). --log appends "pid N" and every received line to FILE.
import fs from 'node:fs';
import readline from 'node:readline';
import { Chess } from 'chess.js';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const name = opt('name', 'Fake');
const mode = opt('mode', 'random');
const after = Number(opt('after', '0'));
const sleepMs = Number(opt('sleep', '0'));
const seed = opt('seed', '1');
const logFile = opt('log', null);
const log = (l) => { if (logFile) fs.appendFileSync(logFile, l + '\n'); };
log(`pid ${process.pid}`);
if (mode === 'hang') process.on('SIGTERM', () => {});

const say = (l) => process.stdout.write(l + '\n');
let chess = new Chess();
let goes = 0;

function hash(s) {
  let h = 2166136261;
  for (const c of s) { h ^= c.charCodeAt(0); h = Math.imul(h, 16777619) >>> 0; }
  return h;
}
const VALUE = { p: 1, n: 3, b: 3, r: 5, q: 9 };
function choose() {
  const moves = chess.moves({ verbose: true });
  if (moves.length === 0) return '0000';
  const uci = (m) => m.from + m.to + (m.promotion || '');
  if (mode === 'mater') {
    for (const m of moves) {
      chess.move(m);
      const mate = chess.isCheckmate();
      chess.undo();
      if (mate) return uci(m);
    }
    const caps = moves.filter((m) => m.captured).sort((a, b) => VALUE[b.captured] - VALUE[a.captured]);
    if (caps.length) return uci(caps[0]);
  }
  return uci(moves[hash(chess.fen() + seed) % moves.length]);
}

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  log(line);
  const t = line.trim().split(/\s+/);
  switch (t[0]) {
    case 'uci':
      if (mode === 'noinit') return;
      say(`id name ${name}`);
      say('id author kibitz tests');
      say('option name Hash type spin default 16 min 1 max 1024');
      say('option name Threads type spin default 1 min 1 max 8');
      say('uciok');
      break;
    case 'isready': say('readyok'); break;
    case 'ucinewgame': chess = new Chess(); break;
    case 'position': {
      const mi = t.indexOf('moves');
      const fen = t[1] === 'fen' ? t.slice(2, mi < 0 ? t.length : mi).join(' ') : undefined;
      chess = new Chess(fen);
      if (mi >= 0) for (const m of t.slice(mi + 1)) chess.move({ from: m.slice(0, 2), to: m.slice(2, 4), promotion: m[4] });
      break;
    }
    case 'go': {
      const bad = goes++ >= after;
      const move = choose();
      if (bad && mode === 'hang') return;
      if (bad && mode === 'crash') process.exit(3);
      const reply = () => {
        say(`info depth 1 score cp ${(hash(chess.fen()) % 61) - 30} nodes 1`);
        say(`bestmove ${bad && mode === 'illegal' ? 'e2e2' : move}`);
      };
      if (bad && mode === 'slow') setTimeout(reply, sleepMs); else reply();
      break;
    }
    case 'quit': process.exit(0);
  }
});
