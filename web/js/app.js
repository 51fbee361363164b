// The analysis board: one game (chess or Russian draughts), a start position
// and a list of moves; the board shows the position after `ply` of them.
// Every position shown comes from POST /v1/moves (its FEN and legal moves);
// its live analysis runs over the WebSocket under the id "live", and a new
// "analyze" with that id replaces the running search on the server.

import {api, ApiError, Socket, plainWords} from "./api.js"
import {ChessBoard} from "./chess-board.js"
import {DraughtsBoard} from "./draughts-board.js"
import {fromTo, fullmoveOf, normalizeLegal, sideOf} from "./positions.js"
import {renderMoveList, JUDGMENT_MARK} from "./move-list.js"
import {renderAnalysis, clearAnalysis, setSearchState, setEvalBar, setEvalBarResult} from "./analysis-view.js"
import {EvalChart} from "./eval-chart.js"
import {Review, judgmentNote} from "./review.js"
import {formatScore} from "./score.js"
import {bindChess960Form, chess960Fen} from "./chess960.js"

const START = {
  chess: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
  draughts: "W:Wa1,a3,b2,c1,c3,d2,e1,e3,f2,g1,g3,h2:Ba7,b6,b8,c7,d6,d8,e7,f6,f8,g7,h6,h8",
}
const LIVE = "live"
// Navigation by held-down arrow keys must not flood the socket (the server
// limits messages per second): a new analysis waits this long.
const ANALYSE_DELAY_MS = 120

const $ = (id) => document.getElementById(id)

const state = {
  game: "chess",
  // "chess960" when the position is played by Chess960's rules (castling
  // king takes rook): every request about it says so.
  variant: "standard",
  startFen: START.chess,
  moves: [],  // {move, san, from, to, judgment, best, evalAfter}
  ply: 0,
  fen: null,  // of the position shown
  legal: [],
  whiteToMove: true,
  status: "ongoing",
  analysing: true,
  paused: false,  // while a review runs
  multipv: 1,
  flipped: false,
  result: null,  // the latest info/bestmove for the position shown
  showToken: 0,
  chartPoints: [],
}

let board = null
let analysisTimer = null
const chart = new EvalChart($("chart"), (ply) => show(ply))

// ---- errors -------------------------------------------------------------

function showError(e) {
  $("error-text").textContent = typeof e === "string" ? e : plainWords(e)
  $("error").hidden = false
}

function clearError() {
  $("error").hidden = true
}

$("error-close").addEventListener("click", clearError)

// ---- positions and moves ------------------------------------------------

// Move number and side at ply `ply` from the start position.
function numberAt(ply) {
  const whiteFirst = sideOf(state.game, state.startFen)
  const first = fullmoveOf(state.game, state.startFen)
  return first + Math.floor((ply + (whiteFirst ? 0 : 1)) / 2)
}

function moveLabel(ply) {
  const m = state.moves[ply - 1]
  if (!m) return ""
  const white = sideOf(state.game, state.startFen) === ((ply - 1) % 2 === 0)
  return `${numberAt(ply - 1)}${white ? "." : "…"} ${m.san || m.move}`
}

function statusText() {
  const side = state.whiteToMove ? "White" : "Black"
  const other = state.whiteToMove ? "Black" : "White"
  const s = state.status || "ongoing"
  if (s === "ongoing") return `${side} to move`
  if (s === "checkmate") return `Checkmate: ${other} wins`
  if (s === "stalemate") return "Stalemate: draw"
  if (s === "loss") return `${side} cannot move: ${other} wins`
  if (s.startsWith("draw")) return `Draw${s.length > 5 ? ` (${s.slice(5).replace(/_/g, " ")})` : ""}`
  return s
}

function makeBoard() {
  if (board) board.destroy()
  const container = $("board")
  container.replaceChildren()
  container.dataset.game = state.game
  const Board = state.game === "chess" ? ChessBoard : DraughtsBoard
  board = new Board(container, {onMove: (m) => play(m)})
  if (state.flipped) board.setFlipped(true)
}

// Shows the position after `ply` moves and restarts its analysis. Returns
// false when the server refused it (the error is shown).
async function show(ply) {
  ply = Math.max(0, Math.min(state.moves.length, ply))
  const token = ++state.showToken
  let report
  try {
    report = await api.moves(state.game, state.startFen, state.moves.slice(0, ply).map((m) => m.move), state.variant)
  } catch (e) {
    if (token === state.showToken) showError(e)
    return false
  }
  if (token !== state.showToken) return false
  state.ply = ply
  state.fen = report.fen
  state.legal = normalizeLegal(report, state.game)
  state.whiteToMove = report.side_to_move ? report.side_to_move === "white" : sideOf(state.game, report.fen)
  state.status = report.status || "ongoing"
  board.setPosition(report.fen, state.legal)
  const last = state.moves[ply - 1]
  board.setLastMove(last && last.from, last && last.to)
  board.setBestMove(null)
  if (document.activeElement !== $("fen")) $("fen").value = report.fen
  $("status").textContent = statusText()
  renderMoves()
  chart.setCurrent(ply)
  renderJudgmentNote()
  updateNavButtons()
  restartAnalysis()
  return true
}

