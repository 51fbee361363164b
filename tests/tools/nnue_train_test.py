#!/usr/bin/env python3
"""The chess network's tools end to end: `kibitz-tune datagen --chunk-dir`
writes chunk files and a second run resumes (adds nothing, changes
nothing); tools/tune/nnue_train.py lowers its loss on them and writes a
network file; `kibitz uci` loads it (EvalFile), names it, and evaluates
exactly as the trainer's integer model of the engine says, on every
position of the data, for both file versions (--export of the checkpoint
at --format 1 too), and a file that gives the hand-written evaluation a
share (--classical-share) loads under another hash and evaluates
otherwise; the integer network (version 2) is within 1.5 cp of
the float model on average and 6 cp at most (--compare); a file that is
not a network is refused and the evaluation in use kept.

Skipped (exit 77) where PyTorch is missing (Debian: python3-torch).

usage: nnue_train_test.py <kibitz-tune> <source dir> <kibitz>
"""
import os
import re
import subprocess
import sys
import tempfile

TUNE, SOURCE, KIBITZ = sys.argv[1], sys.argv[2], sys.argv[3]
TRAINER = os.path.join(SOURCE, "tools/tune/nnue_train.py")
FENS = ["rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r1bq1rk1/ppp2ppp/2n2n2/3pp3/1bPP4/2N1PN2/PP3PPP/R1BQKB1R b KQ - 0 7",
        "8/5k2/8/3K4/8/8/1P6/8 w - - 0 60"]

try:
    import torch  # noqa: F401
except ImportError:
    print("nnue_train_test: no PyTorch (apt-get install python3-torch): skipped")
    sys.exit(77)


