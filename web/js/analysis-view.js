// The live analysis panel: search figures, the MultiPV lines (SAN for chess,
// PDN for draughts, numbered from the current position) and the evaluation bar.

import {formatScore, formatNodes, formatNps, winningChances} from "./score.js"

const $ = (id) => document.getElementById(id)

// How a line's moves are numbered: the current position's move number and
// whether White is to move there.
function numbered(moves, number, whiteToMove) {
  const parts = []
  let white = whiteToMove
  moves.forEach((m, i) => {
    if (white) parts.push({prefix: `${number}.`, move: m, index: i})
    else parts.push({prefix: i === 0 ? `${number}…` : "", move: m, index: i})
    if (!white) number++
    white = !white
  })
  return parts
}

export function clearAnalysis(message = "") {
  $("depth").textContent = "–"
  $("nps").textContent = "–"
  $("nodes").textContent = "–"
  $("lines").replaceChildren()
  $("search-state").textContent = message
  setEvalBar(null, "chess")
}

// result: an info or bestmove message. onPlayLine(line, upTo) plays the
// line's first upTo+1 moves.
export function renderAnalysis(result, {game, number, whiteToMove, onPlayLine}) {
  const depth = result.depth || 0
  const seldepth = result.seldepth || 0
  $("depth").textContent = seldepth > depth ? `${depth}/${seldepth}` : String(depth)
  $("depth").dataset.depth = String(depth)
  $("nps").textContent = formatNps(result.nps)
  $("nodes").textContent = formatNodes(result.nodes)
  const list = $("lines")
  list.replaceChildren()
  const lines = result.lines || []
  for (const line of lines) {
    const item = document.createElement("li")
    item.className = "line"
    item.dataset.multipv = String(line.multipv || 1)
    const score = document.createElement("span")
    score.className = "score"
    score.textContent = formatScore(line.score)
    if (line.bound && line.bound !== "exact") score.textContent += line.bound === "lower" ? "↑" : "↓"
    const wc = winningChances(line.score, game)
    score.classList.add(wc > 0.05 ? "good" : wc < -0.05 ? "bad" : "even")
    item.appendChild(score)
    const moves = document.createElement("span")
    moves.className = "pv"
    const shown = game === "chess" && line.san && line.san.length ? line.san : line.moves || []
    for (const part of numbered(shown, number, whiteToMove)) {
      // Spaces as text, so the line reads (and copies) as "1. e4 e5 2. Nf3".
      if (moves.childNodes.length) moves.appendChild(document.createTextNode(" "))
      if (part.prefix) {
        const n = document.createElement("span")
        n.className = "pv-number"
        n.textContent = part.prefix
        moves.appendChild(n)
        if (part.prefix.endsWith(".")) moves.appendChild(document.createTextNode(" "))
      }
      const b = document.createElement("button")
      b.type = "button"
      b.className = "pv-move"
      b.textContent = part.move
      b.title = "Play up to this move"
      b.addEventListener("click", () => onPlayLine(line, part.index))
      moves.appendChild(b)
    }
    item.appendChild(moves)
    list.appendChild(item)
  }
  setEvalBar(lines.length ? lines[0].score : null, game)
}

export function setSearchState(text) {
  $("search-state").textContent = text
}

export function setEvalBar(score, game) {
  const bar = $("evalbar")
  const white = bar.querySelector(".evalbar-white")
  const label = bar.querySelector(".evalbar-label")
  const wc = score == null ? 0 : winningChances(score, game)
  white.style.height = `${(50 + 50 * wc).toFixed(1)}%`
  label.textContent = score == null ? "" : formatScore(score)
  label.classList.toggle("on-white", wc >= 0)
  bar.title = score == null ? "No evaluation yet" : `Evaluation ${formatScore(score)} (White's view)`
}

// A finished game: the bar full for the winner, half for a draw.
export function setEvalBarResult(white) {
  const bar = $("evalbar")
  bar.querySelector(".evalbar-white").style.height = `${50 + 50 * white}%`
  const label = bar.querySelector(".evalbar-label")
  label.textContent = white > 0 ? "1-0" : white < 0 ? "0-1" : "½-½"
  label.classList.toggle("on-white", white >= 0)
  bar.title = "Game over"
}
