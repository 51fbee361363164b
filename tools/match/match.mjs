#!/usr/bin/env node
// Kibitz's UCI match runner: plays two UCI chess engines against each other,
// referees every move with chess.js, and prints the result from engine1's
// point of view as one JSON line on stdout (Elo with its 95% interval,
// likelihood of superiority, faults, and optionally a pentanomial SPRT that
// stops the run as soon as it decides). See README.md beside this file.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { gameStats, pairStats, los, sprt, pairIndex } from './stats.mjs';
import { Chess960Game, Chess960Referee, chess960StartFen } from './chess960.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const START_FEN = 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1';
const UCI_MOVE = /^[a-h][1-8][a-h][1-8][qrbn]?$/;

let Chess, validateFen;
async function loadChess() {
  if (Chess) return;
  try {
    ({ Chess, validateFen } = await import('chess.js'));
  } catch (e) {
    throw new UsageError(`chess.js is not installed: run \`npm ci\` in ${HERE} (${e.message})`);
  }
}

export class UsageError extends Error {}

// ---------------------------------------------------------------- arguments

const HELP = `usage: node match.mjs --engine1 CMD --engine2 CMD [options]

engines
  --engine1 CMD, --engine2 CMD   engine commands; may carry arguments, "quoted" or 'quoted'
  --engine1-opt Name=Value       UCI option for engine1 (repeatable)
  --engine2-opt Name=Value       UCI option for engine2 (repeatable)
  --opt Name=Value               UCI option for both (an engine's own option wins)
limits (one of them; default --tc 100)
  --tc-clock BASE+INC   clock in ms: go wtime/btime/winc/binc; using more than the time left
                        plus --time-grace-ms loses the game
  --tc MS               go movetime MS
  --nodes N             go nodes N
  --depth D             go depth D
games
  --games N             games to play (default 2); openings are played in pairs, colours swapped
  --concurrency K       games at the same time, each with its own engine processes (default 1)
  --openings FILE       one opening per line, UCI moves from the start or a FEN, # comments
                        (default: openings.txt beside this script)
  --seed S              shuffle the openings with seed S (default 0: file order)
  --max-plies P         a game still going after P plies (opening included) is a draw (default 400)
  --chess960            Chess960: UCI_Chess960 for both engines, openings the 960 start positions
                        (Scharnagl order, --seed shuffles them) unless --openings gives FENs,
                        every move refereed by --referee
  --referee CMD         the UCI engine that referees Chess960 games (default /usr/games/stockfish)
  --sprt ELO0,ELO1[,ALPHA,BETA]
                        pentanomial SPRT in logistic Elo (alpha = beta = 0.05 by default);
                        the run stops as soon as it accepts H0 or H1
output and robustness
  --pgn FILE            write every finished game to FILE (overwritten at the start)
  --time-grace-ms MS    grace past a clock's zero (default 100)
  --move-timeout-ms MS  deadline for a bestmove without a clock (default 2 x movetime + 1000,
                        or 60000 with --nodes or --depth)
  --init-timeout-ms MS  deadline for uciok and readyok (default 10000)
  --timeout-s S         bound on the whole run (default none)
  --debug               print all UCI traffic to stderr
  --help                this text
`;

/** Splits a command line on blanks, honouring '...' and "..." quoting and backslash escapes. */
export function splitCommand(cmd) {
  const out = [];
  let cur = '', inWord = false, quote = null;
  for (let i = 0; i < cmd.length; i++) {
    const c = cmd[i];
    if (quote) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && i + 1 < cmd.length) cur += cmd[++i];
      else cur += c;
    } else if (c === '"' || c === "'") {
      quote = c; inWord = true;
    } else if (c === '\\' && i + 1 < cmd.length) {
      cur += cmd[++i]; inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) { out.push(cur); cur = ''; inWord = false; }
    } else {
      cur += c; inWord = true;
    }
  }
  if (quote) throw new UsageError(`unclosed quote in command: ${cmd}`);
  if (inWord) out.push(cur);
  return out;
}

function parseOption(text) {
  const eq = text.indexOf('=');
  if (eq === 0) throw new UsageError(`bad UCI option "${text}": expected Name=Value`);
  return eq < 0 ? [text.trim(), null] : [text.slice(0, eq).trim(), text.slice(eq + 1).trim()];
}

function positiveInt(name, v, { zero = false } = {}) {
  if (!/^\d+$/.test(String(v))) throw new UsageError(`${name} needs a whole number, got "${v}"`);
  const n = Number(v);
  if (!zero && n === 0) throw new UsageError(`${name} must be positive`);
  return n;
}