def run(*args):
    p = subprocess.run(list(args), capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, f"{args}: exit {p.returncode}\n{p.stderr}"
    return p.stdout + p.stderr


def uci(commands):
    p = subprocess.run([KIBITZ, "uci"], input="\n".join(commands + ["quit"]) + "\n",
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


with tempfile.TemporaryDirectory() as tmp:
    chunks = os.path.join(tmp, "chunks")
    gen = [TUNE, "datagen", "--games", "6", "--chunk-games", "3", "--nodes", "300",
           "--seed", "9", "--chunk-dir", chunks]
    run(*gen)
    names = sorted(os.listdir(chunks))
    assert names == ["chess-s9-n300-000000.txt", "chess-s9-n300-000001.txt"], names
    before = {n: open(os.path.join(chunks, n)).read() for n in names}
    assert all(before.values())
    log = run(*gen)  # resumes: both chunks complete, nothing to do
    assert "0 new positions" in log, log
    assert {n: open(os.path.join(chunks, n)).read() for n in names} == before

    net = os.path.join(tmp, "test.nnue")
    checkpoint = os.path.join(tmp, "test.pt")
    log = run("/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable,
              TRAINER, chunks, "--epochs", "4", "--batch", "64", "--rate", "0.003",
              "--validation", "0", "--name", "test", "--checkpoint", checkpoint, "--out", net)
    losses = [float(x) for x in re.findall(r"train ([0-9.]+)", log)]
    assert len(losses) == 4 and losses[-1] < losses[0], log
    # Whole files held out: the second chunk is the validation set.
    log = run("/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable,
              TRAINER, chunks, "--epochs", "1", "--batch", "64", "--validation-files", "2",
              "--name", "test", "--out", os.path.join(tmp, "held.nnue"))
    second = sum(1 for _ in open(os.path.join(chunks, names[1])))
    assert f"{second} validation)" in log, log
    assert re.search(r"validation [0-9.]+ results [0-9.]+", log), log
    size = os.path.getsize(net)
    assert size == 136 + 768 * 256 * 2 + 256 * 2 + 8 * 512 * 2 + 8 * 4, size

    # The integers against the float model they came from.
    log = run(sys.executable, TRAINER, "--compare", checkpoint, net, chunks)
    m = re.search(r"(\d+) positions: .* mean \|d\| ([0-9.]+), s\.d\. [0-9.]+, max \|d\| ([0-9.]+)",
                  log)
    assert m and int(m.group(1)) > 100, log
    assert float(m.group(2)) <= 1.5 and float(m.group(3)) <= 6, log
    # The old integers (version 1) from the same checkpoint.
    net1 = os.path.join(tmp, "test-v1.nnue")
    run(sys.executable, TRAINER, "--export", checkpoint, "--format", "1", "--name", "test",
        "--out", net1)
    assert open(net1, "rb").read()[8] == 1 and open(net, "rb").read()[8] == 2
    # A share for the hand-written evaluation: in the header (offset 28), and
    # in the hash the engine shows; 17 sixteenths is refused.
    net_half = os.path.join(tmp, "test-half.nnue")
    run(sys.executable, TRAINER, "--export", checkpoint, "--classical-share", "8", "--name",
        "test", "--out", net_half)
    half = open(net_half, "rb").read()
    assert half[28] == 8 and half[136:] == open(net, "rb").read()[136:]
    p = subprocess.run([sys.executable, TRAINER, "--export", checkpoint, "--classical-share", "17",
                        "--out", os.path.join(tmp, "bad.nnue")], capture_output=True, text=True)
    assert p.returncode != 0 and "--classical-share" in p.stderr, p.stderr
    shown = {}
    for path in (net, net_half):
        out = uci(["uci", f"setoption name EvalFile value {path}"]
                  + [c for fen in FENS for c in (f"position fen {fen}", "eval")])
        m = re.search(r"^info string evaluating with nnue test ([0-9a-f]{8})$", out, re.M)
        assert m, out
        shown[path] = (m.group(1), re.findall(r"^info string eval (-?\d+) cp white", out, re.M))
    assert shown[net][0] != shown[net_half][0], shown
    assert shown[net][1] != shown[net_half][1] and len(shown[net_half][1]) == len(FENS), shown

    # kibitz's integer output on every position of the data is the trainer's
    # model of it, for both versions.
    lines = [line.split(";")[0] for n in names for line in open(os.path.join(chunks, n))
             if line.strip()]
    fens = FENS + lines
    sys.path.insert(0, os.path.dirname(TRAINER))
    import nnue_train  # noqa: E402
    for path in (net, net1):
        out = uci(["uci", f"setoption name EvalFile value {path}"]
                  + [c for fen in fens for c in (f"position fen {fen}", "eval")])
        got = [int(v) for v in re.findall(r"^info string eval (-?\d+) cp white", out, re.M)]
        arrays, layout = nnue_train.read_network(path)
        data = nnue_train.parse_lines([fen + ";0.5;0" for fen in fens])
        want = nnue_train.integer_outputs(arrays, layout, data)
        want = [int(w) if fen.split()[1] == "w" else -int(w) for w, fen in zip(want, fens)]
        assert len(got) == len(fens), out[-2000:]
        bad = [(f, g, w) for f, g, w in zip(fens, got, want) if g != w]
        assert not bad, f"{path}: {len(bad)} of {len(fens)} differ, e.g. {bad[:3]}"

    commands = ["uci", f"setoption name EvalFile value {net}"]
    for fen in FENS:
        commands += [f"position fen {fen}", "eval"]
    commands += ["setoption name EvalFile value " + TRAINER, "eval"]
    out = uci(commands)
    assert re.search(r"^info string evaluating with nnue test [0-9a-f]{8}$", out, re.M), out
    evals = [int(v) for v in re.findall(r"^info string eval (-?\d+) cp white", out, re.M)]
    assert len(evals) == len(FENS) + 1, out
    for fen, got in zip(FENS, evals):
        want = int(run(sys.executable, TRAINER, "--eval", net, fen))
        want = want if fen.split()[1] == "w" else -want
        assert got == want, f"{fen}: kibitz {got}, the trainer's integer model {want}"
    # The refused file leaves the network in use.
    assert re.search(r"EvalFile: .*not a Kibitz network file.*evaluating with nnue test", out), out
    assert evals[-1] == evals[len(FENS) - 1], out

print("nnue_train_test: ok")
