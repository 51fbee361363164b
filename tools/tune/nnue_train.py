#!/usr/bin/env python3
"""Trains the chess network (core/chess/nnue_network.h) on positions of
`kibitz-tune datagen` (FEN;RESULT;SCORE lines, RESULT and SCORE from
White's side) and writes a network file that `eval_file` loads.

The float model is the integer one before rounding: per perspective, the
pieces' rows (768 inputs, mirrored so the own king is on files e-h, times
the king buckets) summed with the bias, SCReLU (clamp to [0, 1], squared),
both perspectives (side to move first) into one of 8 outputs chosen by the
piece count. Its output r is a score of 400 * r centipawns; the loss is the
squared difference of sigmoid(400 * r / 400) and the target
    lambda * result + (1 - lambda) * sigmoid(score / 400)
(both from the side to move; 400 is --sigmoid, 300 by default, and the
score is multiplied by --score-scale first). Quantised on writing, by the
file version (--format; core/chess/nnue_network.h):
  2 (the default): the rows and biases of the accumulator times 1024, the
    output weights times 1024, the output bias times 2^23; the engine's
    integer output is within about a centipawn of this float model.
  1: times 255, the output weights times 64 (clamped to [-128, 127] / 64
    while training, so the integers fit), the output bias times 255 * 64:
    coarse, 7-10 cp (s.d.) from the float model on real networks.
--compare CHECKPOINT NETWORK DATA... measures that: the float model of the
checkpoint's best epoch against the integer arithmetic of the network file
on the positions of DATA. --export CHECKPOINT --out FILE writes a
checkpoint's best epoch without loading any data (another --format, a
re-export). --classical-share S (0-16) writes into the file the part, in
sixteenths, the hand-written evaluation takes of the engine's evaluation
(the built-in network's is chosen by games); --eval and --compare give the
network's own output, without that part.

Held out: --validation of the positions at random, or with
--validation-files K every K-th file (whole games: positions of one game
are so alike that random positions of it in training and validation make
the held-out loss too kind). Each epoch prints the held-out loss against the
target and against the games' results alone; the second can be compared
between labels, --lambda and --score-scale (for one --sigmoid).

Deterministic for a seed (one thread's float arithmetic): the same data and
options make the same file. Data files are parsed once into .npz caches
next to them (FILE.npz), so a second run starts at once.

usage: nnue_train.py [options] DATA_FILES_OR_DIRS... --out FILE
"""
import argparse
import copy
import glob
import os
import struct
import sys
import time

import numpy as np
import torch

INPUTS, HIDDEN, OUT_BUCKETS = 768, 256, 8
SCALE = 400
SHARE_UNITS = 16  # the classical share's whole (core/chess/nnue_network.h)
QA1, QB1 = 255, 64  # version 1
QA2, SQUARE_SHIFT2, QB2, OUT_SHIFT2 = 1024, 7, 1024, 23  # version 2 (2^23 = 8192 * 1024)
QB = QB1  # the training clamp of the output weights (version 1's range; kept)
PIECES = "PNBRQKpnbrqk"  # code = colour * 6 + type - 1

# King buckets by the king's square as its side sees it, after mirroring to
# files e-h (a1 = 0): the named layouts.
BUCKET_LAYOUTS = {
    "1": [0] * 64,
    # own back rank, second rank, the rest
    "3": [0 if s < 8 else 1 if s < 16 else 2 for s in range(64)],
    # back rank split at g (castled or not), second rank, the rest
    "4": [(0 if s % 8 >= 6 else 1) if s < 8 else 2 if s < 16 else 3 for s in range(64)],
}


def parse_file(path):
    with open(path) as f:
        return parse_lines(f)


def parse_lines(lines):
    """Arrays of data lines: pieces (N, 32) codes or -1, squares (N, 32),
    stm (N,) 0 White 1 Black, score and result from White's side."""
    pieces, squares, stm, score, result = [], [], [], [], []
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fen, res, sc = line.split(";")
        board, side = fen.split(" ")[:2]
        pc = np.full(32, -1, np.int8)
        sq = np.zeros(32, np.int8)
        n = 0
        rank, file = 7, 0
        for ch in board:
            if ch == "/":
                rank, file = rank - 1, 0
            elif ch.isdigit():
                file += int(ch)
            else:
                pc[n], sq[n] = PIECES.index(ch), rank * 8 + file
                n, file = n + 1, file + 1
        pieces.append(pc)
        squares.append(sq)
        stm.append(0 if side == "w" else 1)
        score.append(int(sc))
        result.append(float(res))
    return dict(pieces=np.array(pieces, np.int8).reshape(-1, 32),
                squares=np.array(squares, np.int8).reshape(-1, 32),
                stm=np.array(stm, np.int8), score=np.array(score, np.int32),
                result=np.array(result, np.float32))


