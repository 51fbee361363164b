// Browser test of the analysis board page: a real Kibitz serving the built
// page, Debian's chromium driven by playwright-core, a person's steps.
//
//   node browser_test.mjs <kibitz binary> [web root] [artifacts dir]
//
// Defaults: web root <dir of kibitz>/web, artifacts <dir of kibitz>/artifacts/web.
// Env: KIBITZ_BIN, KIBITZ_WEB_ROOT, KIBITZ_ARTIFACTS, CHROMIUM (default /usr/bin/chromium).
// Screenshots of the chess and draughts analysis views at desktop and phone
// sizes, and of the API reference page, land in the artifacts dir. Prints "N passed, N failed" last.

import {spawn} from "node:child_process"
import {mkdirSync, existsSync, rmSync} from "node:fs"
import path from "node:path"
import {chromium} from "playwright-core"

const bin = path.resolve(process.argv[2] || process.env.KIBITZ_BIN || "build/kibitz")
const webRoot = path.resolve(process.argv[3] || process.env.KIBITZ_WEB_ROOT || path.join(path.dirname(bin), "web"))
const artifacts = path.resolve(process.argv[4] || process.env.KIBITZ_ARTIFACTS || path.join(path.dirname(bin), "artifacts", "web"))
const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium"
// Generous: the machine is small and shared; nothing here measures speed.
const WAIT = 30000

let passed = 0
let failed = 0
const results = []

function check(name, ok, detail = "") {
  if (ok) passed++
  else failed++
  results.push(`${ok ? "ok  " : "FAIL"} ${name}${detail ? ` — ${detail}` : ""}`)
  console.log(results[results.length - 1])
  return ok
}

function fail(message) {
  throw new Error(message)
}

// ---- the server ----------------------------------------------------------

function startServer() {
  return new Promise((resolve, reject) => {
    // A memory store: the default SQLite file would be made under the test's working directory.
    const child = spawn(bin, ["serve", "--port", "0", "--web-root", webRoot],
                        {stdio: ["ignore", "pipe", "pipe"], env: {...process.env, KIBITZ_STORE_BACKEND: "memory"}})
    let output = ""
    const timer = setTimeout(() => reject(new Error(`kibitz did not say where it listens:\n${output}`)), WAIT)
    const onData = (chunk) => {
      output += chunk.toString()
      const m = output.match(/listening on ([\d.]+):(\d+)/)
      if (m) {
        clearTimeout(timer)
        resolve({child, url: `http://${m[1]}:${m[2]}/`, log: () => output})
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", (c) => {
      output += c.toString()
      onData("")
    })
    child.on("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`kibitz exited with ${code}:\n${output}`))
    })
  })
}

// ---- page helpers --------------------------------------------------------

async function openPage(browser, url, viewport, mobile) {
  const context = await browser.newContext({viewport, isMobile: mobile, hasTouch: mobile, deviceScaleFactor: 1})
  const page = await context.newPage()
  page.errors = []
  page.on("pageerror", (e) => page.errors.push(e.message))
  page.on("console", (m) => {
    // The bad-FEN step's 400 answer is expected; chromium logs it all the same.
    if (m.type() === "error" && !/status of 400 \(Bad Request\)/.test(m.text())) page.errors.push(m.text())
  })
  await page.goto(url)
  await page.waitForSelector("#conn.up", {timeout: WAIT})
  return page
}

const depthOf = (page) => page.$eval("#depth", (e) => Number(e.dataset.depth || 0))
const lineCount = (page) => page.$$eval("#lines li", (l) => l.length)
const lineTexts = (page) => page.$$eval("#lines li .pv", (l) => l.map((e) => e.textContent.trim()))
const currentMove = (page) => page.$eval("#moves", (e) => {
  const c = e.querySelector(".move.current")
  return c ? c.textContent.trim() : ""
})
// "1… e5 2. Nf3" -> "e5"
const firstMove = (line) => line.replace(/^\d+(\.|…)\s*/, "").split(/\s+/)[0]
const moveCount = (page) => page.$$eval("#moves .move[data-ply]", (l) => l.length)

// Waits for at least `count` lines whose moves match `pattern`, then for the
// depth to grow past what it was when they appeared.
async function waitForDeepeningAnalysis(page, {count = 1, pattern}) {
  await page.waitForFunction(
    ([n, source]) => {
      const lines = [...document.querySelectorAll("#lines li .pv")]
      return lines.length >= n && lines.slice(0, n).every((l) => new RegExp(source).test(l.textContent.trim()))
    },
    [count, pattern.source],
    {timeout: WAIT},
  )
  const first = await depthOf(page)
  await page.waitForFunction((d) => Number(document.querySelector("#depth").dataset.depth || 0) > d, first, {timeout: WAIT})
  return {first, later: await depthOf(page)}
}