function renderMoves() {
  renderMoveList($("moves"), {
    moves: state.moves,
    ply: state.ply,
    firstNumber: fullmoveOf(state.game, state.startFen),
    whiteFirst: sideOf(state.game, state.startFen),
    onSelect: (ply) => show(ply),
  })
}

function renderJudgmentNote() {
  const note = $("judgment-note")
  const m = state.moves[state.ply - 1]
  if (!m || !m.judgment) {
    note.hidden = true
    return
  }
  const best = m.best || {}
  const bestSan = (best.san && (Array.isArray(best.san) ? best.san[0] : best.san)) ||
    (best.line_san && best.line_san[0]) || best.move
  note.textContent = judgmentNote(m, moveLabel(state.ply), bestSan, best.score != null ? formatScore(best.score) : "")
  note.className = `judgment-note ${m.judgment}`
  note.hidden = false
}

function updateNavButtons() {
  $("first").disabled = $("back").disabled = state.ply === 0
  $("forward").disabled = $("last").disabled = state.ply >= state.moves.length
}

// A move from the board or a line: kept as the next move if it is the one
// already there, else it replaces the rest of the game.
async function play(m) {
  clearError()
  const next = state.moves[state.ply]
  if (next && next.move === m.move) return show(state.ply + 1)
  return playMoves([{move: m.move, san: m.san, from: m.from, to: m.to}])
}

async function playMoves(entries) {
  const previous = state.moves
  const ply = state.ply
  state.moves = state.moves.slice(0, ply).concat(entries)
  if (state.chartPoints.length > ply) {
    state.chartPoints = state.chartPoints.slice(0, ply)
    chart.setData(state.chartPoints, state.game)
  }
  if (!(await show(ply + entries.length))) {
    state.moves = previous
    await show(ply)
  }
}

function playLine(line, upTo) {
  const moves = (line.moves || []).slice(0, upTo + 1)
  if (moves.length === 0) return
  clearError()
  playMoves(moves.map((move, i) => ({move, san: line.san ? line.san[i] : undefined, ...fromTo(state.game, move)})))
}

// ---- live analysis --------------------------------------------------------

function analysisRequest() {
  return {
    type: "analyze",
    id: LIVE,
    game: state.game,
    ...(state.variant === "chess960" ? {variant: "chess960"} : {}),
    fen: state.startFen,
    moves: state.moves.slice(0, state.ply).map((m) => m.move),
    multipv: state.multipv,
    limits: {infinite: true},
  }
}

function restartAnalysis() {
  clearTimeout(analysisTimer)
  state.result = null
  board.setBestMove(null)
  $("toggle").textContent = state.analysing ? "Stop" : "Analyse"
  if (state.paused) {
    clearAnalysis("paused for the review")
    return
  }
  if (!state.analysing) {
    clearAnalysis("stopped")
    socket.send({type: "stop", id: LIVE})
    return
  }
  clearAnalysis(state.status === "ongoing" ? "starting…" : statusText())
  if (state.status !== "ongoing") {
    // Mated or unable to move: the side to move lost.
    const lost = state.status === "checkmate" || state.status === "loss"
    setEvalBarResult(lost ? (state.whiteToMove ? -1 : 1) : 0)
  }
  if (state.fen === null) return
  analysisTimer = setTimeout(() => socket.send(analysisRequest()), ANALYSE_DELAY_MS)
}

// Results of a search that was already replaced may still arrive; those of
// another position or line count are dropped by their FEN and "multipv".
function onLive(message) {
  if (message.type === "error") {
    showError(new ApiError(message.error && message.error.code, message.error && message.error.message))
    setSearchState("")
    return
  }
  if (message.type !== "info" && message.type !== "bestmove") return
  if (message.fen && state.fen && message.fen !== state.fen) return
  if (message.multipv && message.multipv !== state.multipv) return
  if (message.type === "info" || (message.lines && message.lines.length)) {
    state.result = message
    renderAnalysis(message, {
      game: state.game,
      number: numberAt(state.ply),
      whiteToMove: state.whiteToMove,
      onPlayLine: playLine,
    })
    const top = message.lines && message.lines[0]
    board.setBestMove(top && top.moves && top.moves.length ? fromTo(state.game, top.moves[0]) : null)
  }
  if (message.type === "info") setSearchState(state.analysing ? "searching…" : "")
  else if (message.status && message.status !== "ongoing") setSearchState(statusText())
  else setSearchState(state.analysing ? "search ended" : "stopped")
}

const socket = new Socket((s) => {
  $("conn").textContent = s === "open" ? "live" : "reconnecting…"
  $("conn").classList.toggle("up", s === "open")
  // The server stopped this page's searches when the socket closed.
  if (s === "open" && state.fen !== null && state.analysing) restartAnalysis()
})
socket.on(LIVE, onLive)