export function parseArgs(argv) {
  const o = {
    engine1: null, engine2: null, opts1: [], opts2: [], optsBoth: [],
    limit: null, games: 2, concurrency: 1, openings: path.join(HERE, 'openings.txt'), seed: 0,
    maxPlies: 400, sprt: null, pgn: null, graceMs: 100, moveTimeoutMs: null, initTimeoutMs: 10000,
    timeoutS: null, debug: false, help: false, chess960: false, referee: '/usr/games/stockfish',
  };
  let openingsGiven = false;
  const setLimit = (l) => {
    if (o.limit) throw new UsageError('give only one of --tc-clock, --tc, --nodes, --depth');
    o.limit = l;
  };
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    let inline = null;
    if (a.startsWith('--') && a.includes('=') && !a.startsWith('--engine') && !a.startsWith('--opt')) {
      inline = a.slice(a.indexOf('=') + 1);
      a = a.slice(0, a.indexOf('='));
    }
    const val = () => {
      if (inline !== null) return inline;
      if (i + 1 >= argv.length) throw new UsageError(`${a} needs a value`);
      return argv[++i];
    };
    switch (a) {
      case '--engine1': o.engine1 = val(); break;
      case '--engine2': o.engine2 = val(); break;
      case '--engine1-opt': o.opts1.push(parseOption(val())); break;
      case '--engine2-opt': o.opts2.push(parseOption(val())); break;
      case '--opt': o.optsBoth.push(parseOption(val())); break;
      case '--tc-clock': {
        const v = val();
        const m = /^(\d+)(?:\+(\d+))?$/.exec(v);
        if (!m || Number(m[1]) === 0) throw new UsageError(`--tc-clock needs BASE+INC in ms, e.g. 5000+50, got "${v}"`);
        setLimit({ kind: 'clock', base: Number(m[1]), inc: Number(m[2] || 0) });
        break;
      }
      case '--tc': setLimit({ kind: 'movetime', ms: positiveInt(a, val()) }); break;
      case '--nodes': setLimit({ kind: 'nodes', n: positiveInt(a, val()) }); break;
      case '--depth': setLimit({ kind: 'depth', d: positiveInt(a, val()) }); break;
      case '--games': o.games = positiveInt(a, val()); break;
      case '--concurrency': o.concurrency = positiveInt(a, val()); break;
      case '--openings': o.openings = val(); openingsGiven = true; break;
      case '--chess960': o.chess960 = true; break;
      case '--referee': o.referee = val(); break;
      case '--seed': o.seed = positiveInt(a, val(), { zero: true }); break;
      case '--max-plies': o.maxPlies = positiveInt(a, val()); break;
      case '--pgn': o.pgn = val(); break;
      case '--time-grace-ms': o.graceMs = positiveInt(a, val(), { zero: true }); break;
      case '--move-timeout-ms': o.moveTimeoutMs = positiveInt(a, val()); break;
      case '--init-timeout-ms': o.initTimeoutMs = positiveInt(a, val()); break;
      case '--timeout-s': o.timeoutS = positiveInt(a, val()); break;
      case '--sprt': {
        const v = val();
        const parts = v.split(',').map((x) => Number(x));
        if (!(parts.length === 2 || parts.length === 4) || parts.some((x) => !Number.isFinite(x)))
          throw new UsageError(`--sprt needs ELO0,ELO1[,ALPHA,BETA], got "${v}"`);
        const [elo0, elo1, alpha = 0.05, beta = 0.05] = parts;
        if (!(elo1 > elo0)) throw new UsageError('--sprt: ELO1 must be greater than ELO0');
        if (!(alpha > 0 && alpha < 0.5 && beta > 0 && beta < 0.5)) throw new UsageError('--sprt: ALPHA and BETA must be in (0, 0.5)');
        o.sprt = { elo0, elo1, alpha, beta };
        break;
      }
      case '--debug': o.debug = true; break;
      case '--help': case '-h': o.help = true; break;
      default: throw new UsageError(`unknown argument "${argv[i]}" (--help lists the options)`);
    }
  }
  if (o.help) return o;
  if (!o.engine1 || !o.engine2) throw new UsageError('--engine1 and --engine2 are required');
  for (const cmd of [o.engine1, o.engine2]) if (splitCommand(cmd).length === 0) throw new UsageError('empty engine command');
  if (!o.limit) o.limit = { kind: 'movetime', ms: 100 };
  if (o.chess960) {
    if (!openingsGiven) o.openings = null;  // the 960 start positions
    if (!o.optsBoth.some(([k]) => k.toLowerCase() === 'uci_chess960')) o.optsBoth.push(['UCI_Chess960', 'true']);
    if (splitCommand(o.referee).length === 0) throw new UsageError('empty --referee command');
  }
  if (o.moveTimeoutMs === null) o.moveTimeoutMs = o.limit.kind === 'movetime' ? 2 * o.limit.ms + 1000 : 60000;
  return o;
}

/** UCI options for one engine: --opt first, then that engine's own (which win). */
export function engineOptions(both, own) {
  const map = new Map();
  for (const [k, v] of [...both, ...own]) map.set(k.toLowerCase(), [k, v]);
  return [...map.values()];
}

