#!/usr/bin/env node
// Adds up the JSON lines of several match.mjs runs of the same pairing (e.g.
// one per seed, played at once on two CPUs) and prints one JSON line of the
// same kind: games, W-D-L, score, Elo with its 95% interval (per game and per
// pair), the pentanomial and, with --sprt ELO0,ELO1[,ALPHA,BETA], the
// pentanomial SPRT's log-likelihood ratio over all of them: what a single run
// of all the games would have said at its end.
//
//   node tools/match/combine.mjs [--sprt 0,10] run-1.json run-2.json ...
//
// Each file's last line that parses as JSON is taken (match.mjs prints its
// result last on stdout).
import { readFileSync } from 'node:fs';
import { gameStats, pairStats, sprt } from './stats.mjs';

const args = process.argv.slice(2);
let bounds = null;
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--sprt') {
    const v = (args[++i] || '').split(',').map(Number);
    if (v.length < 2 || v.some((x) => !Number.isFinite(x)) || !(v[1] > v[0])) {
      console.error('combine: --sprt needs ELO0,ELO1[,ALPHA,BETA] with ELO1 > ELO0');
      process.exit(2);
    }
    bounds = v;
  } else {
    files.push(args[i]);
  }
}
if (!files.length) {
  console.error('usage: combine.mjs [--sprt ELO0,ELO1[,ALPHA,BETA]] RUN.json...');
  process.exit(2);
}

function lastJson(path) {
  const lines = readFileSync(path, 'utf8').trim().split('\n').reverse();
  for (const line of lines) {
    try {
      return JSON.parse(line);
    } catch {
      // not the result line
    }
  }
  throw new Error(`${path}: no JSON line`);
}

let wins = 0, draws = 0, losses = 0;
const penta = [0, 0, 0, 0, 0];
for (const f of files) {
  const r = lastJson(f);
  wins += r.wins;
  draws += r.draws;
  losses += r.losses;
  r.pentanomial.forEach((c, i) => (penta[i] += c));
}
const r1 = (x) => Math.round(x * 10) / 10;
const st = gameStats(wins, draws, losses);
const ps = pairStats(penta);
const out = {
  runs: files.length, games: wins + draws + losses, wins, draws, losses,
  score: Math.round(st.score * 10000) / 10000, elo: r1(st.elo), elo_95: st.elo_95.map(r1),
  pentanomial: penta, elo_95_pairs: ps.n ? ps.elo_95.map(r1) : [null, null],
};
if (bounds) {
  const s = sprt(penta, ...bounds);
  out.sprt = { ...s, llr: Math.round(s.llr * 10000) / 10000 };
}
console.log(JSON.stringify(out));
