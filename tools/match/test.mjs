// Tests of tools/match: openings, arguments, the statistics (SPRT checked
// against values worked out independently), and short matches against
// test/fake_engine.mjs, a UCI engine that plays legal moves or misbehaves on
// demand (illegal move, crash, hang, slow, no handshake). Every match checks
// that no engine process outlives the runner. No assertion depends on how
// fast the machine is: the deadlines only bound how long a test may take.
//
//   node test.mjs            (after `npm ci` here; run_test.sh does both)
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Chess } from 'chess.js';
import { parseOpenings, loadOpenings, parseArgs, splitCommand, engineOptions, applyUci } from './match.mjs';
import * as S from './stats.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const MATCH = path.join(HERE, 'match.mjs');
const FAKE = path.join(HERE, 'test', 'fake_engine.mjs');
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'kibitz-match-test-'));
process.on('exit', () => fs.rmSync(TMP, { recursive: true, force: true }));

const fake = (args = '') => `${JSON.stringify(process.execPath)} ${JSON.stringify(FAKE)} ${args}`;
let logNo = 0;
const newLog = () => path.join(TMP, `engine-${++logNo}.log`);
const near = (a, b, tol, what) => assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} is not within ${tol} of ${b}`);

/** Runs match.mjs; resolves { code, json, stderr }. `onSpawn(child)` may signal it. */
function runMatch(args, { onSpawn } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MATCH, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const line = out.trim().split('\n').filter(Boolean).pop();
      let json = null;
      try { json = line ? JSON.parse(line) : null; } catch { /* left null */ }
      resolve({ code, signal, json, stderr: err, stdout: out });
    });
    if (onSpawn) onSpawn(child);
  });
}

function pidsIn(log) {
  if (!fs.existsSync(log)) return [];
  return fs.readFileSync(log, 'utf8').split('\n').filter((l) => l.startsWith('pid ')).map((l) => Number(l.slice(4)));
}

function alive(pid) {
  try { process.kill(pid, 0); } catch { return false; }
  // A zombie (exited, not yet reaped by whoever adopted it) is gone for our purposes.
  try { return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')); } catch { return false; }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Every engine process named in the logs is gone (waits up to 10 s for the kernel to finish the kill). */
async function assertNoEngineLeft(...logs) {
  const pids = logs.flatMap(pidsIn);
  assert.ok(pids.length > 0, 'the fake engines logged no pid');
  for (let i = 0; i < 100 && pids.some(alive); i++) await sleep(100);
  const left = pids.filter(alive);
  for (const pid of left) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
  assert.deepEqual(left, [], 'engine processes outlived the runner');
}

function checkTotals(j) {
  assert.equal(j.wins + j.draws + j.losses, j.games);
  assert.equal(j.pentanomial.reduce((a, b) => a + b, 0), Math.floor(j.games / 2));
}

// ------------------------------------------------------------------ openings

test('the default openings are legal, 6 to 8 plies, named and distinct', async () => {
  const ops = await loadOpenings(path.join(HERE, 'openings.txt'));
  assert.ok(ops.length >= 50 && ops.length <= 100, `${ops.length} openings`);
  const seen = new Set();
  for (const op of ops) {
    assert.equal(op.fen, null);
    assert.ok(op.moves.length >= 6 && op.moves.length <= 8, `line ${op.line}: ${op.moves.length} plies`);
    assert.ok(op.name, `line ${op.line} has no name`);
    // Independently of parseOpenings: chess.js's own move() accepts each move.
    const c = new Chess();
    for (const m of op.moves) c.move({ from: m.slice(0, 2), to: m.slice(2, 4), promotion: m[4] });
    assert.ok(!c.isGameOver());
    const key = c.fen().split(' ').slice(0, 4).join(' ');
    assert.ok(!seen.has(key), `line ${op.line} repeats an earlier position`);
    seen.add(key);
  }
});

test('openings: FENs, comments, and bad lines rejected with their line number', () => {
  const ops = parseOpenings('# comment only\n\ne2e4 e7e5 # open\nrnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -\n', 'x');
  assert.equal(ops.length, 2);
  assert.deepEqual(ops[0], { line: 3, name: 'open', fen: null, moves: ['e2e4', 'e7e5'] });
  assert.equal(ops[1].fen, 'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1');
  assert.throws(() => parseOpenings('e2e4\ne2e4 e2e4\n', 'x'), /x:2: e2e4 is illegal/);
  assert.throws(() => parseOpenings('e2e4 e7e5 Nf3\n', 'x'), /"Nf3" is not a UCI move/);
  assert.throws(() => parseOpenings('rnbqkbnr/ppp/8 w - -\n', 'x'), /x:1: bad FEN/);
  assert.throws(() => parseOpenings('f2f3 e7e5 g2g4 d8h4\n', 'x'), /ends the game/);
  assert.throws(() => parseOpenings('# nothing\n', 'x'), /no opening/);
});

test('moves are checked exactly: promotion piece, castling, malformed', () => {
  const c = new Chess('8/P6k/8/8/8/8/8/K7 w - - 0 1');
  assert.equal(applyUci(c, 'a7a8'), null, 'a promotion needs its piece');
  assert.ok(applyUci(c, 'a7a8n'));
  const d = new Chess('r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1');
  assert.equal(applyUci(d, 'e1g1').san, 'O-O');
  for (const bad of ['', '0000', 'e1e1', 'e2e4q', 'E1G1', 'e1g1 ', null]) assert.equal(applyUci(new Chess(), bad), null, String(bad));
});

// ----------------------------------------------------------------- arguments

test('arguments', () => {
  assert.deepEqual(splitCommand(`build/kibitz uci`), ['build/kibitz', 'uci']);
  assert.deepEqual(splitCommand(`"/opt/my engine/x" --flag 'a b'  c\\ d`), ['/opt/my engine/x', '--flag', 'a b', 'c d']);
  const o = parseArgs(['--engine1', 'a uci', '--engine2', 'b', '--tc-clock', '5000+50', '--opt', 'Hash=64',
    '--engine2-opt', 'UCI_Elo=2500', '--engine2-opt', 'hash=16', '--sprt', '0,10', '--games', '100']);
  assert.deepEqual(o.limit, { kind: 'clock', base: 5000, inc: 50 });
  assert.deepEqual(o.sprt, { elo0: 0, elo1: 10, alpha: 0.05, beta: 0.05 });
  assert.deepEqual(engineOptions(o.optsBoth, o.opts1), [['Hash', '64']]);
  assert.deepEqual(engineOptions(o.optsBoth, o.opts2), [['hash', '16'], ['UCI_Elo', '2500']]);
  assert.equal(parseArgs(['--engine1', 'a', '--engine2', 'b', '--tc', '50']).moveTimeoutMs, 1100);
  assert.deepEqual(parseArgs(['--engine1', 'a', '--engine2', 'b', '--sprt', '-1,4,0.1,0.2']).sprt, { elo0: -1, elo1: 4, alpha: 0.1, beta: 0.2 });
  for (const bad of [[], ['--engine1', 'a'], ['--engine1', 'a', '--engine2', 'b', '--tc', '5', '--nodes', '9'],
    ['--engine1', 'a', '--engine2', 'b', '--tc-clock', '5s'], ['--engine1', 'a', '--engine2', 'b', '--sprt', '5,0'],
    ['--engine1', 'a', '--engine2', 'b', '--games', '-3'], ['--engine1', 'a', '--engine2', 'b', '--bogus']])
    assert.throws(() => parseArgs(bad), undefined, bad.join(' '));
});

// --------------------------------------------------------------- statistics

test('Elo, interval and likelihood of superiority by hand', () => {
  near(S.eloOfScore(0.75), 400 * Math.log10(3), 1e-9, 'elo(0.75)');   // 190.85
  near(S.scoreOfElo(400 * Math.log10(3)), 0.75, 1e-12, 'score');
  assert.equal(S.eloOfScore(1), null);
  assert.equal(S.eloOfScore(0), null);
  // 30 wins, 40 draws, 30 losses: s = 0.5, per-game variance (30 + 30) * 0.25 / 100 = 0.15,
  // standard error sqrt(0.15 / 100) = 0.03873, 95% bound 0.5 + 1.96 * 0.03873 = 0.575911.
  const g = S.gameStats(30, 40, 30);
  near(g.elo_95[1], -400 * Math.log10(1 / 0.5759112 - 1), 1e-3, 'elo_95 high');
  near(g.elo_95[0], -g.elo_95[1], 1e-9, 'symmetric');
  // LOS with 30 wins, 20 losses: 1/2 (1 + erf(10 / 10)) = 1/2 (1 + 0.8427008) = 0.9213504.
  near(S.los(30, 20), 0.9213504, 2e-7, 'los');
  assert.equal(S.los(0, 0), null);
  assert.equal(S.pairIndex(1, 0), 2);
  assert.equal(S.pairIndex(0.5, 1), 3);
});

test('SPRT: bounds, and the pentanomial LLR against independent values', () => {
  const b = S.sprtBounds(0.05, 0.05);
  near(b.upper, Math.log(19), 1e-12, 'upper');   // 2.9444
  near(b.lower, -Math.log(19), 1e-12, 'lower');
  // Worked by hand with the usual approximation N/2 ln(r0 / r1),
  // r(s) = sum p_i (a_i - s)^2, for pairs [LL, LD, DD, DW, WW] = [5, 30, 80, 50, 10]:
  // N = 175, mean = (30*0.25 + 80*0.5 + 50*0.75 + 10) / 175 = 95 / 175,
  // E[a^2] = (30*0.0625 + 80*0.25 + 50*0.5625 + 10) / 175 = 60 / 175,
  // r(s) = E[a^2] - 2 s mean + s^2; s0 = 0.5 (0 Elo), s1 = 1 / (1 + 10^(-10/400)).
  const s0 = 0.5, s1 = 1 / (1 + Math.pow(10, -1 / 40));
  const m = 95 / 175, m2 = 60 / 175;
  const r = (s) => m2 - 2 * s * m + s * s;
  const hand = (175 / 2) * Math.log(r(s0) / r(s1));
  near(S.llrApprox(S.PAIR_VALUES, [5, 30, 80, 50, 10], s0, s1), hand, 1e-9, 'approximate LLR');
  near(hand, 1.8145282, 1e-6, 'hand value');
  // The exact generalised LLR (maximum-likelihood distributions with the
  // means of H0 and H1), as fishtest computes it; reference values from a
  // separate Newton-iteration implementation (Python), counts with zeros
  // regularised to 1e-3.
  const cases = [
    [[5, 30, 80, 50, 10], 0, 10, 1.7920447431321596],
    [[10, 40, 100, 60, 15], 0, 5, 0.8605389955353315],
    [[0, 3, 10, 2, 0], 0, 10, -0.24286105384289525],
    [[20, 60, 130, 50, 10], 0, 10, -2.551986735351999],
  ];
  for (const [penta, e0, e1, want] of cases) {
    const t = S.sprt(penta, e0, e1);
    near(t.llr, want, 1e-9, `LLR ${penta} [${e0}, ${e1}]`);
    near(t.llr, S.llrApprox(S.PAIR_VALUES, penta, S.scoreOfElo(e0), S.scoreOfElo(e1)), 0.03, 'exact vs approximate');
  }
  assert.equal(S.sprt([20, 60, 130, 50, 10], 0, 10).result, 'continue');
  assert.equal(S.sprt([20, 60, 130, 50, 10], 0, 10, 0.1, 0.1).result, 'H0');  // lower bound ln(1/9) = -2.197
  assert.equal(S.sprt([0, 0, 0, 0, 0], 0, 10).llr, 0);
  // The MLE distributions really have the asked mean and sum to one.
  const q = S.mleWithMean(S.PAIR_VALUES, [0.1, 0.2, 0.4, 0.2, 0.1], 0.55);
  near(q.reduce((a, x) => a + x, 0), 1, 1e-9, 'sum');
  near(q.reduce((a, x, i) => a + x * S.PAIR_VALUES[i], 0), 0.55, 1e-9, 'mean');
});

// ------------------------------------------------------------------- matches
// Each starts a runner and a few fake engines; most of their time is spent
// waiting on deadlines, so they run a few at a time.
const matchTests = [];
const matchTest = (name, fn) => matchTests.push([name, fn]);

matchTest('a clocked match between two legal-move engines: counts, options, PGN, no process left', async () => {
  const l1 = newLog(), l2 = newLog();
  const pgn = path.join(TMP, 'games.pgn');
  const { code, json: j, stderr } = await runMatch(['--engine1', fake(`--name One --log ${l1}`), '--engine2', fake(`--name Two --seed 7 --log ${l2}`),
    '--games', '4', '--concurrency', '2', '--max-plies', '40', '--tc-clock', '600000+100', '--opt', 'Hash=8',
    '--engine2-opt', 'Threads=2', '--engine2-opt', 'NoSuchOption=1', '--pgn', pgn]);
  assert.equal(code, 0, stderr);
  assert.equal(j.games, 4);
  assert.equal(j.engine1, 'One');
  assert.equal(j.engine2, 'Two');
  checkTotals(j);
  assert.deepEqual(j.faults, { engine1: { illegal: 0, timeout: 0, crash: 0 }, engine2: { illegal: 0, timeout: 0, crash: 0 } });
  assert.equal(j.stopped, 'done');
  assert.equal(stderr.split('\n').filter((l) => /^game \d+\/4: /.test(l)).length, 4);
  assert.match(stderr, /warning: engine2 \(Two\) lists no UCI option "NoSuchOption"/);
  const log1 = fs.readFileSync(l1, 'utf8'), log2 = fs.readFileSync(l2, 'utf8');
  assert.match(log1, /^setoption name Hash value 8$/m);
  assert.doesNotMatch(log1, /Threads/);
  assert.match(log2, /^setoption name Threads value 2$/m);
  assert.match(log1, /^go wtime \d+ btime \d+ winc 100 binc 100$/m);
  assert.match(log1, /^position startpos moves e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 b5a4 g8f6/m);
  // The PGN: four games, each replayable by chess.js to its PlyCount.
  const games = fs.readFileSync(pgn, 'utf8').trim().split(/\n\n(?=\[Event )/);
  assert.equal(games.length, 4);
  for (const g of games) {
    assert.match(g, /\[TimeControl "600\+0.1"\]/);
    const c = new Chess();
    c.loadPgn(g);
    assert.equal(String(c.history().length), /\[PlyCount "(\d+)"\]/.exec(g)[1]);
  }
  await assertNoEngineLeft(l1, l2);
});

matchTest('an illegal move loses and is counted for that engine', async () => {
  const l1 = newLog(), l2 = newLog();
  const { code, json: j } = await runMatch(['--engine1', fake(`--log ${l1}`), '--engine2', fake(`--mode illegal --after 2 --log ${l2}`),
    '--games', '2', '--nodes', '1']);
  assert.equal(code, 0);
  assert.equal(j.wins, 2);
  assert.deepEqual(j.faults.engine2, { illegal: 2, timeout: 0, crash: 0 });
  assert.equal(j.illegal, 2);
  assert.deepEqual(j.pentanomial, [0, 0, 0, 0, 1]);
  await assertNoEngineLeft(l1, l2);
});

matchTest('a crash loses, the engine is started again for the next game', async () => {
  const l1 = newLog(), l2 = newLog();
  const { code, json: j, stderr } = await runMatch(['--engine1', fake(`--mode crash --after 1 --log ${l1}`), '--engine2', fake(`--log ${l2}`),
    '--games', '4', '--nodes', '1']);
  assert.equal(code, 0, stderr);
  assert.equal(j.losses, 4);
  assert.deepEqual(j.faults.engine1, { illegal: 0, timeout: 0, crash: 4 });
  assert.equal(j.crashes, 4);
  assert.equal(pidsIn(l1).length, 4, 'one process per game (the first also answered the start-up check)');
  await assertNoEngineLeft(l1, l2);
});

matchTest('an engine that hangs loses on the move deadline, and is killed even though it ignores SIGTERM', async () => {
  const l1 = newLog(), l2 = newLog();
  // engine2 hangs on its first move; engine1 (White in game 1) makes one move
  // first, with the same generous deadline.
  const { code, json: j } = await runMatch(['--engine1', fake(`--log ${l1}`), '--engine2', fake(`--mode hang --log ${l2}`),
    '--games', '2', '--depth', '3', '--move-timeout-ms', '2500']);
  assert.equal(code, 0);
  assert.equal(j.wins, 2);
  assert.deepEqual(j.faults.engine2, { illegal: 0, timeout: 2, crash: 0 });
  await assertNoEngineLeft(l1, l2);
});

matchTest('using more than the clock loses on time', async () => {
  const l1 = newLog(), l2 = newLog();
  // One game: engine1 (White) answers at once, engine2 sleeps 60 s on its
  // first move against a 3 s clock.
  const { code, json: j } = await runMatch(['--engine1', fake(`--log ${l1}`), '--engine2', fake(`--mode slow --sleep 60000 --log ${l2}`),
    '--games', '1', '--tc-clock', '3000+0', '--time-grace-ms', '50']);
  assert.equal(code, 0);
  assert.equal(j.wins, 1);
  assert.deepEqual(j.faults.engine2, { illegal: 0, timeout: 1, crash: 0 });
  assert.deepEqual(j.faults.engine1, { illegal: 0, timeout: 0, crash: 0 });
  await assertNoEngineLeft(l1, l2);
});

/** Smallest number of identical pairs for which the SPRT decides. */
function pairsToDecide(index, e0, e1) {
  for (let n = 1; ; n++) {
    const p = [0, 0, 0, 0, 0];
    p[index] = n;
    if (S.sprt(p, e0, e1).result !== 'continue') return n;
  }
}

matchTest('SPRT stops the run as soon as it accepts H1', async () => {
  const l1 = newLog(), l2 = newLog();
  const n = pairsToDecide(4, 0, 200);
  assert.equal(n, 8);   // 7 pairs give LLR 2.929, just under ln(19) = 2.944
  const { code, json: j, stderr } = await runMatch(['--engine1', fake(`--log ${l1}`), '--engine2', fake(`--mode illegal --log ${l2}`),
    '--games', '100', '--nodes', '1', '--sprt', '0,200']);
  assert.equal(code, 0, stderr);
  assert.equal(j.stopped, 'sprt');
  assert.equal(j.sprt.result, 'H1');
  assert.equal(j.games, 2 * n);
  assert.deepEqual(j.pentanomial, [0, 0, 0, 0, n]);
  assert.ok(j.sprt.llr >= j.sprt.upper);
  assert.match(stderr, /sprt llr [-\d.]+ \(-2\.94, 2\.94\) H1/);
  await assertNoEngineLeft(l1, l2);
});

matchTest('SPRT accepts H0 for a losing engine, with concurrency', async () => {
  const l1 = newLog(), l2 = newLog();
  const n = pairsToDecide(0, 0, 200);
  const { code, json: j } = await runMatch(['--engine1', fake(`--mode illegal --log ${l1}`), '--engine2', fake(`--log ${l2}`),
    '--games', '100', '--nodes', '1', '--sprt', '0,200,0.05,0.05', '--concurrency', '2']);
  assert.equal(code, 0);
  assert.equal(j.sprt.result, 'H0');
  assert.equal(j.pentanomial[0], n);
  assert.equal(j.losses, j.games);
  assert.ok(j.games < 100);
  await assertNoEngineLeft(l1, l2);
});

matchTest('SIGINT stops the run: exit 130, a JSON line, every engine killed', async () => {
  const l1 = newLog(), l2 = newLog();
  const { code, json: j } = await runMatch(['--engine1', fake(`--mode hang --log ${l1}`), '--engine2', fake(`--mode hang --log ${l2}`),
    '--games', '10', '--concurrency', '2', '--nodes', '1', '--move-timeout-ms', '600000'], {
    onSpawn: async (child) => {
      // Wait until both workers' white engines are thinking, then interrupt.
      for (let i = 0; i < 600; i++) {
        const gos = [l1, l2].map((l) => (fs.existsSync(l) ? fs.readFileSync(l, 'utf8').match(/^go /gm) || [] : []).length);
        if (gos[0] + gos[1] >= 2) break;
        await sleep(50);
      }
      child.kill('SIGINT');
    },
  });
  assert.equal(code, 130);
  assert.equal(j.stopped, 'signal');
  assert.equal(j.games, 0);
  await assertNoEngineLeft(l1, l2);
});

matchTest('--timeout-s bounds the run: exit 3, engines killed', async () => {
  const l1 = newLog(), l2 = newLog();
  const { code, json: j } = await runMatch(['--engine1', fake(`--mode hang --log ${l1}`), '--engine2', fake(`--log ${l2}`),
    '--games', '2', '--nodes', '1', '--move-timeout-ms', '600000', '--timeout-s', '5']);
  assert.equal(code, 3);
  assert.equal(j.stopped, 'timeout');
  await assertNoEngineLeft(l1, l2);
});

matchTest('an engine that cannot start is an error (exit 2), not a game', async () => {
  const l1 = newLog();
  let r = await runMatch(['--engine1', path.join(TMP, 'no-such-engine'), '--engine2', fake()]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /engine1 .* cannot be started/);
  // engine1 is started (and found wanting) first, so engine2's start-up time does not matter.
  r = await runMatch(['--engine1', fake(`--mode noinit --log ${l1}`), '--engine2', fake(), '--init-timeout-ms', '2000']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /engine1 .* cannot be started: no uciok/);
  await assertNoEngineLeft(l1);
  r = await runMatch(['--engine1', fake(), '--engine2', fake(), '--openings', path.join(TMP, 'none.txt')]);
  assert.equal(r.code, 2);
  r = await runMatch(['--engine1', fake()]);
  assert.equal(r.code, 2);
});

matchTest('FEN openings are sent as position fen', async () => {
  const l1 = newLog(), l2 = newLog();
  const file = path.join(TMP, 'fen.txt');
  fs.writeFileSync(file, '4k3/8/8/8/8/8/4P3/4K3 w - - 0 1  # pawn ending\n');
  const pgn = path.join(TMP, 'fen.pgn');
  const { code, json: j } = await runMatch(['--engine1', fake(`--mode mater --log ${l1}`), '--engine2', fake(`--log ${l2}`),
    '--games', '2', '--nodes', '1', '--openings', file, '--pgn', pgn, '--max-plies', '30']);
  assert.equal(code, 0);
  checkTotals(j);
  assert.match(fs.readFileSync(l1, 'utf8'), /^position fen 4k3\/8\/8\/8\/8\/8\/4P3\/4K3 w - - 0 1( moves .*)?$/m);
  const text = fs.readFileSync(pgn, 'utf8');
  assert.match(text, /\[SetUp "1"\]\n\[FEN "4k3\/8\/8\/8\/8\/8\/4P3\/4K3 w - - 0 1"\]\n\[Opening "pawn ending"\]/);
  await assertNoEngineLeft(l1, l2);
});

test('matches against the fake engine', { concurrency: 4 }, async (t) => {
  await Promise.all(matchTests.map(([name, fn]) => t.test(name, fn)));
});

test('pgn_positions writes the quiet positions of finished games once each', async () => {
  const pgn = path.join(TMP, 'positions.pgn');
  // Game 1: 1. e4 d5 2. exd5 (capture) Qxd5 (capture) 3. Nc3 Qe5+ 4. Be2 (in check) 1-0.
  // Game 2: no result: skipped. Game 3: 1. e4 e5, drawn.
  fs.writeFileSync(pgn, [
    '[Event "a"]', '[Result "1-0"]', '', '1. e4 {+0.30/10 0.1s} d5 2. exd5 Qxd5 3. Nc3 Qe5+ 4. Be2 1-0', '',
    '[Event "b"]', '[Result "*"]', '', '1. e4 e5 *', '',
    '[Event "c"]', '[Result "1/2-1/2"]', '', '1. e4 e5 1/2-1/2', '',
  ].join('\n'));
  const child = spawn(process.execPath, [path.join(HERE, 'pgn_positions.mjs'), pgn], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '', err = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { err += d; });
  const code = await new Promise((resolve) => child.on('close', resolve));
  assert.equal(code, 0, err);
  const lines = out.trim().split('\n');
  const start = new Chess();
  const after = (...moves) => { const c = new Chess(); for (const m of moves) c.move(m); return c.fen(); };
  assert.deepEqual(lines, [
    `${start.fen()};1;0`,                       // before 1. e4
    `${after('e4')};1;0`,                       // before 1... d5 (2. exd5 and 2... Qxd5 are captures)
    `${after('e4', 'd5', 'exd5', 'Qxd5')};1;0`, // before 3. Nc3
    `${after('e4', 'd5', 'exd5', 'Qxd5', 'Nc3')};1;0`, // before 3... Qe5+ (4. Be2 is played in check)
  ]); // game 3 (1. e4 e5, drawn) passes only through positions written before
  assert.match(err, /4 positions, 1 games skipped/);
});

test('combine adds runs up: W-D-L, pentanomial, Elo and the SPRT of all the games', async () => {
  const run = (w, d, l, penta) => JSON.stringify({ games: w + d + l, wins: w, draws: d, losses: l, pentanomial: penta });
  const a = path.join(TMP, 'combine-a.json'), b = path.join(TMP, 'combine-b.json');
  fs.writeFileSync(a, 'not json\n' + run(7, 18, 75, [25, 18, 7, 0, 0]) + '\n');
  fs.writeFileSync(b, run(10, 15, 75, [25, 15, 10, 0, 0]));
  const child = spawn(process.execPath, [path.join(HERE, 'combine.mjs'), '--sprt', '0,10', a, b], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '', err = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { err += d; });
  const code = await new Promise((resolve) => child.on('close', resolve));
  assert.equal(code, 0, err);
  const r = JSON.parse(out);
  assert.deepEqual([r.runs, r.games, r.wins, r.draws, r.losses], [2, 200, 17, 33, 150]);
  assert.deepEqual(r.pentanomial, [50, 33, 17, 0, 0]);
  const st = S.gameStats(17, 33, 150);
  assert.equal(r.score, 0.1675);
  assert.ok(Math.abs(r.elo - st.elo) < 0.05 && r.elo_95[0] < r.elo && r.elo < r.elo_95[1]);
  assert.ok(Math.abs(r.sprt.llr - S.sprt([50, 33, 17, 0, 0], 0, 10).llr) < 1e-4);
  assert.equal(r.sprt.result, 'continue');
});

// ------------------------------------------------------------------ Chess960

const STOCKFISH = ['/usr/games/stockfish', '/usr/bin/stockfish'].find((p) => fs.existsSync(p));

test('Chess960 start positions by number, and SAN of castling and captures', async () => {
  const { chess960StartFen, sanOf } = await import('./chess960.mjs');
  assert.equal(chess960StartFen(518), 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1');
  assert.equal(chess960StartFen(0), 'bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w KQkq - 0 1');
  assert.equal(new Set(Array.from({ length: 960 }, (_, n) => chess960StartFen(n))).size, 960);
  assert.throws(() => chess960StartFen(960), RangeError);
  const quiet = { inCheck: false, legal: ['a2a3'] };
  const pos = { fen: '4k3/8/8/8/8/8/8/R3K1R1 w AG - 0 1', legal: ['e1g1', 'e1a1', 'a1a8', 'g1g8'] };
  assert.equal(sanOf(pos, 'e1g1', quiet), 'O-O');
  assert.equal(sanOf(pos, 'e1a1', quiet), 'O-O-O');
  assert.equal(sanOf(pos, 'a1a8', { inCheck: true, legal: ['e8e7'] }), 'Ra8+');
  assert.equal(sanOf({ fen: '4k3/8/8/8/8/8/8/R3K2R w - - 0 1', legal: ['a1d1', 'h1d1'] }, 'a1d1', quiet), 'Rad1');
  assert.equal(sanOf({ fen: '4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1', legal: ['e4d5'] }, 'e4d5', quiet), 'exd5');
});

test('Chess960 games refereed by Stockfish: castling king takes rook, nothing else', { skip: !STOCKFISH && 'no stockfish' }, async () => {
  const { Chess960Game, Chess960Referee, chess960StartFen } = await import('./chess960.mjs');
  const referee = new Chess960Referee([STOCKFISH]);
  try {
    await referee.start();
    const game = await Chess960Game.start(referee, chess960StartFen(518));
    for (const m of ['e2e4', 'e7e5', 'g1f3', 'b8c6', 'f1c4', 'g8f6']) assert.ok(await game.play(m), m);
    assert.equal(await game.play('e1g1'), null, 'e1g1 is not Chess960 castling');
    assert.equal((await game.play('e1h1')).san, 'O-O');
    assert.equal(game.fen(), 'r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQ1RK1 b ha - 5 4');  // Stockfish writes Shredder-FEN
    assert.equal(game.turn(), 'b');
    const mated = await Chess960Game.start(referee, '6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1');
    assert.equal((await mated.play('a1a8')).san, 'Ra8#');
    assert.ok(mated.isCheckmate() && !mated.isStalemate());
    const bare = await Chess960Game.start(referee, '4k3/8/8/8/8/8/8/2B1KB2 w - - 0 1');
    assert.ok(!bare.isInsufficientMaterial(), 'bishops on both colours can mate');
    const same = await Chess960Game.start(referee, '4k3/8/8/8/8/4B3/8/2B1K3 w - - 0 1');
    assert.ok(same.isInsufficientMaterial(), 'bishops all on one colour cannot');
  } finally {
    referee.kill();
  }
});

test('a Chess960 match from numbered start positions: no illegal move, a Variant tag', { skip: !STOCKFISH && 'no stockfish' }, async () => {
  const pgn = path.join(TMP, 'c960.pgn');
  const { code, json: j, stderr } = await runMatch(['--engine1', STOCKFISH, '--engine2', STOCKFISH, '--chess960',
    '--depth', '1', '--games', '2', '--seed', '7', '--max-plies', '40', '--pgn', pgn]);
  assert.equal(code, 0, stderr);
  assert.equal(j.games, 2);
  assert.equal(j.illegal, 0);
  const text = fs.readFileSync(pgn, 'utf8');
  assert.match(text, /\[Variant "Chess960"\]\n\[SetUp "1"\]\n\[FEN "[bnqrk]{8}\/pppppppp\/8\/8\/8\/8\/PPPPPPPP\/[BNQRK]{8} w KQkq - 0 1"\]/);
  assert.match(stderr, /opening line \d+ \(Chess960 #\d+\)/);
});