// ----------------------------------------------------------------- openings

/**
 * Reads an openings file: one opening per line, either UCI moves from the
 * start position or a FEN (the last two fields may be left out); '#' starts
 * a comment, and a comment on an opening line names it. Every opening is
 * checked with chess.js; a bad one throws with its line number.
 */
export function parseOpenings(text, source = 'openings') {
  const out = [];
  text.split(/\r?\n/).forEach((raw, idx) => {
    const lineNo = idx + 1;
    const hash = raw.indexOf('#');
    const body = (hash >= 0 ? raw.slice(0, hash) : raw).trim();
    const name = hash >= 0 ? raw.slice(hash + 1).trim() : '';
    if (!body) return;
    const where = `${source}:${lineNo}`;
    let fen = null, moves = [];
    if (body.includes('/')) {
      const fields = body.split(/\s+/);
      if (fields.length === 4) fields.push('0', '1');
      fen = fields.join(' ');
      const v = validateFen(fen);
      if (!v.ok) throw new UsageError(`${where}: bad FEN "${body}": ${v.error}`);
    } else {
      moves = body.split(/\s+/);
    }
    const chess = new Chess(fen || START_FEN);
    for (const m of moves) {
      if (!UCI_MOVE.test(m)) throw new UsageError(`${where}: "${m}" is not a UCI move`);
      if (!applyUci(chess, m)) throw new UsageError(`${where}: ${m} is illegal after ${chess.fen()}`);
    }
    if (chess.isGameOver()) throw new UsageError(`${where}: the opening ends the game`);
    out.push({ line: lineNo, name, fen, moves });
  });
  if (out.length === 0) throw new UsageError(`${source}: no opening in the file`);
  return out;
}

/**
 * Chess960 openings: the 960 start positions, or a file of FENs (one a
 * line, # comments), which the referee checks before the first game.
 */
export function chess960Openings(text) {
  if (text === null)
    return Array.from({ length: 960 }, (_, n) => ({ line: n, name: `Chess960 #${n}`, fen: chess960StartFen(n), moves: [] }));
  const out = [];
  text.split('\n').forEach((raw, i) => {
    const hash = raw.indexOf('#');
    const name = hash >= 0 ? raw.slice(hash + 1).trim() : '';
    const fields = (hash >= 0 ? raw.slice(0, hash) : raw).trim().split(/\s+/).filter(Boolean);
    if (fields.length === 0) return;
    if (fields.length < 4 || fields.length > 6 || !fields[0].includes('/'))
      throw new UsageError(`openings line ${i + 1}: with --chess960 every opening is a FEN`);
    if (fields.length === 4) fields.push('0', '1');
    if (fields.length === 5) fields.push('1');
    out.push({ line: i + 1, name, fen: fields.join(' '), moves: [] });
  });
  if (out.length === 0) throw new UsageError('no opening in the file');
  return out;
}

export async function loadOpenings(file) {
  await loadChess();
  let text;
  try { text = fs.readFileSync(file, 'utf8'); } catch (e) { throw new UsageError(`cannot read openings file: ${e.message}`); }
  return parseOpenings(text, file);
}

/** Plays a UCI move if it is exactly one of the legal moves; returns chess.js's move or null. */
export function applyUci(chess, uci) {
  if (typeof uci !== 'string' || !UCI_MOVE.test(uci)) return null;
  const from = uci.slice(0, 2), to = uci.slice(2, 4), promo = uci.slice(4) || undefined;
  const legal = chess.moves({ verbose: true }).find((m) => m.from === from && m.to === to && m.promotion === promo);
  if (!legal) return null;
  return chess.move({ from, to, promotion: promo });
}

