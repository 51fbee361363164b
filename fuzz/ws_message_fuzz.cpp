// WebSocket message decoding, end to end: the real server (Beast frame
// parser, UTF-8 check, message dispatch, Api) runs in this process on a
// loopback port with small search limits, and each input is played on a
// fresh connection after the handshake.
//   first byte bit 0 clear: the rest split at 0xFF bytes (never valid
//     UTF-8), each piece a masked text frame (bit 1: binary; bit 2: each
//     message in two fragments), then a close frame;
//   first byte bit 0 set: the rest as raw bytes on the wire (frame parser).
// Invariants: every message the server sends is a JSON object whose type is
// info, bestmove, progress, review or error (with a code and message), any
// close code it sends is a valid one, and it ends the connection within
// 5 s of the client's close. Crashes and sanitizer reports are findings.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "engine/service.h"
#include "server/api/api.h"
#include "server/api/config.h"
#include "server/http/server.h"

using namespace kibitz;
using namespace kibitz::server;

namespace {

struct World {
  Config config;
  std::unique_ptr<engine::Service> service;
  std::unique_ptr<Api> api;
  std::unique_ptr<Server> server;
  int port = 0;

  World() {
    auto loaded = load_config("");
    if (!loaded) std::abort();
    config = std::move(*loaded);
    config.port = 0;
    config.io_threads = 1;
    spdlog::set_level(spdlog::level::off);  // a log line per request would dominate the run
    config.web_root = "/nonexistent";
    // Searches short enough for thousands of runs a second; the message
    // limiter out of the way so that every message is decoded.
    config.max_depth = 3;
    config.max_nodes = 20000;
    config.max_movetime_ms = 50;
    config.default_movetime_ms = 20;
    config.max_perft_depth_chess = 2;
    config.max_perft_depth_draughts = 3;
    config.ws_messages_per_second = 1'000'000;
    config.ws_max_message_bytes = 16384;
    engine::ServiceOptions options;
    options.threads = 1;
    options.hash_mib[0] = options.hash_mib[1] = 1;
    service = engine::make_service(options);
    api = make_api(config, *service);
    server = std::make_unique<Server>(*api, nullptr, config);
    auto p = server->listen();
    if (!p) std::abort();
    port = *p;
    std::thread([s = server.get()] { s->run(); }).detach();
  }
};

// Never destroyed: the server thread runs until the process exits.
World& world() {
  static World* w = new World;
  return *w;
}

int connect_to(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) std::abort();
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // A few tries: a burst of short connections may briefly exhaust the backlog.
  for (int attempt = 0; connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0;
       ++attempt) {
    if (attempt == 50) std::abort();
    usleep(10000);
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  timeval tv{5, 0};  // a server that neither answers nor closes within 5 s hangs
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

// libFuzzer's timeout alarm (SIGALRM, -timeout) interrupts blocking calls:
// an EINTR is retried, never taken for the server's answer.
ssize_t recv_retry(int fd, void* buf, size_t n) {
  for (;;) {
    const ssize_t r = recv(fd, buf, n, 0);
    if (r >= 0 || errno != EINTR) return r;
  }
}

void send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the server may close first: that is allowed
    bytes.remove_prefix(size_t(n));
  }
}

std::string frame(int opcode, std::string_view payload, bool fin) {
  std::string f;
  f += char((fin ? 0x80 : 0) | opcode);
  if (payload.size() < 126) {
    f += char(0x80 | payload.size());
  } else if (payload.size() < 65536) {
    f += char(0x80 | 126);
    f += char(payload.size() >> 8);
    f += char(payload.size() & 0xff);
  } else {
    f += char(0x80 | 127);
    for (int i = 7; i >= 0; --i) f += char((uint64_t(payload.size()) >> (8 * i)) & 0xff);
  }
  const char mask[4] = {0x37, 0x5a, 0x11, 0x7c};
  f.append(mask, 4);
  for (size_t i = 0; i < payload.size(); ++i) f += char(payload[i] ^ mask[i % 4]);
  return f;
}