def load(paths, max_positions):
    """The positions of every file, and each position's file number."""
    files = []
    for p in paths:
        files += sorted(glob.glob(os.path.join(p, "*.txt"))) if os.path.isdir(p) else [p]
    parts = []
    total = 0
    for number, path in enumerate(files):
        cache = path + ".npz"
        if os.path.exists(cache) and os.path.getmtime(cache) >= os.path.getmtime(path):
            part = dict(np.load(cache))
        else:
            part = parse_file(path)
            np.savez(cache, **part)
        part["file"] = np.full(len(part["stm"]), number, np.int32)
        parts.append(part)
        total += len(part["stm"])
        if max_positions and total >= max_positions:
            break
    data = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    if max_positions:
        data = {k: v[:max_positions] for k, v in data.items()}
    return data, len(files)


def features(data, layout):
    """Input indices (N, 32) of each perspective (padding: the last row, a
    zero row never trained), in the order of the C++ code."""
    pieces = data["pieces"].astype(np.int64)
    squares = data["squares"].astype(np.int64)
    valid = pieces >= 0
    colour, ptype = pieces // 6, pieces % 6
    king = pieces % 6 == 5
    buckets = np.array(layout, np.int64)
    n_rows = (max(layout) + 1) * INPUTS
    out = []
    for view in (0, 1):
        flip = 0 if view == 0 else 56
        own_king = king & (colour == view) & valid
        ksq = (squares * own_king).sum(1) ^ flip  # one own king per position
        mirror = np.where(ksq % 8 < 4, 7, 0)
        kb = buckets[ksq ^ mirror]
        s = (squares ^ flip) ^ mirror[:, None]
        idx = kb[:, None] * INPUTS + (np.where(colour == view, 0, 6) + ptype) * 64 + s
        out.append(np.where(valid, idx, n_rows))
    return out[0], out[1], n_rows


class Net(torch.nn.Module):
    def __init__(self, n_rows):
        super().__init__()
        self.ft = torch.nn.EmbeddingBag(n_rows + 1, HIDDEN, mode="sum", padding_idx=n_rows)
        self.ft_bias = torch.nn.Parameter(torch.zeros(HIDDEN))
        self.out = torch.nn.Parameter(torch.zeros(OUT_BUCKETS, 2 * HIDDEN))
        self.out_bias = torch.nn.Parameter(torch.zeros(OUT_BUCKETS))
        with torch.no_grad():
            self.ft.weight.normal_(0, 0.05)
            self.ft.weight[n_rows].zero_()
            self.ft_bias.fill_(0.1)
            self.out.normal_(0, 1.0 / (2 * HIDDEN) ** 0.5)

    def forward(self, us, them, bucket):
        a = torch.clamp(self.ft(us) + self.ft_bias, 0, 1) ** 2
        b = torch.clamp(self.ft(them) + self.ft_bias, 0, 1) ** 2
        x = torch.cat([a, b], 1)
        return (x * self.out[bucket]).sum(1) + self.out_bias[bucket]

    def clip(self):
        with torch.no_grad():
            self.out.clamp_(-128 / QB, 127 / QB)
            self.ft.weight.clamp_(-127 / QA1 * 4, 127 / QA1 * 4)


def quantise(net, layout, version):
    """The integer arrays of a network file of `version` (1 or 2); raises
    ValueError where the engine's loader would refuse them."""
    q = lambda t, s: np.round(t.detach().numpy().astype(np.float64) * s)
    n_rows = (max(layout) + 1) * INPUTS
    qa, qb, qo = (QA1, QB1, QA1 * QB1) if version == 1 else (QA2, QB2, 1 << OUT_SHIFT2)
    ft = np.clip(q(net.ft.weight[:n_rows], qa), -32767, 32767).astype(np.int64)
    ft_bias = np.clip(q(net.ft_bias, qa), -32767, 32767).astype(np.int64)
    out = np.clip(q(net.out, qb), -128 if version == 1 else -32767,
                  127 if version == 1 else 32767).astype(np.int64)
    out_bias = q(net.out_bias, qo).astype(np.int64)
    # The loader's bounds (core/chess/nnue_network.h): no accumulator wraps
    # (32 pieces at most), and version 2's 32-bit output sum does not either.
    worst = np.abs(ft_bias) + 32 * np.abs(ft).max(0)
    if worst.max() > 32767:
        raise ValueError(f"accumulator unit {int(worst.argmax())} could reach {int(worst.max())}"
                         " (over 16 bits): weights too large for this format")
    if version == 2:
        square_max = (QA2 * QA2) >> SQUARE_SHIFT2
        side = max(np.where(out > 0, out, 0).sum(1).max(), np.where(out < 0, -out, 0).sum(1).max())
        if side > (2**31 - 1) // square_max:
            raise ValueError("output weights too large for version 2 (their sum could overflow)")
    if np.abs(out_bias).max() > 2**31 - 1:
        raise ValueError("output bias too large")
    return dict(ft=ft, ft_bias=ft_bias, out=out, out_bias=out_bias)


