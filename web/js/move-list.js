// The move list: numbered pairs, the current ply highlighted, reviewed moves
// marked with their judgment (?! inaccuracy, ? mistake, ?? blunder).

export const JUDGMENT_MARK = {inaccuracy: "?!", mistake: "?", blunder: "??"}

// moves[i]: {move, san, judgment}; firstNumber and whiteFirst describe the
// start position; onSelect(ply) goes to the position after `ply` moves.
export function renderMoveList(container, {moves, ply, firstNumber, whiteFirst, onSelect}) {
  container.replaceChildren()
  if (moves.length === 0) {
    const empty = document.createElement("p")
    empty.className = "moves-empty"
    empty.textContent = "Play a move on the board, or paste a game below."
    container.appendChild(empty)
    return
  }
  const list = document.createElement("div")
  list.className = "move-grid"
  let number = firstNumber
  const offset = whiteFirst ? 0 : 1
  let current = null
  for (let i = -offset; i < moves.length; i += 2) {
    const num = document.createElement("span")
    num.className = "move-number"
    num.textContent = `${number}.`
    list.appendChild(num)
    for (const j of [i, i + 1]) {
      const cell = document.createElement("button")
      cell.type = "button"
      cell.className = "move"
      if (j < 0 || j >= moves.length) {
        cell.disabled = true
        cell.classList.add("blank")
        cell.textContent = j < 0 ? "…" : ""
      } else {
        const m = moves[j]
        cell.dataset.ply = String(j + 1)
        cell.textContent = m.san || m.move
        if (m.judgment) {
          const mark = document.createElement("span")
          mark.className = `judgment ${m.judgment}`
          mark.textContent = JUDGMENT_MARK[m.judgment] || ""
          mark.title = m.judgment
          cell.appendChild(mark)
        }
        if (j + 1 === ply) {
          cell.classList.add("current")
          current = cell
        }
        cell.addEventListener("click", () => onSelect(j + 1))
      }
      list.appendChild(cell)
    }
    number++
  }
  container.appendChild(list)
  if (current) {
    // Keep the current move in view without scrolling the whole page.
    const top = current.offsetTop  // the container is the offset parent (position: relative)
    if (top < container.scrollTop || top > container.scrollTop + container.clientHeight - current.offsetHeight) {
      container.scrollTop = top - container.clientHeight / 2
    }
  } else if (ply === 0) {
    container.scrollTop = 0
  }
}