$("toggle").addEventListener("click", () => {
  state.analysing = !state.analysing
  if (state.analysing) restartAnalysis()
  else {
    clearTimeout(analysisTimer)
    socket.send({type: "stop", id: LIVE})
    $("toggle").textContent = "Analyse"
    setSearchState("stopped")
  }
})

$("best").addEventListener("click", () => {
  const line = state.result && state.result.lines && state.result.lines[0]
  if (!line || !line.moves || line.moves.length === 0) {
    showError(state.status === "ongoing" ? "No analysis yet: start the analysis and wait for a line." : statusText())
    return
  }
  playLine(line, 0)
})

$("multipv").addEventListener("change", (e) => {
  state.multipv = Number(e.target.value)
  $("lines").style.setProperty("--lines", String(state.multipv))
  e.target.blur()
  if (state.analysing) restartAnalysis()
})

// ---- game, position, navigation -------------------------------------------

async function setGame(game, {keepReview = false} = {}) {
  state.game = game
  $("game").value = game
  state.variant = "standard"
  state.startFen = START[game]
  state.moves = []
  state.fen = null
  if (!keepReview) {
    state.chartPoints = []
    chart.setData([], game)
    $("review-summary").hidden = true
  }
  makeBoard()
  await show(0)
}

$("game").addEventListener("change", (e) => {
  clearError()
  e.target.blur()
  setGame(e.target.value)
})

$("start").addEventListener("click", () => {
  clearError()
  setGame(state.game)
})

$("fen-form").addEventListener("submit", async (e) => {
  e.preventDefault()
  const fen = $("fen").value.trim()
  if (!fen) {
    showError("Enter a FEN first.")
    return
  }
  // A draughts FEN starts with the side to move and a colon; a chess FEN has ranks.
  const game = /^[WB]\s*:/i.test(fen) ? "draughts" : fen.includes("/") ? "chess" : state.game
  let report
  try {
    report = await api.moves(game, fen, [])
  } catch (err) {
    showError(err)
    return
  }
  clearError()
  $("fen").blur()
  if (game !== state.game) {
    state.game = game
    $("game").value = game
    makeBoard()
  }
  state.variant = report.variant === "chess960" ? "chess960" : "standard"
  state.startFen = report.fen
  state.moves = []
  state.chartPoints = []
  chart.setData([], game)
  await show(0)
})

// A Chess960 start position by number (518 is the standard one) or at random.
async function setChess960(n) {
  clearError()
  if (state.game !== "chess") await setGame("chess")
  state.variant = "chess960"
  state.startFen = chess960Fen(n)
  state.moves = []
  state.chartPoints = []
  chart.setData([], "chess")
  await show(0)
}

bindChess960Form({form: $("c960-form"), number: $("c960-number"), random: $("c960-random"),
  onNumber: setChess960, onError: showError})

$("first").addEventListener("click", () => show(0))
$("back").addEventListener("click", () => show(state.ply - 1))
$("forward").addEventListener("click", () => show(state.ply + 1))
$("last").addEventListener("click", () => show(state.moves.length))
$("flip").addEventListener("click", () => {
  state.flipped = !state.flipped
  board.setFlipped(state.flipped)
  $("evalbar").classList.toggle("flipped", state.flipped)
})

document.addEventListener("keydown", (e) => {
  const tag = e.target && e.target.tagName
  if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || e.altKey || e.ctrlKey || e.metaKey) return
  const to = {ArrowLeft: state.ply - 1, ArrowRight: state.ply + 1, Home: 0, End: state.moves.length}[e.key]
  if (to === undefined) return
  e.preventDefault()
  if (to >= 0 && to <= state.moves.length && to !== state.ply) show(to)
})

// ---- review -------------------------------------------------------------

new Review({
  game: () => state.game,
  pauseAnalysis() {
    state.paused = true
    clearTimeout(analysisTimer)
    socket.send({type: "stop", id: LIVE})
    setSearchState("paused for the review")
  },
  resumeAnalysis() {
    if (!state.paused) return
    state.paused = false
    restartAnalysis()
  },
  setGame,
  showError,
  clearError,
  async loadReview({game, fen, plies, variant}) {
    if (game !== state.game) await setGame(game, {keepReview: true})
    state.variant = variant === "chess960" ? "chess960" : "standard"
    state.startFen = fen || START[game]
    state.moves = plies.map((p) => ({
      move: p.move,
      san: p.san,
      judgment: p.judgment || null,
      best: p.best,
      evalAfter: p.eval_after,
      ...fromTo(game, p.move),
    }))
    state.chartPoints = plies.map((p, i) => ({
      score: p.eval_after,
      judgment: p.judgment || null,
      label: `${numberAt(i)}${sideOf(game, state.startFen) === (i % 2 === 0) ? "." : "…"} ${p.san || p.move}${JUDGMENT_MARK[p.judgment] || ""}`,
    }))
    chart.setData(state.chartPoints, game)
    await show(0)
  },
})

// ---- start ----------------------------------------------------------------

setEvalBar(null, "chess")
makeBoard()
show(0)