/** Small seeded generator (mulberry32), for a reproducible opening order. */
function shuffled(n, seed) {
  const order = Array.from({ length: n }, (_, i) => i);
  if (!seed) return order;
  let a = seed >>> 0;
  const rnd = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

// ------------------------------------------------------------------- engines

/** Every engine process still alive, so that any way out of the run can kill it. */
const liveEngines = new Set();

function killAllSync() {
  for (const e of [...liveEngines]) e.kill();
}

/** Engine processes not yet reaped; waiting for them leaves no zombie behind. */
const unreaped = new Set();
function reaped(timeoutMs) {
  return Promise.race([
    Promise.all([...unreaped].map((p) => new Promise((r) => p.once('exit', r)))),
    new Promise((r) => setTimeout(r, timeoutMs)),
  ]);
}

class Engine {
  constructor(label, cmd, options, debug) {
    this.label = label;       // "engine1" or "engine2"
    this.cmd = cmd;
    this.options = options;
    this.debug = debug;
    this.name = label;
    this.uciOptions = new Set();
    this.proc = null;
    this.exited = true;
    this.waiter = null;
    this.score = null;
    this.depth = null;
  }

  log(dir, line) {
    if (this.debug) process.stderr.write(`[${this.label} ${this.proc ? this.proc.pid : '-'} ${dir}] ${line}\n`);
  }

  send(line) {
    this.log('<', line);
    if (this.exited || !this.proc.stdin.writable) return;
    try { this.proc.stdin.write(line + '\n'); } catch { /* the exit handler reports it */ }
  }

  onLine(line) {
    this.log('>', line);
    const t = line.trim().split(/\s+/);
    if (t[0] === 'id' && t[1] === 'name') this.name = line.trim().slice(line.trim().indexOf('name') + 5).trim() || this.name;
    else if (t[0] === 'option' && t[1] === 'name') {
      const m = /^option\s+name\s+(.*?)\s+type\s/.exec(line.trim());
      if (m) this.uciOptions.add(m[1].toLowerCase());
    } else if (t[0] === 'info') {
      for (let i = 1; i < t.length; i++) {
        if (t[i] === 'depth') this.depth = Number(t[i + 1]);
        else if (t[i] === 'score' && (t[i + 1] === 'cp' || t[i + 1] === 'mate')) {
          this.score = { kind: t[i + 1], value: Number(t[i + 2]) };
          i += 2;
        }
      }
    }
    if (this.waiter && this.waiter.test(t)) {
      const w = this.waiter;
      this.waiter = null;
      clearTimeout(w.timer);
      w.resolve({ ok: true, tokens: t });
    }
  }

  /** Resolves { ok: true, tokens } on the first line passing `test`, else { ok: false, why }. */
  waitFor(test, timeoutMs) {
    return new Promise((resolve) => {
      if (this.exited) return resolve({ ok: false, why: 'crash' });
      const timer = setTimeout(() => {
        if (this.waiter && this.waiter.resolve === resolve) this.waiter = null;
        resolve({ ok: false, why: 'timeout' });
      }, timeoutMs);
      this.waiter = { test, resolve, timer };
    });
  }

  /** Starts the process and does the UCI handshake: true when it answered uciok and readyok, else 'timeout' or 'crash'. */
  async start(initTimeoutMs) {
    const [file, ...args] = splitCommand(this.cmd);
    this.exited = false;
    this.uciOptions = new Set();
    try {
      // detached: the engine leads its own process group, so kill() reaches
      // anything it started as well.
      this.proc = spawn(file, args, { stdio: ['pipe', 'pipe', this.debug ? 'inherit' : 'ignore'], detached: true });
    } catch (e) {
      this.exited = true;
      this.startError = e.message;
      return 'crash';
    }
    liveEngines.add(this);
    const proc = this.proc;
    unreaped.add(proc);
    proc.on('exit', () => unreaped.delete(proc));
    proc.on('error', (e) => { this.startError = e.message; unreaped.delete(proc); this.onExit(proc); });
    // 'close' comes after the last line of output, so a bestmove written just
    // before exiting still counts.
    proc.on('close', () => this.onExit(proc));
    proc.stdin.on('error', () => {});
    readline.createInterface({ input: proc.stdout }).on('line', (l) => { if (this.proc === proc) this.onLine(l); });
    this.send('uci');
    const r = await this.waitFor((t) => t[0] === 'uciok', initTimeoutMs);
    if (!r.ok) return r.why;
    for (const [k, v] of this.options) this.send(v === null ? `setoption name ${k}` : `setoption name ${k} value ${v}`);
    return this.ready(initTimeoutMs);
  }

  async ready(timeoutMs) {
    this.send('isready');
    const r = await this.waitFor((t) => t[0] === 'readyok', timeoutMs);
    return r.ok ? true : r.why;
  }

  onExit(proc) {
    if (proc !== this.proc || this.exited) return;
    this.exited = true;
    liveEngines.delete(this);
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      clearTimeout(w.timer);
      w.resolve({ ok: false, why: 'crash' });
    }
  }

  /** Sends the position and the go command; { move, ms } or { fault, ms }. */
  async go(positionCmd, goCmd, deadlineMs) {
    this.score = null;
    this.depth = null;
    this.send(positionCmd);
    const t0 = performance.now();
    this.send(goCmd);
    const r = await this.waitFor((t) => t[0] === 'bestmove', deadlineMs);
    const ms = performance.now() - t0;
    if (!r.ok) return { fault: r.why, ms };
    return { move: r.tokens[1] || '', ms };
  }

  /** Kills the process group at once (SIGKILL); safe to call any time, also from an exit handler. */
  kill() {
    if (this.proc && !this.exited) {
      try { process.kill(-this.proc.pid, 'SIGKILL'); } catch {
        try { this.proc.kill('SIGKILL'); } catch { /* gone */ }
      }
    }
    liveEngines.delete(this);
  }

  /** Asks the engine to quit, then kills it if it has not gone within `graceMs`. */
  async quit(graceMs = 500) {
    if (!this.proc || this.exited) return;
    this.send('quit');
    const proc = this.proc;
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, graceMs);
      proc.once('exit', () => { clearTimeout(timer); resolve(); });
      if (this.exited) { clearTimeout(timer); resolve(); }
    });
    this.kill();
  }
}