async function clickSquare(page, game, square) {
  const selector = game === "chess"
    ? `#board .cm-chessboard rect.square[data-square="${square}"]`
    : `#board .draughts-board [data-square="${square}"]:is(.piece, .target)`
  await page.click(selector)
}

async function screenshot(page, name) {
  const file = path.join(artifacts, name)
  await page.screenshot({path: file})
  console.log(`     screenshot ${file}`)
}

// ---- the steps -----------------------------------------------------------

const SAN = /^1…\s*[a-hNBRQKO]/  // Black's reply after 1. e4, numbered "1…"
const PDN = /^1…\s*[a-h][1-8][-:][a-h][1-8]/

async function chessSteps(page, size) {
  await page.waitForSelector("#board .cm-chessboard rect.square[data-square='e2']", {timeout: WAIT})
  await clickSquare(page, "chess", "e2")
  await clickSquare(page, "chess", "e4")
  await page.waitForFunction(() => document.querySelector("#moves .move.current")?.textContent.trim() === "e4", null, {timeout: WAIT})
  check(`${size}: 1. e4 played by clicking`, (await currentMove(page)) === "e4")
  // The board redraws from the server's FEN, after its move animation.
  const piece = await page.waitForSelector("#board .cm-chessboard .pieces g[data-square='e4'][data-piece='wp']", {timeout: WAIT})
  check(`${size}: the pawn stands on e4`, piece !== null && (await page.$("#board .cm-chessboard .pieces g[data-square='e2']")) === null)
  const {first, later} = await waitForDeepeningAnalysis(page, {pattern: SAN})
  check(`${size}: an analysis line appears and deepens`, later > first, `depth ${first} -> ${later}; ${(await lineTexts(page))[0]}`)
}

async function draughtsSteps(page, size) {
  await page.selectOption("#game", "draughts")
  await page.waitForSelector("#board .draughts-board .piece[data-square='c3']", {timeout: WAIT})
  await page.waitForFunction(() => document.querySelector("#fen").value.startsWith("W:"), null, {timeout: WAIT})
  await clickSquare(page, "draughts", "c3")
  await page.waitForSelector("#board .draughts-board .target[data-square='d4']", {timeout: WAIT})
  await clickSquare(page, "draughts", "d4")
  await page.waitForFunction(() => document.querySelector("#moves .move.current")?.textContent.trim() === "c3-d4", null, {timeout: WAIT})
  check(`${size}: c3-d4 played by clicking`, (await currentMove(page)) === "c3-d4")
  check(`${size}: a white man stands on d4`,
    (await page.$("#board .draughts-board .piece.white[data-square='d4']")) !== null &&
    (await page.$("#board .draughts-board .piece[data-square='c3']")) === null)
  const {first, later} = await waitForDeepeningAnalysis(page, {pattern: PDN})
  check(`${size}: draughts analysis appears and deepens`, later > first, `depth ${first} -> ${later}; ${(await lineTexts(page))[0]}`)
}

