// The Russian draughts board: an SVG of its own, 8x8, pieces on the dark
// squares, PDN square names (a1 bottom left for White, a1 is dark). Moves by
// click: a piece, then one of its highlighted targets. The legal moves come
// from POST /v1/moves; when several share from and to (different captured
// pieces) the player picks one from a list.

const SVG_NS = "http://www.w3.org/2000/svg"
const SIZE = 100

function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG_NS, name)
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v)
  if (parent) parent.appendChild(node)
  return node
}

// PDN square number 1-32 to its name: 1 = b8, 4 = h8, 29 = a1, 32 = g1.
export function numberToSquare(n) {
  const row = Math.floor((n - 1) / 4)
  const index = (n - 1) % 4
  const rank = 8 - row
  const file = row % 2 === 0 ? 2 * index + 1 : 2 * index
  return String.fromCharCode(97 + file) + rank
}

// PDN FEN, algebraic ("W:Wa1,c1,Kd8:Bb8") or numeric ("B:W21,22,K5:B1-3.").
// Returns {whiteToMove, pieces: Map square -> "w"|"W"|"b"|"B"} (capital = king).
export function parseDraughtsFen(fen) {
  const pieces = new Map()
  const text = String(fen || "").trim().replace(/\.$/, "")
  const parts = text.split(":")
  const whiteToMove = (parts[0] || "W").trim().toUpperCase() !== "B"
  for (const part of parts.slice(1)) {
    const side = part.trim().charAt(0).toUpperCase()
    if (side !== "W" && side !== "B") continue
    for (let token of part.trim().slice(1).split(",")) {
      token = token.trim()
      if (!token) continue
      let king = false
      if (token[0] === "K" || token[0] === "k") {
        king = true
        token = token.slice(1)
      }
      const squares = []
      const range = token.match(/^(\d+)-(\d+)$/)
      if (range) {
        for (let n = +range[1]; n <= +range[2]; n++) squares.push(numberToSquare(n))
      } else if (/^\d+$/.test(token)) {
        squares.push(numberToSquare(+token))
      } else if (/^[a-h][1-8]$/i.test(token)) {
        squares.push(token.toLowerCase())
      }
      const code = side === "W" ? (king ? "W" : "w") : king ? "B" : "b"
      for (const s of squares) pieces.set(s, code)
    }
  }
  return {whiteToMove, pieces}
}

export class DraughtsBoard {
  constructor(container, {onMove}) {
    this.container = container
    this.onMove = onMove
    this.flipped = false
    this.legal = []
    this.pieces = new Map()
    this.selected = null
    this.lastMove = null
    this.best = null
    this.inputEnabled = true
    this.root = document.createElement("div")
    this.root.className = "draughts-board"
    this.svg = el("svg", {viewBox: `0 0 ${8 * SIZE} ${8 * SIZE}`, role: "img", "aria-label": "Draughts board"})
    this.root.appendChild(this.svg)
    this.choice = document.createElement("div")
    this.choice.className = "move-choice"
    this.choice.hidden = true
    this.root.appendChild(this.choice)
    container.appendChild(this.root)
    this.svg.addEventListener("click", (e) => this.click(e))
    this.draw()
  }

  destroy() {
    this.root.remove()
  }

  setPosition(fen, legal) {
    const parsed = parseDraughtsFen(fen)
    this.pieces = parsed.pieces
    this.legal = legal || []
    this.selected = null
    this.hideChoice()
    this.draw()
  }

  setLastMove(from, to) {
    this.lastMove = from && to ? {from, to} : null
    this.draw()
  }

  // move: {from, to, path: [from, landing squares..., to]}
  setBestMove(move) {
    this.best = move && move.from && move.to ? move : null
    this.draw()
  }

  setFlipped(flipped) {
    this.flipped = flipped
    this.draw()
  }

  setInputEnabled(enabled) {
    this.inputEnabled = enabled
    if (!enabled) this.selected = null
    this.draw()
  }

  xy(square) {
    const file = square.charCodeAt(0) - 97
    const rank = +square[1] - 1
    return this.flipped ? {x: (7 - file) * SIZE, y: rank * SIZE} : {x: file * SIZE, y: (7 - rank) * SIZE}
  }

  squareAt(x, y) {
    let file = Math.floor(x / SIZE)
    let rank = 7 - Math.floor(y / SIZE)
    if (this.flipped) {
      file = 7 - file
      rank = 7 - rank
    }
    if (file < 0 || file > 7 || rank < 0 || rank > 7) return null
    return String.fromCharCode(97 + file) + (rank + 1)
  }

  movesFrom(square) {
    return this.legal.filter((m) => m.from === square)
  }

  click(event) {
    if (!this.inputEnabled) return
    const target = event.target.closest("[data-square]")
    const square = target ? target.getAttribute("data-square") : null
    this.hideChoice()
    if (!square) return
    if (this.selected) {
      const candidates = this.legal.filter((m) => m.from === this.selected && m.to === square)
      if (candidates.length === 1) {
        this.selected = null
        this.draw()
        this.onMove(candidates[0])
        return
      }
      if (candidates.length > 1) {
        this.showChoice(square, candidates)
        return
      }
    }
    this.selected = this.movesFrom(square).length > 0 && square !== this.selected ? square : null
    this.draw()
  }

