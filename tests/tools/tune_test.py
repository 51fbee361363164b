#!/usr/bin/env python3
"""kibitz-tune end to end, for both games: datagen writes well-formed
FEN;RESULT;SCORE lines from real games, the same lines for the same seed
whatever the number of threads, and tune lowers the training loss
and writes a weights header with one {mg, eg} pair per term of the header
compiled in (so the written file can replace it).

The chess data is then scored again by tools/tune/label_stockfish.py,
with Kibitz itself as the engine (the suite does not install Stockfish):
every second line kept, FEN and result unchanged, the score from White's
side (so agreeing in sign with datagen's own where either is clear); and
by Stockfish's static evaluation (`--static`; Stockfish comes with the
suite's packages), the same way. `nn` then trains the learned correction
on those labels: its training loss falls, and the header it writes holds
every weight of core/chess/nn.h's NnWeights.

usage: tune_test.py <kibitz-tune> <source dir> <kibitz>
"""
import os
import re
import subprocess
import sys
import tempfile

TUNE, SOURCE, KIBITZ = sys.argv[1], sys.argv[2], sys.argv[3]
PAIR = re.compile(r"\{(-?\d+), (-?\d+)\}")


def run(*args):
    p = subprocess.run([TUNE, *args], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, f"{args}: exit {p.returncode}\n{p.stderr}"
    return p.stderr


def check_game(game, tmp):
    data = os.path.join(tmp, f"{game}.txt")
    run("datagen", "--game", game, "--games", "8", "--nodes", "400", "--threads", "2",
        "--seed", "5", "--out", data)
    lines = open(data).read().splitlines()
    assert len(lines) >= 50, f"{game}: only {len(lines)} positions"
    # Each game's opening comes from the seed and the game's number, not from
    # the thread that plays it (which games a thread takes depends on timing).
    alone = os.path.join(tmp, f"{game}-1.txt")
    run("datagen", "--game", game, "--games", "8", "--nodes", "400", "--threads", "1",
        "--seed", "5", "--out", alone)
    assert sorted(open(alone).read().splitlines()) == sorted(lines), f"{game}: threads differ"
    results = set()
    for line in lines:
        fen, result, score = line.split(";")
        assert result in ("0", "0.5", "1"), line
        int(score)
        # A chess FEN has six fields, a draughts FEN starts with the side to move.
        assert (len(fen.split()) == 6) if game == "chess" else re.match(r"^[WB]:W", fen), line
        results.add(result)

    header = os.path.join(tmp, f"{game}_weights.h")
    log = run("tune", "--game", game, data, "--epochs", "50", "--validation", "0",
              "--threads", "2", "--out", header)
    before = float(re.search(r"loss before: train ([0-9.]+)", log).group(1))
    last = float(re.findall(r"epoch 50: train ([0-9.]+)", log)[-1])
    assert last < before, f"{game}: training loss {before} -> {last}\n{log}"

    written = open(header).read()
    compiled = open(os.path.join(SOURCE, "core", game, "eval_weights.h")).read()
    assert f"KIBITZ_NAMESPACE({game})" in written and "kEvalWeights" in written, written
    assert len(PAIR.findall(written)) == len(PAIR.findall(compiled)), f"{game}: term count"
    print(f"{game}: {len(lines)} positions, results {sorted(results)}, loss {before} -> {last}")
    if game == "chess":
        check_labels(data, lines, tmp)


def check_labels(data, lines, tmp):
    check_labelled(data, lines, tmp, ["--engine", f"{KIBITZ} uci", "--nodes", "2000",
                                      "--stride", "2"], 2)
    static = check_labelled(data, lines, tmp, ["--engine", "/usr/games/stockfish", "--static"], 1)
    check_nn(static, tmp)


def check_nn(data, tmp):
    header = os.path.join(tmp, "nn_weights.h")
    log = run("nn", data, "--epochs", "5", "--batch", "64", "--validation", "0.2",
              "--out", header)
    train = [float(x) for x in re.findall(r"epoch \d+ train ([0-9.]+)", log)]
    assert len(train) == 5 and train[-1] < train[0], log
    nn_h = open(os.path.join(SOURCE, "core", "chess", "nn.h")).read()
    inputs = int(re.search(r"kNnInputs = (\d+)", nn_h).group(1))
    hidden = int(re.search(r"kNnHidden = (\d+)", nn_h).group(1))
    written = open(header).read()
    body = written[written.index("kNnWeights = {"):]
    numbers = re.findall(r"-?\d+", body)
    assert len(numbers) == inputs * hidden + hidden + 2 * hidden + 1, len(numbers)
    print(f"nn: training loss {train[0]} -> {train[-1]}, {len(numbers)} weights written")


def check_labelled(data, lines, tmp, args, stride):
    out = os.path.join(tmp, f"labelled-{len(args)}.txt")
    p = subprocess.run([sys.executable, os.path.join(SOURCE, "tools", "tune", "label_stockfish.py"),
                        *args, "--out", out, data], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    labelled = open(out).read().splitlines()
    kept = lines[::stride]
    assert len(labelled) == len(kept), f"{len(labelled)} lines for {len(kept)}"
    clear = agree = black = 0
    for old, new in zip(kept, labelled):
        fen, result, own = old.split(";")
        nfen, nresult, score = new.split(";")
        assert (nfen, nresult) == (fen, result), (old, new)
        own, score = int(own), int(score)
        black += fen.split()[1] == "b"
        if abs(own) >= 150 and abs(score) >= 150:
            clear += 1
            agree += (own > 0) == (score > 0)
    assert black > 0 and clear >= 5, f"{black} black to move, {clear} clear"
    assert agree >= 0.9 * clear, f"signs agree in {agree} of {clear}"
    print(f"labels ({' '.join(args)}): {len(labelled)} lines, signs agree in {agree} of {clear}")
    return out


with tempfile.TemporaryDirectory() as tmp:
    for game in ("chess", "draughts"):
        check_game(game, tmp)
print("ok")