// --------------------------------------------------------------------- games

function goCommand(limit, clocks) {
  switch (limit.kind) {
    case 'clock':
      return `go wtime ${Math.max(1, Math.round(clocks.w))} btime ${Math.max(1, Math.round(clocks.b))} winc ${limit.inc} binc ${limit.inc}`;
    case 'movetime': return `go movetime ${limit.ms}`;
    case 'nodes': return `go nodes ${limit.n}`;
    default: return `go depth ${limit.d}`;
  }
}

function scoreComment(engine, ms) {
  let s = '';
  if (engine.score) {
    const v = engine.score.value;
    s = engine.score.kind === 'mate' ? `${v > 0 ? '+' : '-'}M${Math.abs(v)}` : `${v >= 0 ? '+' : ''}${(v / 100).toFixed(2)}`;
    if (engine.depth) s += `/${engine.depth}`;
    s += ' ';
  }
  return `${s}${(ms / 1000).toFixed(3)}s`;
}

/** The result of a position by the rules, or null while the game goes on. */
function ruleResult(chess) {
  if (chess.isCheckmate()) return { winner: chess.turn() === 'w' ? 'b' : 'w', reason: `${chess.turn() === 'w' ? 'Black' : 'White'} mates`, termination: 'normal' };
  if (chess.isStalemate()) return { winner: null, reason: 'stalemate', termination: 'normal' };
  if (chess.isInsufficientMaterial()) return { winner: null, reason: 'insufficient material', termination: 'normal' };
  if (chess.isThreefoldRepetition()) return { winner: null, reason: 'threefold repetition', termination: 'normal' };
  if (chess.isDrawByFiftyMoves()) return { winner: null, reason: '50-move rule', termination: 'normal' };
  return null;
}

const FAULT_WORDS = { illegal: 'illegal move', timeout: 'loses on time', crash: 'crashed' };
const FAULT_TERMINATION = { illegal: 'rules infraction', timeout: 'time forfeit', crash: 'abandoned' };

class Match {
  constructor(o, openings) {
    this.o = o;
    this.openings = openings;
    this.order = shuffled(openings.length, o.seed);
    this.next = 0;
    this.finished = 0;
    this.wins = 0; this.draws = 0; this.losses = 0;
    this.faults = { engine1: { illegal: 0, timeout: 0, crash: 0 }, engine2: { illegal: 0, timeout: 0, crash: 0 } };
    this.penta = [0, 0, 0, 0, 0];
    this.pairScores = new Map();   // pair index -> engine1's score in the first game that finished
    this.stopping = false;
    this.stopReason = null;
    this.sprt = o.sprt ? sprt(this.penta, o.sprt.elo0, o.sprt.elo1, o.sprt.alpha, o.sprt.beta) : null;
    this.names = { engine1: 'engine1', engine2: 'engine2' };
    this.startFailures = { engine1: 0, engine2: 0 };
    this.fatal = null;
    this.spare = { engine1: null, engine2: null };
    if (o.pgn) fs.writeFileSync(o.pgn, '');
    this.options = { engine1: engineOptions(o.optsBoth, o.opts1), engine2: engineOptions(o.optsBoth, o.opts2) };
  }

  newEngine(label) {
    return new Engine(label, label === 'engine1' ? this.o.engine1 : this.o.engine2, this.options[label], this.o.debug);
  }

  /** Starts each engine once before any game: names, option check, and a clear error if one cannot start. */
  async probe() {
    if (this.o.chess960) {
      this.referee = new Chess960Referee(splitCommand(this.o.referee), this.o.debug);
      liveEngines.add(this.referee);
      try {
        await this.referee.start();
        for (const op of this.openings.length <= 1000 ? this.openings : []) {
          const p = await this.referee.position(op.fen);
          if (p.legal.length === 0) throw new Error(`opening line ${op.line} has no legal move`);
        }
      } catch (e) {
        throw new UsageError(`the Chess960 referee (${this.o.referee}): ${e.message}`);
      }
    }
    for (const label of ['engine1', 'engine2']) {
      const e = this.newEngine(label);
      const ok = await e.start(this.o.initTimeoutMs);
      if (ok !== true) {
        e.kill();
        const why = e.startError || (ok === 'timeout' ? `no uciok/readyok within ${this.o.initTimeoutMs} ms` : 'it exited');
        throw new UsageError(`${label} (${e.cmd}) cannot be started: ${why}`);
      }
      this.names[label] = e.name;
      for (const [k] of this.options[label])
        if (!e.uciOptions.has(k.toLowerCase())) process.stderr.write(`warning: ${label} (${e.name}) lists no UCI option "${k}"\n`);
      this.spare[label] = e;   // the first worker plays with it
    }
  }