def write(net, layout, name, path, version=2, share=0):
    """The network file; `share` is the hand-written evaluation's part of the
    engine's evaluation in sixteenths (0: the network alone)."""
    if not 0 <= share <= SHARE_UNITS:
        raise ValueError(f"classical share {share} outside 0..{SHARE_UNITS}")
    a = quantise(net, layout, version)
    payload = (a["ft"].astype("<i2").tobytes() + a["ft_bias"].astype("<i2").tobytes()
               + a["out"].astype("<i2").tobytes() + a["out_bias"].astype("<i4").tobytes())
    # FNV-1a 64 of the payload, continued over the share when it is not 0.
    h = 0xCBF29CE484222325
    for byte in payload + (struct.pack("<I", share) if share else b""):
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    header = (b"KBZNNUE\0"
              + struct.pack("<6I", version, 1, HIDDEN, max(layout) + 1, OUT_BUCKETS, share)
              + bytes(layout) + name.encode()[:32].ljust(32, b"\0") + struct.pack("<Q", h))
    assert len(header) == 136
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(header + payload)
    os.replace(tmp, path)


def read_network(path):
    """The integer arrays of a network file (checks nothing the C++ checks),
    its version under "version"."""
    raw = open(path, "rb").read()
    version, _, _, buckets = struct.unpack_from("<4I", raw, 8)
    layout = list(raw[32:96])
    p = 136
    arrays = {}
    for name, dtype, count in (("ft", "<i2", buckets * INPUTS * HIDDEN), ("ft_bias", "<i2", HIDDEN),
                               ("out", "<i2", OUT_BUCKETS * 2 * HIDDEN),
                               ("out_bias", "<i4", OUT_BUCKETS)):
        arrays[name] = np.frombuffer(raw, dtype, count, p).astype(np.int64)
        p += count * np.dtype(dtype).itemsize
    arrays["ft"] = arrays["ft"].reshape(-1, HIDDEN)
    arrays["out"] = arrays["out"].reshape(OUT_BUCKETS, 2 * HIDDEN)
    arrays["version"] = version
    return arrays, layout


def position_inputs(data, layout):
    """Each position's rows, side to move's first and the other's, and its
    output bucket."""
    white, black, _ = features(data, layout)
    stm = data["stm"].astype(bool)[:, None]
    bucket = ((data["pieces"] >= 0).sum(1) - 2) * OUT_BUCKETS // 32
    return np.where(stm, black, white), np.where(stm, white, black), bucket


def integer_outputs(net, layout, data, block=2048):
    """What the engine's network (read_network's arrays) says of each
    position, in centipawns from the side to move, by the integer
    arithmetic of core/chess/nnue.cpp."""
    wrap = lambda x, bits: (x + 2**(bits - 1)) % 2**bits - 2**(bits - 1)
    us, them, bucket = position_inputs(data, layout)
    ft = np.vstack([net["ft"], np.zeros((1, HIDDEN), np.int64)])  # the padding row: zero
    v1 = net["version"] == 1
    out = []
    for i in range(0, len(bucket), block):
        b = bucket[i:i + block]
        w = net["out"][b]
        total = np.zeros(len(b), np.int64)
        for rows, ws in ((us[i:i + block], w[:, :HIDDEN]), (them[i:i + block], w[:, HIDDEN:])):
            acc = wrap(ft[rows].sum(1) + net["ft_bias"], 16)
            v = np.clip(acc, 0, QA1 if v1 else QA2)
            if v1:  # the unit times the weight in 16 bits, then times the unit
                total += (v * wrap(v * ws, 16)).sum(1)
            else:
                total += (((v * v) >> SQUARE_SHIFT2) * ws).sum(1)
        total = wrap(total, 32)  # the 32-bit wrapping sum
        if v1:  # C++ division truncates
            x = np.trunc(total / QA1).astype(np.int64) + net["out_bias"][b]
            out.append(np.trunc(x * SCALE / (QA1 * QB1)).astype(np.int64))
        else:  # rounded, halves up
            x = (total + net["out_bias"][b]) * SCALE
            out.append((x + (1 << (OUT_SHIFT2 - 1))) >> OUT_SHIFT2)
    return np.concatenate(out)


