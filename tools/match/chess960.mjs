// Chess960 for the match runner (--chess960). chess.js plays standard chess
// only, so Chess960 games are refereed by a UCI engine that is not one of the
// players' builds (Debian's Stockfish by default, UCI_Chess960 on): after
// every move it lists the legal moves (`go perft 1`, king takes rook for
// castling) and the position (`d`: FEN and checkers). A move is legal when it
// is one of those UCI strings exactly. The rules' endings are found here from
// that: mate and stalemate (no move, in check or not), the 50-move rule (the
// FEN's clock), threefold repetition (FENs without their counters) and
// insufficient material (kings alone, one minor piece, or bishops all on
// squares of one colour).
import { spawn } from 'node:child_process';
import readline from 'node:readline';

// Scharnagl's numbering of the 960 start positions (518 is the standard one).
const KNIGHTS = ['NN---', 'N-N--', 'N--N-', 'N---N', '-NN--', '-N-N-', '-N--N', '--NN-', '--N-N', '---NN'];

export function chess960StartFen(n) {
  if (!Number.isInteger(n) || n < 0 || n > 959) throw new RangeError(`no Chess960 start position ${n}`);
  const rank = Array(8).fill(null);
  rank[2 * (n % 4) + 1] = 'B';
  n = Math.floor(n / 4);
  rank[2 * (n % 4)] = 'B';
  n = Math.floor(n / 4);
  const free = () => rank.map((p, i) => (p ? -1 : i)).filter((i) => i >= 0);
  rank[free()[n % 6]] = 'Q';
  n = Math.floor(n / 6);
  free().forEach((sq, i) => { if (KNIGHTS[n][i] === 'N') rank[sq] = 'N'; });
  free().forEach((sq, i) => { rank[sq] = 'RKR'[i]; });
  const r = rank.join('');
  return `${r.toLowerCase()}/pppppppp/8/8/8/8/PPPPPPPP/${r} w KQkq - 0 1`;
}

/** The referee: one UCI engine process, asked one position at a time. */
export class Chess960Referee {
  constructor(cmd, debug = false) {
    this.cmd = cmd;
    this.debug = debug;
    this.queue = Promise.resolve();
    this.waiting = null;
  }

  start() {
    const [file, ...args] = this.cmd;
    this.proc = spawn(file, args, { stdio: ['pipe', 'pipe', 'ignore'] });
    this.proc.on('error', (e) => this.fail(e));
    this.proc.on('exit', () => this.fail(new Error('the Chess960 referee exited')));
    readline.createInterface({ input: this.proc.stdout }).on('line', (line) => {
      if (this.debug) process.stderr.write(`[referee >] ${line}\n`);
      if (this.waiting) this.waiting.lines.push(line), this.waiting.check();
    });
    return this.ask(['uci', 'setoption name UCI_Chess960 value true', 'isready'], (ls) => ls.includes('readyok'));
  }

  fail(e) {
    this.dead = e;
    if (this.waiting) this.waiting.reject(e);
  }

  kill() {
    if (this.proc && this.proc.exitCode === null) this.proc.kill('SIGKILL');
  }

  ask(lines, done) {
    const run = () => new Promise((resolve, reject) => {
      if (this.dead) return reject(this.dead);
      const w = { lines: [], reject };
      w.check = () => { if (done(w.lines)) { this.waiting = null; resolve(w.lines); } };
      this.waiting = w;
      for (const l of lines) {
        if (this.debug) process.stderr.write(`[referee <] ${l}\n`);
        this.proc.stdin.write(l + '\n');
      }
    });
    const p = this.queue.then(run);
    this.queue = p.catch(() => {});
    return p;
  }

  /** {fen, legal: [uci...], inCheck} of `fen` after `moves`. */
  async position(fen, moves = []) {
    const cmd = `position fen ${fen}${moves.length ? ` moves ${moves.join(' ')}` : ''}`;
    // perft may print after `d`: wait for both.
    const lines = await this.ask([cmd, 'go perft 1', 'd'], (ls) =>
      ls.some((l) => l.startsWith('Nodes searched')) && ls.some((l) => l.startsWith('Checkers:')));
    const fenLine = lines.find((l) => l.startsWith('Fen: '));
    const checkers = lines.find((l) => l.startsWith('Checkers:')).slice('Checkers:'.length).trim();
    const legal = lines.filter((l) => /^[a-h][1-8][a-h][1-8][qrbn]?: \d+$/.test(l)).map((l) => l.split(':')[0]);
    return { fen: fenLine.slice(5).trim(), legal, inCheck: checkers.length > 0 };
  }
}

