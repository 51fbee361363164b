// The evaluation over a reviewed game: White's winning chances after each ply
// as a filled curve, the judged moves as coloured dots, the current ply as a
// line. A click selects the ply under the pointer.

import {winningChances, formatScore} from "./score.js"

const SVG_NS = "http://www.w3.org/2000/svg"
const H = 120

function el(name, attrs, parent) {
  const node = document.createElementNS(SVG_NS, name)
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v)
  parent.appendChild(node)
  return node
}

export class EvalChart {
  constructor(container, onSelect) {
    this.container = container
    this.onSelect = onSelect
    this.points = []
    this.game = "chess"
    this.current = 0
    this.svg = document.createElementNS(SVG_NS, "svg")
    this.width = 600
    this.svg.setAttribute("class", "eval-chart")
    this.svg.setAttribute("role", "img")
    this.svg.setAttribute("aria-label", "Evaluation over the game")
    container.appendChild(this.svg)
    window.addEventListener("resize", () => this.draw())
    this.svg.addEventListener("click", (e) => {
      if (this.points.length === 0) return
      const box = this.svg.getBoundingClientRect()
      const x = ((e.clientX - box.left) / box.width) * this.width
      this.onSelect(Math.max(0, Math.min(this.points.length, Math.round(x / this.step()))))
    })
  }

  // points[i]: {score (after ply i+1, White's view), judgment, san}
  setData(points, game) {
    this.points = points
    this.game = game
    this.draw()
  }

  setCurrent(ply) {
    this.current = ply
    this.draw()
  }

  step() {
    return this.width / Math.max(1, this.points.length)
  }

  y(score) {
    return H / 2 - (winningChances(score, this.game) * (H / 2 - 4))
  }

  draw() {
    const svg = this.svg
    svg.replaceChildren()
    this.container.hidden = this.points.length === 0
    if (this.points.length === 0) return
    // Drawn in the chart's own pixels, so dots stay round at any width.
    const W = (this.width = Math.max(200, Math.round(svg.clientWidth || 600)))
    svg.setAttribute("viewBox", `0 0 ${W} ${H}`)
    el("rect", {x: 0, y: 0, width: W, height: H, class: "chart-bg"}, svg)
    const step = this.step()
    // Ply 0 is the start position, even.
    let d = `M0,${H} L0,${H / 2}`
    this.points.forEach((p, i) => {
      d += ` L${(i + 1) * step},${this.y(p.score)}`
    })
    d += ` L${W},${H} Z`
    el("path", {d, class: "chart-white"}, svg)
    el("line", {x1: 0, y1: H / 2, x2: W, y2: H / 2, class: "chart-mid"}, svg)
    const cx = this.current * step
    el("line", {x1: cx, y1: 0, x2: cx, y2: H, class: "chart-cursor"}, svg)
    this.points.forEach((p, i) => {
      if (!p.judgment) return
      const dot = el("circle", {cx: (i + 1) * step, cy: this.y(p.score), r: 4, class: `chart-dot ${p.judgment}`}, svg)
      const title = document.createElementNS(SVG_NS, "title")
      title.textContent = `${p.label}: ${p.judgment} (${formatScore(p.score)})`
      dot.appendChild(title)
    })
  }
}