  stop(reason) {
    if (this.stopping) return;
    this.stopping = true;
    this.stopReason = reason;
    killAllSync();
  }

  /** Makes sure the worker's engine is running and ready for a new game; true, or the fault. */
  async prepare(w, label) {
    let e = w[label];
    if (e && (e.exited || e.needsRestart)) { e.kill(); e = w[label] = null; }
    if (!e) {
      e = w[label] = this.newEngine(label);
      const ok = await e.start(this.o.initTimeoutMs);
      if (this.stopping) return 'stopped';
      if (ok !== true) {
        e.kill();
        w[label] = null;
        if (++this.startFailures[label] >= 3) {
          this.fatal = `${label} (${e.cmd}) failed to start three times in a row`;
          this.stop('error');
        }
        return ok;
      }
      this.startFailures[label] = 0;
    }
    e.send('ucinewgame');
    const ok = await e.ready(this.o.initTimeoutMs);
    if (this.stopping) return 'stopped';
    return ok === true ? true : ok;
  }

  async playGame(w, g) {
    const o = this.o;
    const pair = Math.floor(g / 2);
    const opening = this.openings[this.order[pair % this.openings.length]];
    const e1White = g % 2 === 0;
    const colourOf = { engine1: e1White ? 'w' : 'b', engine2: e1White ? 'b' : 'w' };
    const chess = o.chess960 ? await Chess960Game.start(this.referee, opening.fen) : new Chess(opening.fen || START_FEN);
    if (!o.chess960) for (const m of opening.moves) applyUci(chess, m);
    const bookPlies = opening.moves.length;
    const posBase = opening.fen ? `position fen ${opening.fen}` : 'position startpos';
    const uciMoves = [...opening.moves];
    const comments = new Array(bookPlies).fill(null);
    const clocks = { w: 0, b: 0 };
    if (o.limit.kind === 'clock') clocks.w = clocks.b = o.limit.base;

    let end = null;
    for (const label of ['engine1', 'engine2']) {
      const r = await this.prepare(w, label);
      if (r === 'stopped') return null;
      if (r !== true) { end = { faulty: label, fault: r, reason: `${label} ${r === 'timeout' ? 'did not get ready' : 'could not start'}` }; break; }
    }
    const engineOf = { w: e1White ? w.engine1 : w.engine2, b: e1White ? w.engine2 : w.engine1 };
    const labelOf = { w: e1White ? 'engine1' : 'engine2', b: e1White ? 'engine2' : 'engine1' };

    while (!end) {
      const rule = ruleResult(chess);
      if (rule) { end = rule; break; }
      if (uciMoves.length >= o.maxPlies) { end = { winner: null, reason: `adjudicated a draw after ${o.maxPlies} plies`, termination: 'adjudication' }; break; }
      const side = chess.turn();
      const eng = engineOf[side];
      const position = uciMoves.length ? `${posBase} moves ${uciMoves.join(' ')}` : posBase;
      const deadline = o.limit.kind === 'clock' ? Math.max(1, clocks[side] + o.graceMs) : o.moveTimeoutMs;
      const r = await eng.go(position, goCommand(o.limit, clocks), deadline);
      if (this.stopping) return null;
      if (r.fault) { end = { faulty: labelOf[side], fault: r.fault }; break; }
      if (o.limit.kind === 'clock') {
        clocks[side] -= r.ms;
        if (clocks[side] < -o.graceMs) { end = { faulty: labelOf[side], fault: 'timeout' }; break; }
        clocks[side] += o.limit.inc;
      }
      const played = o.chess960 ? await chess.play(r.move) : applyUci(chess, r.move);
      if (!played) { end = { faulty: labelOf[side], fault: 'illegal', reason: `${labelOf[side]} played an illegal move "${r.move}"` }; break; }
      uciMoves.push(r.move);
      comments.push(scoreComment(eng, r.ms));
    }

    let e1Score, resultText;
    if (end.faulty) {
      const faulty = end.faulty;
      this.faults[faulty][end.fault]++;
      // An engine that hung or died is started afresh; one that played an
      // illegal move is still talking and gets ucinewgame like any other.
      if (w[faulty] && end.fault !== 'illegal') w[faulty].needsRestart = true;
      e1Score = faulty === 'engine1' ? 0 : 1;
      const loserColour = colourOf[faulty];
      resultText = loserColour === 'w' ? '0-1' : '1-0';
      end.reason = end.reason || `${faulty} ${FAULT_WORDS[end.fault]}`;
      end.termination = FAULT_TERMINATION[end.fault];
    } else if (end.winner) {
      e1Score = end.winner === colourOf.engine1 ? 1 : 0;
      resultText = end.winner === 'w' ? '1-0' : '0-1';
    } else {
      e1Score = 0.5;
      resultText = '1/2-1/2';
    }
    return { g, pair, opening, e1White, e1Score, resultText, reason: end.reason, termination: end.termination,
      chess, plies: uciMoves.length, comments };
  }

