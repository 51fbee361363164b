// Unit tests of the page's pure helpers (no browser): PDN squares and FENs,
// scores, game detection, plain-words errors. Run: node --test unit_test.mjs

import {test} from "node:test"
import assert from "node:assert/strict"

import {numberToSquare, parseDraughtsFen} from "../../web/js/draughts-board.js"
import {formatScore, winningChances} from "../../web/js/score.js"
import {detectGame, startFenOf} from "../../web/js/review.js"
import {ApiError, plainWords} from "../../web/js/api.js"

test("PDN square numbers: 1 = b8, 4 = h8, 29 = a1, 32 = g1", () => {
  assert.equal(numberToSquare(1), "b8")
  assert.equal(numberToSquare(4), "h8")
  assert.equal(numberToSquare(5), "a7")
  assert.equal(numberToSquare(22), "c3")
  assert.equal(numberToSquare(29), "a1")
  assert.equal(numberToSquare(32), "g1")
})

test("draughts FEN, algebraic and numeric with kings and ranges", () => {
  const start = parseDraughtsFen("W:Wa1,a3,b2,c1,c3,d2,e1,e3,f2,g1,g3,h2:Ba7,b6,b8,c7,d6,d8,e7,f6,f8,g7,h6,h8")
  assert.equal(start.whiteToMove, true)
  assert.equal(start.pieces.size, 24)
  assert.equal(start.pieces.get("c3"), "w")
  assert.equal(start.pieces.get("h8"), "b")
  const numeric = parseDraughtsFen("B:W21,K22:B1-3,K9.")
  assert.equal(numeric.whiteToMove, false)
  assert.deepEqual([...numeric.pieces.entries()].sort(), [
    ["a3", "w"], ["b8", "b"], ["c3", "W"], ["d8", "b"], ["f8", "b"], ["b6", "B"],
  ].sort())
})

test("scores read White's way", () => {
  assert.equal(formatScore({cp: 34}), "+0.34")
  assert.equal(formatScore({cp: -120}), "−1.20")
  assert.equal(formatScore({cp: 0}), "0.00")
  assert.equal(formatScore({mate: 3}), "M3")
  assert.equal(formatScore({mate: -2}), "-M2")
  assert.equal(formatScore({win: 5}), "M5")
  assert.equal(winningChances({mate: 1}, "chess"), 1)
  assert.equal(winningChances({win: -4}, "draughts"), -1)
  assert.equal(winningChances({cp: 0}, "chess"), 0)
  // The review's curve: 100 centipawns is about +0.18 for chess.
  assert.ok(Math.abs(winningChances({cp: 100}, "chess") - 0.182) < 0.001)
  assert.ok(winningChances({cp: 100}, "draughts") > winningChances({cp: 100}, "chess"))
})

test("a pasted record is chess or draughts", () => {
  assert.equal(detectGame('[GameType "25"]\n1. c3-d4 f6-g5 *'), "draughts")
  assert.equal(detectGame("1. c3-d4 f6-g5 2. g3-h4 *"), "draughts")
  assert.equal(detectGame("1. 22-18 11-15 *"), "draughts")
  assert.equal(detectGame('[Event "x"]\n1. e4 e5 2. Nf3 Nc6 *'), "chess")
  assert.equal(detectGame("1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0"), "chess")
  assert.equal(startFenOf('[SetUp "1"]\n[FEN "8/8/8/8/8/8/8/K6k w - - 0 1"]\n*'), "8/8/8/8/8/8/8/K6k w - - 0 1")
  assert.equal(startFenOf("1. e4 *"), null)
})

test("server errors in plain words", () => {
  assert.equal(plainWords(new ApiError("invalid_fen", "rank 1 describes 7 squares, not 8")),
    "That position is not valid: rank 1 describes 7 squares, not 8")
  assert.equal(plainWords(new ApiError("queue_full", "")), "The server is busy; try again in a few seconds.")
  assert.equal(plainWords(new ApiError("network", "")), "Cannot reach the Kibitz server.")
  assert.equal(plainWords(new ApiError("some_new_code", "details")), "details")
})

test("Chess960 start positions by Scharnagl number: 518 is the standard one, all 960 legal and distinct", async () => {
  const {chess960Rank, chess960Fen, randomChess960} = await import("../../web/js/chess960.js")
  assert.equal(chess960Fen(518), "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
  assert.equal(chess960Rank(0), "BBQNNRKR")
  assert.equal(chess960Rank(959), "RKRNNQBB")
  const seen = new Set()
  for (let n = 0; n < 960; n++) {
    const r = chess960Rank(n)
    seen.add(r)
    assert.equal([...r].sort().join(""), "BBKNNQRR", r)
    const bishops = [...r].flatMap((p, i) => (p === "B" ? [i] : []))
    assert.notEqual(bishops[0] % 2, bishops[1] % 2, `${n}: bishops on one colour`)
    const k = r.indexOf("K")
    assert.ok(r.indexOf("R") < k && r.lastIndexOf("R") > k, `${n}: king between the rooks`)
  }
  assert.equal(seen.size, 960)
  assert.throws(() => chess960Rank(960), RangeError)
  assert.throws(() => chess960Rank(-1), RangeError)
  assert.equal(randomChess960(() => 0.9999), 959)
  assert.equal(randomChess960(() => 0), 0)
})

test("castling moves also answer to the king's destination square", async () => {
  const {normalizeLegal} = await import("../../web/js/positions.js")
  const legal = normalizeLegal({legal_moves: [{uci: "b1h1", san: "O-O"}, {uci: "b1a1", san: "O-O-O+"},
    {uci: "b1c1", san: "Kc1"}]}, "chess")
  assert.deepEqual(legal.map((m) => m.castle), ["g1", "c1", null])
  assert.equal(legal[0].to, "h1")
})