async function desktop(browser, url) {
  const page = await openPage(browser, url, {width: 1280, height: 800}, false)
  await chessSteps(page, "desktop")

  // Back and forward with the keyboard; going back analyses the start position.
  await page.keyboard.press("ArrowLeft")
  await page.waitForFunction(() => !document.querySelector("#moves .move.current"), null, {timeout: WAIT})
  await waitForDeepeningAnalysis(page, {pattern: /^1\.\s*[a-hNBRQKO]/})
  check("desktop: ← goes back to the start and analyses it", (await lineTexts(page))[0].startsWith("1."))
  await page.keyboard.press("ArrowRight")
  await page.waitForFunction(() => document.querySelector("#moves .move.current")?.textContent.trim() === "e4", null, {timeout: WAIT})
  await waitForDeepeningAnalysis(page, {pattern: SAN})
  check("desktop: → goes forward to 1. e4 again", (await currentMove(page)) === "e4")

  await page.selectOption("#multipv", "3")
  await waitForDeepeningAnalysis(page, {count: 3, pattern: SAN})
  const lines = await lineTexts(page)
  const firstMoves = lines.map(firstMove)
  check("desktop: MultiPV 3 shows three lines", lines.length === 3 && new Set(firstMoves).size === 3, firstMoves.join(" | "))
  // Let it settle a little deeper for a picture worth looking at.
  await page.waitForFunction(() => Number(document.querySelector("#depth").dataset.depth || 0) >= 10, null, {timeout: WAIT})
  await screenshot(page, "chess-desktop.png")

  await page.click("#best")
  await page.waitForFunction(() => document.querySelectorAll("#moves .move[data-ply]").length === 2, null, {timeout: WAIT})
  check("desktop: play best move adds Black's reply", (await moveCount(page)) === 2, await currentMove(page))

  await draughtsSteps(page, "desktop")
  await page.waitForFunction(() => Number(document.querySelector("#depth").dataset.depth || 0) >= 8, null, {timeout: WAIT})
  await screenshot(page, "draughts-desktop.png")

  // Two captures from a3 to c1 that take different men: the page asks which.
  await page.fill("#fen", "W:WKa3:Bg7,b4,d4,d2")
  await page.click("#fen-form button[type=submit]")
  await page.waitForSelector("#board .draughts-board .piece[data-square='a3'][data-piece='W']", {timeout: WAIT})
  await clickSquare(page, "draughts", "a3")
  await page.waitForSelector("#board .draughts-board .target[data-square='c1']", {timeout: WAIT})
  await clickSquare(page, "draughts", "c1")
  await page.waitForSelector(".move-choice:not([hidden]) button", {timeout: WAIT})
  const choices = await page.$$eval(".move-choice button", (l) => l.map((b) => b.textContent))
  check("desktop: two captures with the same start and end are offered as a choice", choices.length === 2, choices.join(" | "))
  await page.click(".move-choice button:has-text('a3:c5:e3:c1')")
  await page.waitForFunction(() => document.querySelector("#moves .move.current")?.textContent.trim() === "a3:c5:e3:c1", null, {timeout: WAIT})
  const left = await page.$$eval("#board .draughts-board .piece", (l) => l.map((p) => p.dataset.piece + p.dataset.square).sort().join(" "))
  check("desktop: the chosen capture takes b4, d2 and d4, not g7", left === "Wc1 bg7", left)

  // A bad FEN: the server's invalid_fen message, in plain words.
  await page.selectOption("#game", "chess")
  await page.waitForSelector("#board .cm-chessboard", {timeout: WAIT})
  await page.fill("#fen", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN w KQkq - 0 1")
  await page.click("#fen-form button[type=submit]")
  await page.waitForSelector("#error:not([hidden])", {timeout: WAIT})
  const error = await page.textContent("#error-text")
  check("desktop: a bad FEN shows the server's error in plain words", /^That position is not valid: \S/.test(error), error)
  await screenshot(page, "bad-fen-desktop.png")

  await review(page)
  await chess960Steps(page)
  check("desktop: no script errors on the page", page.errors.length === 0, page.errors.join(" | "))
  await page.context().close()
}

// Chess960: a start position by number, then a middlegame FEN whose rights
// only Chess960 has, castled by moving the king onto its rook's side.
async function chess960Steps(page) {
  await page.fill("#c960-number", "0")
  await page.click("#c960-form button[type=submit]")
  await page.waitForSelector("#board .cm-chessboard .pieces g[data-square='a1'][data-piece='wb']", {timeout: WAIT})
  const fen = await page.inputValue("#fen")
  check("chess960: position 0 is set by its number", fen === "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w KQkq - 0 1", fen)
  await waitForDeepeningAnalysis(page, {pattern: /^1\.\s*[a-hNBRQKO]/})
  check("chess960: its analysis runs", (await lineTexts(page)).length > 0)
  await page.fill("#fen", "rk5r/pppppppp/8/8/8/8/PPPPPPPP/RK5R w AHah - 0 1")
  await page.click("#fen-form button[type=submit]")
  await page.waitForSelector("#board .cm-chessboard .pieces g[data-square='b1'][data-piece='wk']", {timeout: WAIT})
  await clickSquare(page, "chess", "b1")
  await clickSquare(page, "chess", "g1")
  await page.waitForFunction(() => document.querySelector("#moves .move.current")?.textContent.trim() === "O-O", null, {timeout: WAIT})
  // The board redraws from the server's FEN after its move animation.
  const king = await page.waitForSelector("#board .cm-chessboard .pieces g[data-square='g1'][data-piece='wk']", {timeout: WAIT})
  const rook = await page.waitForSelector("#board .cm-chessboard .pieces g[data-square='f1'][data-piece='wr']", {timeout: WAIT})
  check("chess960: O-O by the king's own move puts king on g1 and rook on f1", king !== null && rook !== null,
    await page.inputValue("#fen"))
}

// A scholar's mate: 3...Nf6?? walks into mate, the review must say so.
const SCHOLARS_MATE = `[Event "Review test"]
[White "A"]
[Black "B"]
[Result "1-0"]

1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0
`

async function review(page) {
  await page.click("#error-close")
  await page.fill("#record", SCHOLARS_MATE)
  await page.selectOption("#review-nodes", "20000")
  await page.click("#review-run")
  await page.waitForFunction(() => document.querySelectorAll("#moves .move[data-ply]").length === 7 &&
    !document.querySelector("#review-summary").hidden, null, {timeout: 4 * WAIT})
  const marks = await page.$$eval("#moves .move[data-ply]", (l) => l.map((e) => e.textContent.trim()))
  check("review: the game is loaded into the move list", marks.length === 7 && marks[6].startsWith("Qxf7#"), marks.join(" "))
  check("review: 3…Nf6 is marked as a blunder (??)", marks[5] === "Nf6??", marks[5])
  // 1. e4 is a sound first move and 4. Qxf7# the engine's own best: never judged.
  check("review: sound moves are not judged", [0, 6].every((i) => !/[?!]/.test(marks[i])), `${marks[0]} ${marks[6]}`)
  const dots = await page.$$eval("#chart circle.chart-dot.blunder", (l) => l.length)
  check("review: the evaluation chart marks the blunder", dots >= 1 && !(await page.$eval("#chart", (e) => e.hidden)))
  // The move list must not move while the live search restarts and its lines come and go.
  const movesTop = () => page.$eval("#moves", (e) => e.getBoundingClientRect().top)
  const topBefore = await movesTop()
  await page.click("#moves .move[data-ply='6']")
  const topRestarting = await movesTop()
  await page.waitForSelector("#judgment-note:not([hidden])", {timeout: WAIT})
  const note = await page.textContent("#judgment-note")
  check("review: the blunder is explained at its ply", /Nf6\?\? is a blunder/.test(note), note)
  // The position after 3…Nf6?? is analysed again live: mate in one for White.
  await page.waitForFunction(() => /^M1/.test(document.querySelector("#lines li .score")?.textContent || ""), null, {timeout: WAIT})
  check("review: live analysis finds the mate the blunder allowed", /Qxf7#/.test((await lineTexts(page))[0]), (await lineTexts(page))[0])
  const topAfter = await movesTop()
  check("review: the move list stays put while the analysis restarts", topBefore === topRestarting && topRestarting === topAfter,
    `${topBefore} ${topRestarting} ${topAfter}`)
  await page.waitForTimeout(400)  // the board's move animation
  await screenshot(page, "review-desktop.png")

  // A PDN: the page switches to draughts by itself and loads the reviewed game.
  await page.fill("#record", DRAUGHTS_GAME)
  await page.click("#review-run")
  await page.waitForFunction(() => document.querySelectorAll("#moves .move[data-ply]").length === 10 &&
    !document.querySelector("#review-summary").hidden, null, {timeout: 4 * WAIT})
  const moves = await page.$$eval("#moves .move[data-ply]", (l) => l.map((e) => e.textContent.trim().replace(/[?!]+$/, "")))
  check("review: a PDN is reviewed as draughts and loaded", (await page.inputValue("#game")) === "draughts" &&
    moves.join(" ") === "c3-d4 f6-g5 g3-h4 b6-a5 h4:f6 g7:e5:c3 d2:b4 a5:c3 b2:d4 c7-b6", moves.join(" "))
  check("review: the draughts chart is drawn", await page.$eval("#chart", (e) => !e.hidden && e.querySelector("path.chart-white") !== null))
}

// Ten plies the engine itself would play, with a double capture (g7:e5:c3).
const DRAUGHTS_GAME = `[GameType "25"]
[White "A"]
[Black "B"]

1. c3-d4 f6-g5 2. g3-h4 b6-a5 3. h4:f6 g7:e5:c3 4. d2:b4 a5:c3 5. b2:d4 c7-b6 *
`

async function phone(browser, url) {
  const page = await openPage(browser, url, {width: 390, height: 844}, true)
  await chessSteps(page, "phone")
  await page.waitForFunction(() => Number(document.querySelector("#depth").dataset.depth || 0) >= 10, null, {timeout: WAIT})
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
  check("phone: nothing sticks out sideways", overflow <= 0, `${overflow}px`)
  await screenshot(page, "chess-phone.png")
  await draughtsSteps(page, "phone")
  await page.waitForFunction(() => Number(document.querySelector("#depth").dataset.depth || 0) >= 8, null, {timeout: WAIT})
  await screenshot(page, "draughts-phone.png")
  check("phone: no script errors on the page", page.errors.length === 0, page.errors.join(" | "))
  await page.context().close()
}

// The API reference page (api.html, Redoc built from proto/openapi.yaml):
// reached from the board's header, rendered and interactive, and asking
// nothing of the network beyond the server itself.
async function apiReference(browser, url) {
  const context = await browser.newContext({viewport: {width: 1280, height: 800}, deviceScaleFactor: 1})
  const page = await context.newPage()
  const errors = []
  const elsewhere = []
  page.on("pageerror", (e) => errors.push(e.message))
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()))
  await context.route("**/*", (route) => {
    const target = route.request().url()
    if (target.startsWith(url) || target.startsWith("data:") || target.startsWith("blob:")) return route.continue()
    elsewhere.push(target)
    return route.abort()
  })
  await page.goto(url)
  await page.click("header a.api-link")
  await page.waitForURL(`${url}api.html`, {timeout: WAIT})
  // Redoc hydrates the pre-rendered page: the menu lists every operation.
  await page.waitForFunction(() => window.Redoc && document.querySelectorAll("#redoc .menu-content li").length >= 18,
    null, {timeout: WAIT})
  const title = await page.textContent("#redoc h1")
  check("api: the board links to the API reference, titled from openapi.yaml", /Kibitz analysis server/.test(title), title)
  const menu = await page.$$eval("#redoc .menu-content li", (l) => l.map((e) => e.textContent.trim()).join(" | "))
  check("api: every operation is listed", ["Analyse one position.", "Queue an analysis", "Cancel a job.",
    "Review a whole game", "This document."].every((t) => menu.includes(t)), menu.slice(0, 300))
  // Clicking an operation in the menu shows it, with its response schema.
  await page.click("#redoc .menu-content li:has-text('Analyse one position.')")
  await page.waitForFunction(() => /#operation\/analyze$/.test(location.hash), null, {timeout: WAIT})
  const operation = await page.$eval("[id='operation/analyze']", (e) => e.textContent)
  check("api: an operation shows its request and responses", /AnalyzeRequest|limits/.test(operation) && /200/.test(operation))
  await screenshot(page, "api-reference-desktop.png")
  check("api: nothing is loaded from elsewhere", elsewhere.length === 0, elsewhere.join(" "))
  check("api: no script errors on the page", errors.length === 0, errors.join(" | "))
  // The page shows the document the server serves.
  const served = await (await fetch(`${url}v1/openapi.yaml`)).text()
  check("api: GET /v1/openapi.yaml serves the contract", /^openapi: 3\.1\.0$/m.test(served) && /title: Kibitz analysis server/.test(served))
  await context.close()
}

// ---- main ----------------------------------------------------------------

async function main() {
  if (!existsSync(bin)) fail(`no kibitz binary at ${bin}`)
  if (!existsSync(path.join(webRoot, "index.html"))) fail(`no built page at ${webRoot} (scripts/build-web.sh <dir>)`)
  mkdirSync(artifacts, {recursive: true})
  rmSync(path.join(artifacts, "failure.png"), {force: true})  // from an earlier run
  const server = await startServer()
  console.log(`kibitz at ${server.url}, page from ${webRoot}`)
  let browser
  let page = null
  try {
    browser = await chromium.launch({executablePath: chromiumPath, headless: true, args: ["--no-sandbox"]})
    const index = await fetch(server.url)
    check("GET / serves the page as HTML", index.ok && /text\/html/.test(index.headers.get("content-type") || ""))
    await desktop(browser, server.url)
    await phone(browser, server.url)
    await apiReference(browser, server.url)
  } catch (e) {
    check("test ran to the end", false, e.stack || String(e))
    console.log(`--- kibitz output (last lines) ---\n${server.log().split("\n").slice(-40).join("\n")}`)
    if (browser) {
      for (const c of browser.contexts()) for (const p of c.pages()) page = p
      if (page) await page.screenshot({path: path.join(artifacts, "failure.png")}).catch(() => {})
    }
  } finally {
    if (browser) await browser.close()
    server.child.kill("SIGTERM")
  }
  console.log(`\n${passed} passed, ${failed} failed`)
  process.exitCode = failed === 0 && passed > 0 ? 0 : 1
}

main().catch((e) => {
  console.error(e.stack || String(e))
  console.log(`\n${passed} passed, ${failed + 1} failed`)
  process.exitCode = 1
})