def integer_eval(path, fen):
    """What the engine's network says of fen, in centipawns from the side to
    move, by the integer arithmetic of core/chess/nnue.cpp."""
    net, layout = read_network(path)
    return int(integer_outputs(net, layout, parse_lines([fen + ";0.5;0"]))[0])


def float_outputs(net, layout, data, block=8192):
    """The float model's centipawns (400 * r) for each position, side to move."""
    us, them, bucket = position_inputs(data, layout)
    with torch.no_grad():
        return np.concatenate([
            net(torch.from_numpy(us[i:i + block]), torch.from_numpy(them[i:i + block]),
                torch.from_numpy(bucket[i:i + block])).double().numpy() * SCALE
            for i in range(0, len(bucket), block)])


def checkpoint_net(path):
    """The float network of a checkpoint's best epoch and its bucket layout."""
    state = torch.load(path)
    weights = state["best"][2] if state["best"][2] is not None else state["net"]
    n_rows = weights["ft.weight"].shape[0] - 1
    layout = BUCKET_LAYOUTS[str(n_rows // INPUTS)]
    net = Net(n_rows)
    net.load_state_dict(weights)
    return net, layout


def compare(checkpoint, network, paths):
    """The integer network file against the checkpoint's float model on the
    positions of paths: centipawns of difference (integer - float)."""
    net, layout = checkpoint_net(checkpoint)
    arrays, file_layout = read_network(network)
    assert file_layout == layout, "the network file's king buckets are not the checkpoint's"
    data, _ = load(paths, 0)
    d = integer_outputs(arrays, layout, data) - float_outputs(net, layout, data)
    return dict(positions=len(d), mean=float(d.mean()), mean_abs=float(np.abs(d).mean()),
                sd=float(d.std()), max_abs=float(np.abs(d).max()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data", nargs="*", help="data files or folders of chunk files")
    ap.add_argument("--out")
    ap.add_argument("--format", type=int, default=2, choices=(1, 2),
                    help="the network file's version (its integers' scales)")
    ap.add_argument("--classical-share", type=int, default=0, metavar="S",
                    choices=range(0, SHARE_UNITS + 1),
                    help="the hand-written evaluation's part of the engine's evaluation, in "
                         "sixteenths (0, the default: the network alone; chosen by games)")
    ap.add_argument("--export", metavar="CHECKPOINT",
                    help="write the best epoch of CHECKPOINT to --out, and nothing else")
    ap.add_argument("--compare", nargs=2, metavar=("CHECKPOINT", "NETWORK"),
                    help="the integer NETWORK against the float CHECKPOINT on the data")
    ap.add_argument("--name", default="kibitz")
    ap.add_argument("--buckets", default="1", choices=sorted(BUCKET_LAYOUTS))
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--batch", type=int, default=16384)
    ap.add_argument("--rate", type=float, default=1e-3)
    ap.add_argument("--rate-drop", type=float, default=0.85, help="step size factor per epoch")
    ap.add_argument("--lambda", dest="lam", type=float, default=0.3,
                    help="weight of the game result against the score")
    ap.add_argument("--score-scale", type=float, default=1.0,
                    help="factor of the data's scores (another engine's into Kibitz's centipawns)")
    ap.add_argument("--sigmoid", type=float, default=300.0,
                    help="centipawns of the win-probability curve: sigmoid(cp / this)")
    ap.add_argument("--validation", type=float, default=0.02,
                    help="share of the positions held out, drawn at random")
    ap.add_argument("--validation-files", type=int, default=0, metavar="K",
                    help="hold out every K-th file instead (whole games: positions of one "
                    "game are too alike to test each other)")
    ap.add_argument("--max-positions", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--checkpoint", help="resume from / save to this file after each epoch")
    if sys.argv[1:2] == ["--eval"]:  # --eval NETWORK FEN: the engine's integer output
        print(integer_eval(sys.argv[2], sys.argv[3]))
        return
    o = ap.parse_args()
    if o.compare:
        r = compare(o.compare[0], o.compare[1], o.data)
        print(f"{r['positions']} positions: integer - float {r['mean']:+.2f} cp on average, "
              f"mean |d| {r['mean_abs']:.2f}, s.d. {r['sd']:.2f}, max |d| {r['max_abs']:.1f}")
        return
    if not o.out:
        ap.error("--out is needed")
    if o.export:
        net, layout = checkpoint_net(o.export)
        write(net, layout, o.name, o.out, o.format, o.classical_share)
        print(f"nnue_train: wrote {o.out} (version {o.format})", file=sys.stderr)
        return
    if not o.data:
        ap.error("no data")
    torch.manual_seed(o.seed)
    torch.set_num_threads(o.threads)
    start = time.time()
    data, n_files = load(o.data, o.max_positions)
    layout = BUCKET_LAYOUTS[o.buckets]
    white, black, n_rows = features(data, layout)
    stm = data["stm"].astype(bool)
    us = torch.from_numpy(np.where(stm[:, None], black, white))
    them = torch.from_numpy(np.where(stm[:, None], white, black))
    count = (data["pieces"] >= 0).sum(1)
    bucket = torch.from_numpy((count - 2) * OUT_BUCKETS // 32)
    sign = np.where(stm, -1, 1)
    score = torch.from_numpy((data["score"] * sign).astype(np.float32))
    result = data["result"]
    result = torch.from_numpy(np.where(stm, 1 - result, result).astype(np.float32))
    target = o.lam * result + (1 - o.lam) * torch.sigmoid(score * o.score_scale / o.sigmoid)
    n = len(target)
    order = torch.randperm(n, generator=torch.Generator().manual_seed(o.seed))
    if o.validation_files > 0:
        held = torch.from_numpy(data["file"] % o.validation_files == o.validation_files - 1)
        val, train = order[held[order]], order[~held[order]]
        n_val = len(val)
    else:
        n_val = int(n * o.validation)
        val, train = order[:n_val], order[n_val:]
    print(f"nnue_train: {n} positions from {n_files} files ({len(train)} train, {n_val} "
          f"validation) in {time.time() - start:.0f} s", file=sys.stderr, flush=True)

    net = Net(n_rows)
    opt = torch.optim.Adam(net.parameters(), lr=o.rate)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, o.rate_drop)
    first = 0
    best = (float("inf"), 0, None)
    if o.checkpoint and os.path.exists(o.checkpoint):
        state = torch.load(o.checkpoint)
        net.load_state_dict(state["net"])
        opt.load_state_dict(state["opt"])
        sched.load_state_dict(state["sched"])
        first = state["epoch"]
        best = state["best"]
        print(f"nnue_train: resumed after epoch {first}", file=sys.stderr)

    def loss_of(idx, against=target):
        pred = torch.sigmoid(net(us[idx], them[idx], bucket[idx]) * (SCALE / o.sigmoid))
        return ((pred - against[idx]) ** 2).mean()

    def validation_loss(against=target):
        if not n_val:
            return float("nan")
        with torch.no_grad():
            return float(sum(loss_of(val[i:i + 65536], against) * len(val[i:i + 65536])
                             for i in range(0, n_val, 65536)) / n_val)

    for epoch in range(first, o.epochs):
        t0 = time.time()
        g = torch.Generator().manual_seed(o.seed * 1000 + epoch)
        perm = train[torch.randperm(len(train), generator=g)]
        total = 0.0
        for i in range(0, len(perm), o.batch):
            idx = perm[i:i + o.batch]
            opt.zero_grad()
            loss = loss_of(idx)
            loss.backward()
            opt.step()
            net.clip()
            total += float(loss) * len(idx)
        sched.step()
        v = validation_loss()
        if not v > best[0]:  # also when there is no validation (nan): the last epoch
            best = (v, epoch + 1, copy.deepcopy(net.state_dict()))
        # Against the games' results alone: comparable between labels and lambdas.
        r = validation_loss(result)
        print(f"epoch {epoch + 1}: train {total / len(perm):.6f} validation "
              f"{v:.6f} results {r:.6f} ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
        if o.checkpoint:
            torch.save({"net": net.state_dict(), "opt": opt.state_dict(),
                        "sched": sched.state_dict(), "epoch": epoch + 1, "best": best},
                       o.checkpoint)
    # The epoch with the lowest validation loss is written.
    if best[2] is not None:
        net.load_state_dict(best[2])
        print(f"nnue_train: epoch {best[1]}'s weights (validation {best[0]:.6f})",
              file=sys.stderr)
    write(net, layout, o.name, o.out, o.format, o.classical_share)
    print(f"nnue_train: wrote {o.out} ({os.path.getsize(o.out)} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
