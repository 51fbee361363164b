// Game review: the pasted PGN/PDN goes to POST /v1/games/annotate as a job,
// GET /v1/jobs/{id} is polled for progress, and the finished review is
// handed to the page (moves with judgments, evaluations for the chart).

import {api, ApiError} from "./api.js"
import {JUDGMENT_MARK} from "./move-list.js"

const $ = (id) => document.getElementById(id)
const POLL_MS = 400

// A PDN says so in its GameType tag (25 = Russian draughts), or its moves
// look like c3-d4 / c3:e5; anything else is read as chess.
export function detectGame(text) {
  const tag = text.match(/\[\s*GameType\s+"(\d+)/i)
  if (tag) return tag[1] === "25" ? "draughts" : "chess"
  if (/\b[a-h][1-8]\s*[-:x]\s*[a-h][1-8]\b/.test(text) && !/\b[NBRQK][a-h]?[1-8]?x?[a-h][1-8]/.test(text)) return "draughts"
  if (/(^|\s)\d+\.\s*\d{1,2}\s*[-x]\s*\d{1,2}\b/.test(text)) return "draughts"
  return "chess"
}

// The [FEN "..."] tag of the first game, if any.
export function startFenOf(text) {
  const tag = text.match(/\[\s*FEN\s+"([^"]*)"\s*\]/i)
  return tag ? tag[1] : null
}

export class Review {
  // page: {game(), setGame(game), loadReview({game, fen, plies}), showError(e), clearError(),
  //        pauseAnalysis(), resumeAnalysis()}
  constructor(page) {
    this.page = page
    this.jobId = null
    this.timer = null
    $("review-form").addEventListener("submit", (e) => {
      e.preventDefault()
      this.run()
    })
    $("review-cancel").addEventListener("click", () => this.cancel())
  }

  async run() {
    const text = $("record").value.trim()
    if (!text) {
      this.page.showError("Paste a PGN or PDN game first.")
      return
    }
    this.stopPolling()
    const game = detectGame(text)
    if (game !== this.page.game()) await this.page.setGame(game, {keepReview: true})
    const body = game === "draughts" ? {pdn: text} : {pgn: text}
    body.limits = {nodes: Number($("review-nodes").value)}
    this.setBusy(true)
    $("review-summary").hidden = true
    // A review is batch work: the server serves live analysis first, so
    // the page's own live search would hold it back. It resumes afterwards.
    this.page.pauseAnalysis()
    try {
      const job = await api.annotate(body)
      this.page.clearError()
      this.jobId = job.id
      this.poll(game, text)
    } catch (e) {
      this.setBusy(false)
      this.page.showError(e)
    }
  }

  poll(game, text) {
    const id = this.jobId
    this.timer = setTimeout(async () => {
      if (id !== this.jobId) return
      let job
      try {
        job = await api.job(id)
      } catch (e) {
        this.setBusy(false)
        this.jobId = null
        this.page.showError(e)
        return
      }
      if (id !== this.jobId) return
      const progress = job.progress || {}
      const bar = $("review-progress")
      if (progress.plies) {
        bar.max = progress.plies
        bar.value = progress.ply || 0
      }
      if (job.status === "done") {
        this.setBusy(false)
        this.jobId = null
        this.finish(game, text, job.result || {})
      } else if (job.status === "failed" || job.status === "cancelled") {
        this.setBusy(false)
        this.jobId = null
        const err = job.error || (job.result && job.result.error)
        this.page.showError(err ? new ApiError(err.code, err.message) : `The review ${job.status}.`)
      } else {
        this.poll(game, text)
      }
    }, POLL_MS)
  }

  async cancel() {
    const id = this.jobId
    this.stopPolling()
    this.setBusy(false)
    if (id) {
      try {
        await api.cancelJob(id)
      } catch (e) {
        // Already finished or forgotten: nothing left to cancel.
      }
    }
  }

  stopPolling() {
    this.jobId = null
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
  }

  setBusy(busy) {
    if (!busy) this.page.resumeAnalysis()
    $("review-run").disabled = busy
    $("review-cancel").hidden = !busy
    const bar = $("review-progress")
    bar.hidden = !busy
    if (busy) {
      bar.removeAttribute("value")  // indeterminate until the first progress
    }
  }

  async finish(game, text, result) {
    const plies = result.plies || []
    const fen = result.fen || result.start_fen || startFenOf(text)
    await this.page.loadReview({game, fen, plies, variant: result.variant})
    this.summarise(result, plies)
  }

  summarise(result, plies) {
    const box = $("review-summary")
    box.replaceChildren()
    const table = document.createElement("table")
    const head = table.insertRow()
    for (const h of ["", "accuracy", "?!", "?", "??", "avg loss"]) {
      const th = document.createElement("th")
      th.textContent = h
      head.appendChild(th)
    }
    for (const side of ["white", "black"]) {
      const own = plies.filter((p) => p.color === side)
      const player = (result.players && result.players[side]) || {}
      const plural = {inaccuracy: "inaccuracies", mistake: "mistakes", blunder: "blunders"}
      const count = (j) => player[plural[j]] ?? own.filter((p) => p.judgment === j).length
      const accuracy = player.accuracy != null ? `${Number(player.accuracy).toFixed(1)}%` : "–"
      const loss = player.average_loss ?? player.acpl ?? player.average_centipawn_loss
      const row = table.insertRow()
      row.className = side
      for (const v of [side === "white" ? "White" : "Black", accuracy, count("inaccuracy"), count("mistake"), count("blunder"),
        loss != null ? Math.round(loss) : "–"]) {
        row.insertCell().textContent = String(v)
      }
    }
    box.appendChild(table)
    const annotated = result.pgn || result.pdn
    if (annotated) {
      const link = document.createElement("a")
      link.href = URL.createObjectURL(new Blob([annotated], {type: "text/plain"}))
      link.download = result.pdn ? "review.pdn" : "review.pgn"
      link.textContent = `Download the annotated ${result.pdn ? "PDN" : "PGN"}`
      box.appendChild(link)
    }
    box.hidden = false
  }
}

export function judgmentNote(move, moveLabel, bestLabel, scoreText) {
  if (!move || !move.judgment) return ""
  const mark = JUDGMENT_MARK[move.judgment] || ""
  let text = `${moveLabel}${mark} is ${move.judgment === "inaccuracy" ? "an" : "a"} ${move.judgment}.`
  if (bestLabel) text += ` Best was ${bestLabel}${scoreText ? ` (${scoreText})` : ""}.`
  return text
}