  record(res) {
    this.finished++;
    if (res.e1Score === 1) this.wins++; else if (res.e1Score === 0) this.losses++; else this.draws++;
    if (this.pairScores.has(res.pair)) {
      this.penta[pairIndex(this.pairScores.get(res.pair), res.e1Score)]++;
      this.pairScores.delete(res.pair);
      if (this.o.sprt) {
        const s = this.o.sprt;
        this.sprt = sprt(this.penta, s.elo0, s.elo1, s.alpha, s.beta);
      }
    } else {
      this.pairScores.set(res.pair, res.e1Score);
    }
    if (this.o.pgn) fs.appendFileSync(this.o.pgn, this.pgnOf(res));
    const st = gameStats(this.wins, this.draws, this.losses);
    const white = res.e1White ? this.names.engine1 : this.names.engine2;
    const black = res.e1White ? this.names.engine2 : this.names.engine1;
    const op = `opening line ${res.opening.line}${res.opening.name ? ` (${res.opening.name})` : ''}`;
    let line = `game ${res.g + 1}/${this.o.games}: ${white} - ${black} ${res.resultText} (${res.reason}), ${res.plies} plies, ${op}` +
      ` | engine1 +${this.wins} =${this.draws} -${this.losses} score ${st.score.toFixed(3)} elo ${fmtElo(st.elo)} [${fmtElo(st.elo_95[0])}, ${fmtElo(st.elo_95[1])}]`;
    if (this.sprt) line += ` | sprt llr ${this.sprt.llr.toFixed(2)} (${this.sprt.lower.toFixed(2)}, ${this.sprt.upper.toFixed(2)}) ${this.sprt.result}`;
    process.stderr.write(line + '\n');
    if (this.sprt && this.sprt.result !== 'continue') this.stop('sprt');
  }

