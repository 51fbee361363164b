// What the page reads from positions and moves as the server writes them:
// a move's squares, the legal-move list in one shape for both boards, the
// side to move and move number of a FEN.
import {numberToSquare} from "./draughts-board.js"

function squaresOfPdn(move) {
  const squares = String(move).split(/[-:x]/).map((s) => s.trim()).filter(Boolean)
    .map((s) => (/^\d+$/.test(s) ? numberToSquare(+s) : s))
  return {from: squares[0], to: squares[squares.length - 1], path: squares}
}

export function fromTo(game, move) {
  return game === "chess" ? {from: move.slice(0, 2), to: move.slice(2, 4)} : squaresOfPdn(move)
}

// The server lists chess moves as {uci, san} and draughts moves as
// {move, from, to, captured}; the boards get one shape for both.
export function normalizeLegal(report, game) {
  const list = report.legal || report.legal_moves || report.moves || []
  return list.map((m) => {
    const move = m.uci || m.move
    const ft = fromTo(game, move)
    // Castling also by the king's own destination (g1/c1): Chess960 writes
    // it king takes rook (e1h1), which a player may not think of.
    const castle = game === "chess" && /^O-O/.test(m.san || "") ? (/^O-O-O/.test(m.san) ? "c" : "g") + move.charAt(3) : null
    return {move, uci: move, san: m.san, from: m.from || ft.from, to: m.to || ft.to, captured: m.captured || [], castle}
  })
}

export function sideOf(game, fen) {
  if (game === "chess") return (String(fen).split(/\s+/)[1] || "w") === "w"
  return String(fen).trim().charAt(0).toUpperCase() !== "B"
}

export function fullmoveOf(game, fen) {
  if (game !== "chess") return 1
  const n = parseInt(String(fen).split(/\s+/)[5], 10)
  return Number.isFinite(n) && n > 0 ? n : 1
}
