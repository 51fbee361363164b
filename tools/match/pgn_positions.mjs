#!/usr/bin/env node
// Quiet positions of played games, for the evaluation tuner.
//
// Reads PGN files (e.g. the match runner's --pgn output of Kibitz against
// Stockfish) and writes one "FEN;RESULT;0" line per position that is quiet
// enough to fit a static evaluation to: the side to move is not in check and
// the move played from it is neither a capture nor a promotion. RESULT is
// White's (1, 0.5, 0); games without a result are skipped. The score is a
// placeholder: tools/tune/label_stockfish.py writes a real one. A position
// met again (the openings' first moves) is written once.
//
//   node tools/match/pgn_positions.mjs ladder-*.pgn > ladder.txt
//   tools/tune/label_stockfish.py --out ladder-sf.txt --nodes 5000 ladder.txt
import { readFileSync } from 'node:fs';
import { Chess } from 'chess.js';

const kResults = { '1-0': '1', '0-1': '0', '1/2-1/2': '0.5' };

// Splits a PGN file into games: each starts at its first tag after movetext.
function* games(text) {
  let current = [];
  let inMoves = false;
  for (const line of text.split(/\r?\n/)) {
    if (line.startsWith('[') && inMoves) {
      yield current.join('\n');
      current = [];
      inMoves = false;
    }
    if (!line.startsWith('[') && line.trim() !== '') inMoves = true;
    current.push(line);
  }
  if (current.some((l) => l.trim() !== '')) yield current.join('\n');
}

const files = process.argv.slice(2);
if (files.length === 0) {
  process.stderr.write('usage: pgn_positions.mjs FILE.pgn...\n');
  process.exit(2);
}
let written = 0, skipped = 0;
const out = [];
const seen = new Set();
for (const file of files) {
  for (const pgn of games(readFileSync(file, 'utf8'))) {
    const game = new Chess();
    try {
      game.loadPgn(pgn);
    } catch {
      ++skipped;
      continue;
    }
    const result = kResults[game.getHeaders().Result];
    if (!result) {
      ++skipped;
      continue;
    }
    // Each move knows the position before it; that position is in check
    // when the move before it gave check (its SAN ends in + or #).
    const moves = game.history({ verbose: true });
    moves.forEach((move, i) => {
      const inCheck = i > 0 ? /[+#]$/.test(moves[i - 1].san) : new Chess(move.before).inCheck();
      if (!inCheck && !move.captured && !move.promotion && !seen.has(move.before)) {
        seen.add(move.before);
        out.push(`${move.before};${result};0`);
        ++written;
      }
    });
    if (out.length > 10000) process.stdout.write(out.splice(0).join('\n') + '\n');
  }
}
if (out.length) process.stdout.write(out.join('\n') + '\n');
process.stderr.write(`pgn_positions: ${written} positions, ${skipped} games skipped\n`);