  pgnOf(res) {
    const o = this.o;
    const same = this.names.engine1 === this.names.engine2;
    const nm = (label) => same ? `${this.names[label]} (${label})` : this.names[label];
    const white = res.e1White ? nm('engine1') : nm('engine2');
    const black = res.e1White ? nm('engine2') : nm('engine1');
    const d = new Date();
    const date = `${d.getUTCFullYear()}.${String(d.getUTCMonth() + 1).padStart(2, '0')}.${String(d.getUTCDate()).padStart(2, '0')}`;
    const esc = (s) => String(s).replace(/\\/g, '\\\\').replace(/"/g, '\\"');
    const tags = [['Event', 'kibitz match'], ['Site', 'tools/match'], ['Date', date], ['Round', String(res.g + 1)],
      ['White', white], ['Black', black], ['Result', res.resultText]];
    if (o.chess960) tags.push(['Variant', 'Chess960']);
    if (res.opening.fen) tags.push(['SetUp', '1'], ['FEN', res.opening.fen]);
    if (res.opening.name) tags.push(['Opening', res.opening.name]);
    tags.push(['PlyCount', String(res.plies)], ['Termination', res.termination]);
    const L = o.limit;
    if (L.kind === 'clock') tags.push(['TimeControl', `${L.base / 1000}+${L.inc / 1000}`]);
    else tags.push(['Search', L.kind === 'movetime' ? `movetime ${L.ms}` : L.kind === 'nodes' ? `nodes ${L.n}` : `depth ${L.d}`]);
    let text = tags.map(([k, v]) => `[${k} "${esc(v)}"]`).join('\n') + '\n\n';
    const history = res.chess.history({ verbose: true });
    const tokens = [];
    const startFen = res.opening.fen || START_FEN;
    let moveNo = Number(startFen.split(' ')[5]) || 1;
    let turn = startFen.split(' ')[1];
    history.forEach((m, i) => {
      if (turn === 'w') tokens.push(`${moveNo}.`);
      else if (i === 0) tokens.push(`${moveNo}...`);
      tokens.push(m.san);
      let c = res.comments[i];
      if (i === history.length - 1) c = c ? `${c}, ${res.reason}` : res.reason;
      if (c) tokens.push(`{${c.replace(/[{}]/g, '')}}`);
      if (turn === 'b') moveNo++;
      turn = turn === 'w' ? 'b' : 'w';
    });
    if (history.length === 0) tokens.push(`{${res.reason}}`);
    tokens.push(res.resultText);
    let lineLen = 0;
    for (const t of tokens) {
      if (lineLen > 0 && lineLen + 1 + t.length > 79) { text += '\n'; lineLen = 0; }
      else if (lineLen > 0) { text += ' '; lineLen++; }
      text += t;
      lineLen += t.length;
    }
    return text + '\n\n';
  }

  async worker(id) {
    const w = { id, engine1: null, engine2: null };
    if (id === 0) { w.engine1 = this.spare.engine1; w.engine2 = this.spare.engine2; }
    try {
      while (!this.stopping) {
        const g = this.next++;
        if (g >= this.o.games) break;
        const res = await this.playGame(w, g);
        if (!res || this.stopping) break;
        this.record(res);
      }
    } finally {
      await Promise.all(['engine1', 'engine2'].map((l) => (w[l] ? (this.stopping ? w[l].kill() : w[l].quit()) : null)));
    }
  }

  async run() {
    const k = Math.min(this.o.concurrency, this.o.games);
    await Promise.all(Array.from({ length: k }, (_, i) => this.worker(i)));
  }

  summary() {
    const st = gameStats(this.wins, this.draws, this.losses);
    const ps = pairStats(this.penta);
    const r = (x, d) => (x === null || x === undefined ? null : Number(x.toFixed(d)));
    const f = this.faults;
    const out = {
      engine1: this.names.engine1, engine2: this.names.engine2,
      games: this.finished, wins: this.wins, draws: this.draws, losses: this.losses,
      score: r(st.score, 4), elo: r(st.elo, 1), elo_95: st.elo_95.map((x) => r(x, 1)), los: r(los(this.wins, this.losses), 4),
      pentanomial: [...this.penta], elo_95_pairs: ps.n ? ps.elo_95.map((x) => r(x, 1)) : [null, null],
      faults: { engine1: { ...f.engine1 }, engine2: { ...f.engine2 } },
      illegal: f.engine1.illegal + f.engine2.illegal, timeouts: f.engine1.timeout + f.engine2.timeout,
      crashes: f.engine1.crash + f.engine2.crash,
      games_requested: this.o.games, stopped: this.stopReason || 'done',
    };
    if (this.sprt) out.sprt = { ...this.sprt, llr: r(this.sprt.llr, 4), lower: r(this.sprt.lower, 4), upper: r(this.sprt.upper, 4) };
    if (this.fatal) out.error = this.fatal;
    return out;
  }
}

function fmtElo(x) {
  if (x === null || x === undefined) return 'n/a';
  return `${x >= 0 ? '+' : ''}${x.toFixed(1)}`;
}

// ---------------------------------------------------------------------- main

export async function main(argv) {
  let o;
  try {
    o = parseArgs(argv);
    if (o.help) { process.stdout.write(HELP); return 0; }
    await loadChess();
  } catch (e) {
    if (e instanceof UsageError) { process.stderr.write(`match: ${e.message}\n`); return 2; }
    throw e;
  }

  let match = null;
  let printed = false;
  let finishing = false;   // a signal or --timeout-s: finish() prints and exits, main() only waits
  const never = () => new Promise(() => {});
  const finish = (code) => {
    if (finishing) return;
    finishing = true;
    killAllSync();
    if (match && !printed) { printed = true; process.stdout.write(JSON.stringify(match.summary()) + '\n'); }
    reaped(1000).then(() => process.exit(code));
  };
  process.on('exit', killAllSync);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, () => {
      process.stderr.write(`match: ${sig}, stopping: engines killed, games in play not counted\n`);
      if (match) match.stop('signal');
      finish(130);
    });
  }
  process.on('uncaughtException', (e) => {
    process.stderr.write(`match: internal error: ${e && e.stack || e}\n`);
    if (match) match.stop('error');
    finish(1);
  });

  try {
    let openings;
    if (o.chess960) {
      let text = null;
      if (o.openings !== null) {
        try { text = fs.readFileSync(o.openings, 'utf8'); } catch (e) { throw new UsageError(`cannot read openings file: ${e.message}`); }
      }
      openings = chess960Openings(text);
    } else {
      openings = await loadOpenings(o.openings);
    }
    match = new Match(o, openings);
    if (o.timeoutS) {
      setTimeout(() => {
        process.stderr.write(`match: --timeout-s ${o.timeoutS} reached, stopping: games in play not counted\n`);
        match.stop('timeout');
        finish(3);
      }, o.timeoutS * 1000).unref();
    }
    await match.probe();
  } catch (e) {
    if (finishing) return never();
    killAllSync();
    await reaped(1000);
    if (e instanceof UsageError) {
      process.stderr.write(`match: ${e.message}\n`);
      if (match) { printed = true; match.stop('error'); match.fatal = e.message; process.stdout.write(JSON.stringify(match.summary()) + '\n'); }
      return 2;
    }
    throw e;
  }
  await match.run();
  if (finishing) return never();
  killAllSync();
  await reaped(1000);
  printed = true;
  process.stdout.write(JSON.stringify(match.summary()) + '\n');
  return match.fatal ? 2 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).then((code) => process.exit(code), (e) => {
    process.stderr.write(`match: ${e && e.stack || e}\n`);
    killAllSync();
    process.exit(1);
  });
}
