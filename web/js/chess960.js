// Chess960 start positions by number, 0-959, in Scharnagl's numbering (the
// one Lichess, FIDE's rules appendix and Stockfish's tests use): 518 is the
// standard start. n mod 4 places the light-squared bishop (b, d, f, h), the
// next digit base 4 the dark-squared one (a, c, e, g), the next base 6 the
// queen on the free squares, the rest (0-9) the knights' pair among the five
// left; rook, king, rook fill the last three from a to h.

const KNIGHTS = ["NN---", "N-N--", "N--N-", "N---N", "-NN--", "-N-N-", "-N--N", "--NN-", "--N-N", "---NN"]

export function chess960Rank(n) {
  if (!Number.isInteger(n) || n < 0 || n > 959) throw new RangeError("a Chess960 position is numbered 0 to 959")
  const rank = Array(8).fill(null)
  rank[2 * (n % 4) + 1] = "B"
  n = Math.floor(n / 4)
  rank[2 * (n % 4)] = "B"
  n = Math.floor(n / 4)
  const free = () => rank.map((p, i) => (p ? -1 : i)).filter((i) => i >= 0)
  rank[free()[n % 6]] = "Q"
  n = Math.floor(n / 6)
  free().forEach((sq, i) => {
    if (KNIGHTS[n][i] === "N") rank[sq] = "N"
  })
  free().forEach((sq, i) => {
    rank[sq] = "RKR"[i]
  })
  return rank.join("")
}

// The X-FEN of start position n (KQkq: every start has one rook each side of its king).
export function chess960Fen(n) {
  const r = chess960Rank(n)
  return `${r.toLowerCase()}/pppppppp/8/8/8/8/PPPPPPPP/${r} w KQkq - 0 1`
}

export function randomChess960(random = Math.random) {
  return Math.floor(random() * 960)
}

// The page's Chess960 form: a number typed (checked here) or a random one,
// handed to onNumber; the field shows the number set.
export function bindChess960Form({form, number, random, onNumber, onError}) {
  form.addEventListener("submit", (e) => {
    e.preventDefault()
    const n = Number(number.value)
    if (number.value === "" || !Number.isInteger(n) || n < 0 || n > 959) {
      onError("A Chess960 start position is numbered 0 to 959 (518 is the standard one).")
      return
    }
    number.blur()
    onNumber(n)
  })
  random.addEventListener("click", (e) => {
    e.target.blur()
    const n = randomChess960()
    number.value = String(n)
    onNumber(n)
  })
}
