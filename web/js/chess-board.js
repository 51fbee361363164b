// The chess board: cm-chessboard (click or drag) with its markers, arrows and
// promotion dialog. Only the legal moves the server listed can be played.

import {Chessboard, COLOR, INPUT_EVENT_TYPE, BORDER_TYPE} from "cm-chessboard/src/Chessboard.js"
import {Markers, MARKER_TYPE} from "cm-chessboard/src/extensions/markers/Markers.js"
import {Arrows, ARROW_TYPE} from "cm-chessboard/src/extensions/arrows/Arrows.js"
import {PromotionDialog, PROMOTION_DIALOG_RESULT_TYPE} from "cm-chessboard/src/extensions/promotion-dialog/PromotionDialog.js"

const ASSETS = "vendor/cm-chessboard/assets/"

export class ChessBoard {
  constructor(container, {onMove}) {
    this.onMove = onMove
    this.legal = []
    this.fen = "start"
    this.whiteToMove = true
    this.inputEnabled = true
    this.root = document.createElement("div")
    this.root.className = "chess-board"
    container.appendChild(this.root)
    this.board = new Chessboard(this.root, {
      position: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR",
      assetsUrl: ASSETS,
      style: {
        cssClass: "default",
        borderType: BORDER_TYPE.none,
        pieces: {file: "pieces/staunty.svg"},
        animationDuration: 150,
      },
      extensions: [{class: Markers}, {class: Arrows}, {class: PromotionDialog}],
    })
  }

  destroy() {
    this.board.destroy()
    this.root.remove()
  }

  setPosition(fen, legal) {
    this.fen = fen
    this.legal = legal || []
    this.whiteToMove = (fen.split(" ")[1] || "w") === "w"
    this.board.removeMarkers(MARKER_TYPE.dot)
    this.board.setPosition(fen, true)
    this.updateInput()
  }

  setLastMove(from, to) {
    this.board.removeMarkers(MARKER_TYPE.square)
    if (from && to) {
      this.board.addMarker(MARKER_TYPE.square, from)
      this.board.addMarker(MARKER_TYPE.square, to)
    }
  }

  setBestMove(move) {
    this.board.removeArrows()
    if (move && move.from && move.to) this.board.addArrow(ARROW_TYPE.info, move.from, move.to)
  }

  setFlipped(flipped) {
    this.board.setOrientation(flipped ? COLOR.black : COLOR.white)
  }

  setInputEnabled(enabled) {
    this.inputEnabled = enabled
    this.updateInput()
  }

  updateInput() {
    this.board.disableMoveInput()
    if (!this.inputEnabled || this.legal.length === 0) return
    this.board.enableMoveInput((event) => this.input(event), this.whiteToMove ? COLOR.white : COLOR.black)
  }

  movesFrom(square) {
    return this.legal.filter((m) => m.uci.slice(0, 2) === square)
  }

  input(event) {
    switch (event.type) {
      case INPUT_EVENT_TYPE.moveInputStarted: {
        const moves = this.movesFrom(event.squareFrom)
        for (const m of moves) this.board.addMarker(MARKER_TYPE.dot, m.uci.slice(2, 4))
        for (const m of moves) if (m.castle) this.board.addMarker(MARKER_TYPE.dot, m.castle)
        return moves.length > 0
      }
      case INPUT_EVENT_TYPE.validateMoveInput: {
        this.board.removeMarkers(MARKER_TYPE.dot)
        const from = this.movesFrom(event.squareFrom)
        let candidates = from.filter((m) => m.uci.slice(2, 4) === event.squareTo)
        // A king moved to g1/c1 castles when no plain king move goes there.
        if (candidates.length === 0) candidates = from.filter((m) => m.castle === event.squareTo)
        if (candidates.length === 0) return false
        if (candidates.length > 1 || candidates[0].uci.length > 4) {
          const color = this.whiteToMove ? COLOR.white : COLOR.black
          this.board.showPromotionDialog(event.squareTo, color, (result) => {
            if (result.type === PROMOTION_DIALOG_RESULT_TYPE.pieceSelected) {
              const uci = event.squareFrom + event.squareTo + result.piece.charAt(1)
              const chosen = candidates.find((m) => m.uci === uci)
              if (chosen) {
                this.onMove(chosen)
                return
              }
            }
            this.board.setPosition(this.fen, false)
          })
          return true
        }
        // The app redraws from the server's FEN afterwards (castling, en passant).
        setTimeout(() => this.onMove(candidates[0]), 0)
        return true
      }
      case INPUT_EVENT_TYPE.moveInputCanceled:
      case INPUT_EVENT_TYPE.moveInputFinished:
        this.board.removeMarkers(MARKER_TYPE.dot)
        return true
      default:
        return true
    }
  }
}
