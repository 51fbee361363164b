// Scores as the server sends them, White's point of view (the default "pov"):
// {"cp": n}, {"mate": n} (chess) or {"win": n} (draughts, moves to a forced
// win, negative for a loss). Reviews may send a bare number of centipawns.

// The logistic curves of core/review/review.h, so the bar and the chart read
// the same as the review's judgments.
const K = {chess: 0.00368208, draughts: 0.006}

function forced(score) {
  if (score == null || typeof score !== "object") return null
  if (score.mate != null) return score.mate
  if (score.win != null) return score.win
  return null
}

// Winning chances for White, -1 (lost) .. 1 (won).
export function winningChances(score, game) {
  if (score == null) return 0
  const m = forced(score)
  if (m !== null) return m > 0 ? 1 : m < 0 ? -1 : 0
  const cp = typeof score === "number" ? score : score.cp
  if (typeof cp !== "number") return 0
  return 2 / (1 + Math.exp(-(K[game] || K.chess) * cp)) - 1
}

// "+0.34", "-1.20", "M3" (White mates in 3), "-M2" (Black does).
export function formatScore(score) {
  if (score == null) return ""
  const m = forced(score)
  if (m !== null) return m > 0 ? `M${m}` : m < 0 ? `-M${-m}` : "M0"
  const cp = typeof score === "number" ? score : score.cp
  if (typeof cp !== "number") return "?"
  const v = cp / 100
  return (v > 0 ? "+" : v < 0 ? "−" : "") + Math.abs(v).toFixed(2)
}

export function formatNps(nps) {
  if (!nps) return "0"
  if (nps >= 1e6) return (nps / 1e6).toFixed(2) + " M"
  if (nps >= 1e3) return (nps / 1e3).toFixed(0) + " k"
  return String(nps)
}

export function formatNodes(n) {
  if (!n) return "0"
  if (n >= 1e9) return (n / 1e9).toFixed(2) + " G"
  if (n >= 1e6) return (n / 1e6).toFixed(1) + " M"
  if (n >= 1e3) return (n / 1e3).toFixed(0) + " k"
  return String(n)
}