const PIECE_LETTER = { p: '', n: 'N', b: 'B', r: 'R', q: 'Q', k: 'K' };

function board(fen) {
  const out = new Map();
  fen.split(' ')[0].split('/').forEach((row, i) => {
    let file = 0;
    for (const c of row) {
      if (/\d/.test(c)) file += Number(c);
      else out.set(String.fromCharCode(97 + file++) + (8 - i), c);
    }
  });
  return out;
}

const countersOff = (fen) => fen.split(' ').slice(0, 4).join(' ');

/** A Chess960 game for the runner: the subset of chess.js's API it uses. */
export class Chess960Game {
  static async start(referee, fen) {
    const g = new Chess960Game(referee);
    g.state = await referee.position(fen);
    g.seen = [countersOff(g.state.fen)];
    g.sans = [];
    return g;
  }

  constructor(referee) { this.referee = referee; }

  /** Plays `uci` if it is one of the legal moves exactly; returns it or null. */
  async play(uci) {
    if (!this.state.legal.includes(uci)) return null;
    const before = this.state;
    const after = await this.referee.position(before.fen, [uci]);
    this.sans.push(sanOf(before, uci, after));
    this.state = after;
    this.seen.push(countersOff(after.fen));
    return { uci, san: this.sans[this.sans.length - 1] };
  }

  fen() { return this.state.fen; }
  turn() { return this.state.fen.split(' ')[1]; }
  isCheckmate() { return this.state.legal.length === 0 && this.state.inCheck; }
  isStalemate() { return this.state.legal.length === 0 && !this.state.inCheck; }
  isThreefoldRepetition() { return this.seen.filter((f) => f === this.seen[this.seen.length - 1]).length >= 3; }
  isDrawByFiftyMoves() { return Number(this.state.fen.split(' ')[4]) >= 100; }
  isInsufficientMaterial() {
    const pieces = [...board(this.state.fen).entries()].filter(([, p]) => !/[kK]/.test(p));
    if (pieces.length === 0) return true;
    if (pieces.length === 1 && /[nNbB]/.test(pieces[0][1])) return true;
    if (!pieces.every(([, p]) => /[bB]/.test(p))) return false;
    const colour = ([sq]) => (sq.charCodeAt(0) - 97 + Number(sq[1])) % 2;
    return pieces.every((p) => colour(p) === colour(pieces[0]));
  }
  history() { return this.sans.map((san) => ({ san })); }
}

/** SAN of `uci` in `before`, given the position after it. */
export function sanOf(before, uci, after) {
  const b = board(before.fen);
  const from = uci.slice(0, 2), to = uci.slice(2, 4), promo = uci[4];
  const piece = b.get(from);
  const suffix = after.inCheck ? (after.legal.length === 0 ? '#' : '+') : '';
  const own = b.get(to);
  if (/[kK]/.test(piece) && own && (own === own.toUpperCase()) === (piece === piece.toUpperCase()))
    return (to[0] > from[0] ? 'O-O' : 'O-O-O') + suffix;  // king takes its own rook
  const type = piece.toLowerCase();
  const capture = Boolean(own) || (type === 'p' && from[0] !== to[0]);
  let san = PIECE_LETTER[type];
  if (type === 'p') {
    if (capture) san += from[0];
  } else {
    const rivals = before.legal.filter((m) => m !== uci && m.slice(2, 4) === to && b.get(m.slice(0, 2)) === piece)
      .map((m) => m.slice(0, 2));
    if (rivals.length) {
      if (!rivals.some((s) => s[0] === from[0])) san += from[0];
      else if (!rivals.some((s) => s[1] === from[1])) san += from[1];
      else san += from;
    }
  }
  return san + (capture ? 'x' : '') + to + (promo ? `=${promo.toUpperCase()}` : '') + suffix;
}