  // Several captures share start and end: list them, highlighting on hover
  // which pieces each one takes.
  showChoice(square, candidates) {
    this.choice.replaceChildren()
    const title = document.createElement("div")
    title.className = "move-choice-title"
    title.textContent = "Which capture?"
    this.choice.appendChild(title)
    for (const m of candidates) {
      const button = document.createElement("button")
      button.type = "button"
      button.textContent = `${m.move} (takes ${(m.captured || []).join(", ")})`
      button.addEventListener("mouseenter", () => this.draw(m.captured))
      button.addEventListener("focus", () => this.draw(m.captured))
      button.addEventListener("click", (e) => {
        e.stopPropagation()
        this.hideChoice()
        this.selected = null
        this.draw()
        this.onMove(m)
      })
      this.choice.appendChild(button)
    }
    const {x, y} = this.xy(square)
    this.choice.style.left = `${Math.min(x / 8, 55)}%`
    this.choice.style.top = `${Math.min((y + SIZE) / 8, 70)}%`
    this.choice.hidden = false
    this.choice.querySelector("button").focus()
  }

  hideChoice() {
    this.choice.hidden = true
  }

  draw(highlightCaptured = null) {
    const svg = this.svg
    svg.replaceChildren()
    const squares = el("g", {class: "squares"}, svg)
    const targets = new Set(this.selected ? this.movesFrom(this.selected).map((m) => m.to) : [])
    const movable = new Set(this.legal.map((m) => m.from))
    const captured = new Set(highlightCaptured || [])
    for (let file = 0; file < 8; file++) {
      for (let rank = 0; rank < 8; rank++) {
        const square = String.fromCharCode(97 + file) + (rank + 1)
        const dark = (file + rank) % 2 === 0
        const {x, y} = this.xy(square)
        let cls = dark ? "sq dark" : "sq light"
        if (this.lastMove && (this.lastMove.from === square || this.lastMove.to === square)) cls += " last"
        if (this.selected === square) cls += " selected"
        el("rect", {x, y, width: SIZE, height: SIZE, class: cls, "data-square": square}, squares)
        // Coordinates along the bottom and left edges, as on a printed board.
        const bottomRank = this.flipped ? 7 : 0
        const leftFile = this.flipped ? 7 : 0
        if (rank === bottomRank) {
          const t = el("text", {x: x + SIZE - 6, y: y + SIZE - 6, class: "coord " + (dark ? "on-dark" : "on-light"), "text-anchor": "end"}, squares)
          t.textContent = String.fromCharCode(97 + file)
        }
        if (file === leftFile) {
          const t = el("text", {x: x + 5, y: y + 22, class: "coord " + (dark ? "on-dark" : "on-light")}, squares)
          t.textContent = String(rank + 1)
        }
      }
    }
    const piecesGroup = el("g", {class: "pieces"}, svg)
    for (const [square, code] of this.pieces) {
      const {x, y} = this.xy(square)
      const cx = x + SIZE / 2
      const cy = y + SIZE / 2
      const white = code === "w" || code === "W"
      let cls = "piece " + (white ? "white" : "black")
      if (movable.has(square) && this.inputEnabled) cls += " movable"
      if (captured.has(square)) cls += " captured"
      const g = el("g", {class: cls, "data-square": square, "data-piece": code}, piecesGroup)
      el("circle", {cx, cy: cy + 3, r: 38, class: "shadow"}, g)
      el("circle", {cx, cy, r: 38, class: "body"}, g)
      el("circle", {cx, cy, r: 27, class: "ring"}, g)
      if (code === "W" || code === "B") {
        // A crown: five points over a band.
        const s = 1
        const pts = [
          [-20, 10], [-22, -12], [-11, 0], [0, -18], [11, 0], [22, -12], [20, 10],
        ].map(([px, py]) => `${cx + px * s},${cy + py * s}`).join(" ")
        el("polygon", {points: pts, class: "crown"}, g)
      }
    }
    const marks = el("g", {class: "marks"}, svg)
    for (const square of targets) {
      const {x, y} = this.xy(square)
      el("circle", {cx: x + SIZE / 2, cy: y + SIZE / 2, r: 15, class: "target", "data-square": square}, marks)
    }
    // The best-move arrow would hide the targets of a selected piece.
    if (this.best && !this.selected) {
      // Through every landing square, so a capture's turns show.
      const squares = this.best.path && this.best.path.length > 1 ? this.best.path : [this.best.from, this.best.to]
      const points = squares.map((sq) => {
        const {x, y} = this.xy(sq)
        return `${x + SIZE / 2},${y + SIZE / 2}`
      })
      const defs = el("defs", {}, svg)
      const marker = el("marker", {id: "dr-arrowhead", markerWidth: 4, markerHeight: 4, refX: 2, refY: 2, orient: "auto"}, defs)
      el("path", {d: "M0,0 L4,2 L0,4 z", class: "best-arrow-head"}, marker)
      el("polyline", {points: points.join(" "), class: "best-arrow", "marker-end": "url(#dr-arrowhead)"}, svg)
    }
  }
}