// Codes a close frame may carry (RFC 6455 7.4): never 1004-1006 or 1015,
// nothing below 1000 or in the unassigned 1016-2999. Above 4999 is
// undefined; Beast echoes such a code from the client, which is harmless.
bool valid_close_code(unsigned code) {
  if (code < 1000 || (code >= 1004 && code <= 1006) || code == 1015) return false;
  return !(code >= 1016 && code <= 2999);
}

// Checks the server's frames (unmasked, unfragmented: auto_fragment is off).
void check_server_bytes(const std::string& in) {
  size_t i = 0;
  while (i + 2 <= in.size()) {
    const int opcode = in[i] & 0x0f;
    uint64_t n = uint8_t(in[i + 1]) & 0x7f;
    size_t h = 2;
    if (n == 126) {
      if (i + 4 > in.size()) return;
      n = (uint64_t(uint8_t(in[i + 2])) << 8) | uint8_t(in[i + 3]);
      h = 4;
    } else if (n == 127) {
      if (i + 10 > in.size()) return;
      n = 0;
      for (int k = 0; k < 8; ++k) n = (n << 8) | uint8_t(in[i + 2 + size_t(k)]);
      h = 10;
    }
    if (uint8_t(in[i + 1]) & 0x80) std::abort();  // a server never masks
    if (i + h + n > in.size()) return;            // cut off by our close: fine
    const std::string_view payload(in.data() + i + h, size_t(n));
    if (opcode == 1) {
      auto j = nlohmann::json::parse(payload, nullptr, false);
      if (j.is_discarded() || !j.is_object() || !j.contains("type") || !j["type"].is_string())
        std::abort();
      const auto& type = j["type"].get_ref<const std::string&>();
      if (type == "error") {
        if (!j.contains("error") || !j["error"].contains("code") ||
            !j["error"]["code"].is_string() || !j["error"].contains("message") ||
            !j["error"]["message"].is_string())
          std::abort();
      } else if (type != "info" && type != "bestmove" && type != "progress" && type != "review") {
        std::abort();
      }
    } else if (opcode == 8) {
      if (payload.size() == 1) std::abort();
      if (payload.size() >= 2 &&
          !valid_close_code((uint8_t(payload[0]) << 8) | uint8_t(payload[1])))
        std::abort();
      return;
    } else if (opcode != 9 && opcode != 10) {
      std::abort();  // the server sends text, close, ping and pong only
    }
    i += h + size_t(n);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 16384) return 0;
  World& w = world();
  const int fd = connect_to(w.port);
  send_all(fd,
           "GET /v1/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
  // The handshake answer, byte by byte up to the blank line, so that no
  // frame is swallowed with it.
  std::string head;
  char c;
  while (head.size() < 4096 && head.find("\r\n\r\n") == std::string::npos) {
    if (const ssize_t got = recv_retry(fd, &c, 1); got != 1) {
      std::fprintf(stderr, "handshake: recv %zd errno %d after %zu bytes: %s\n", got, errno,
                   head.size(), head.c_str());
      std::abort();
    }
    head += c;
  }
  if (head.rfind("HTTP/1.1 101", 0) != 0) std::abort();

  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string out;
  if (data[0] & 1) {
    out.assign(rest);
  } else {
    const int opcode = (data[0] & 2) ? 2 : 1;
    size_t start = 0;
    while (start <= rest.size()) {
      size_t end = rest.find('\xff', start);
      if (end == std::string_view::npos) end = rest.size();
      const std::string_view msg = rest.substr(start, end - start);
      if (data[0] & 4) {
        out += frame(opcode, msg.substr(0, msg.size() / 2), false);
        out += frame(0, msg.substr(msg.size() / 2), true);
      } else {
        out += frame(opcode, msg, true);
      }
      start = end + 1;
    }
    out += frame(8, std::string_view("\x03\xe8", 2), true);
  }
  send_all(fd, out);
  shutdown(fd, SHUT_WR);
  std::string in;
  char buf[65536];
  for (;;) {
    const ssize_t n = recv_retry(fd, buf, sizeof buf);
    if (n > 0) {
      in.append(buf, size_t(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) std::abort();  // no close in 5 s
    break;  // closed (or reset): done
  }
  // Reset rather than FIN: no TIME_WAIT pile-up over millions of runs.
  const linger no_linger{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &no_linger, sizeof no_linger);
  close(fd);
  check_server_bytes(in);
  return 0;
}
