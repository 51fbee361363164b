// The page's side of the wire contract (proto/openapi.yaml, proto/ws.schema.json):
// REST calls that resolve to the JSON body or throw an ApiError carrying the
// server's {"error": {"code", "message"}}, and a WebSocket that reconnects.

export class ApiError extends Error {
  constructor(code, message, status = 0) {
    super(message)
    this.code = code
    this.status = status
  }
}

// What a person reads for each error code: the server's own message names
// the field or move, so it follows the plain-words prefix.
const PREFIX = {
  invalid_fen: "That position is not valid",
  illegal_move: "That move is not legal",
  invalid_json: "The server could not read the request",
  invalid_request: "The server refused the request",
  not_found: "Not found",
  method_not_allowed: "The server does not allow that",
  payload_too_large: "That text is too long for the server",
  queue_full: "The server is busy; try again in a few seconds",
  rate_limited: "Too many requests; wait a moment",
  shutting_down: "The server is shutting down",
  unauthorized: "The server wants a key",
  forbidden: "The server does not allow this page",
  network: "Cannot reach the Kibitz server",
}

export function plainWords(error) {
  if (!(error instanceof ApiError)) return String(error && error.message || error)
  const prefix = PREFIX[error.code]
  if (!prefix) return error.message || error.code
  if (!error.message || error.message === error.code) return prefix + "."
  return `${prefix}: ${error.message}`
}

async function request(method, path, body) {
  let response
  try {
    response = await fetch(path, {
      method,
      headers: body === undefined ? {} : {"Content-Type": "application/json"},
      body: body === undefined ? undefined : JSON.stringify(body),
    })
  } catch (e) {
    throw new ApiError("network", "", 0)
  }
  let json = null
  try {
    json = await response.json()
  } catch (e) {
    json = null
  }
  if (!response.ok || (json && json.error)) {
    const err = json && json.error
    if (err) throw new ApiError(err.code || "error", err.message || "", response.status)
    throw new ApiError("http_" + response.status, `HTTP ${response.status} ${response.statusText}`, response.status)
  }
  return json
}

export const api = {
  // variant: "chess960", or anything else for the rules the FEN's rights imply.
  moves: (game, fen, moves, variant) =>
    request("POST", "/v1/moves", {game, fen, moves, ...(variant === "chess960" ? {variant} : {})}),
  annotate: (body) => request("POST", "/v1/games/annotate", body),
  job: (id) => request("GET", `/v1/jobs/${encodeURIComponent(id)}`),
  cancelJob: (id) => request("DELETE", `/v1/jobs/${encodeURIComponent(id)}`),
  info: () => request("GET", "/v1/info"),
}

// One WebSocket for the page. Messages are routed by their "id" to the
// handler registered for it; the socket reconnects with a growing delay and
// tells its listener, so the page can resend the running analysis.
export class Socket {
  constructor(onStateChange) {
    this.handlers = new Map()
    this.onStateChange = onStateChange
    this.ws = null
    this.delay = 250
    this.queue = []
    this.connect()
  }

  get open() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN
  }

  connect() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:"
    const ws = new WebSocket(`${scheme}//${location.host}/v1/ws`)
    this.ws = ws
    ws.onopen = () => {
      this.delay = 250
      const pending = this.queue
      this.queue = []
      for (const m of pending) ws.send(m)
      this.onStateChange("open")
    }
    ws.onmessage = (event) => {
      let message
      try {
        message = JSON.parse(event.data)
      } catch (e) {
        return
      }
      const handler = this.handlers.get(message.id)
      if (handler) handler(message)
      else if (message.type === "error" && this.handlers.has("*")) this.handlers.get("*")(message)
    }
    ws.onclose = () => {
      if (this.ws !== ws) return
      this.onStateChange("closed")
      setTimeout(() => this.connect(), this.delay)
      this.delay = Math.min(this.delay * 2, 5000)
    }
  }

  on(id, handler) {
    this.handlers.set(id, handler)
  }

  // Sends now, or once connected. Only the newest message per id waits:
  // an analysis request that was replaced before the socket opened is moot.
  send(message) {
    const text = JSON.stringify(message)
    if (this.open) {
      this.ws.send(text)
      return
    }
    this.queue = this.queue.filter((m) => JSON.parse(m).id !== message.id)
    this.queue.push(text)
  }
}
