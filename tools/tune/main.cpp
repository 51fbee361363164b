// kibitz-tune: makes self-play data and fits the chess or the draughts
// evaluation's weights to it (README, "Tuning the evaluation").
#include <CLI/CLI.hpp>

#include "datagen.h"
#include "nn_trainer.h"
#include "tuner.h"

int main(int argc, char** argv) {
  using namespace kibitz::tune;
  CLI::App app{"Self-play data and Texel tuning for Kibitz's evaluations"};
  const auto games = CLI::IsMember({"chess", "draughts"});
  app.require_subcommand(1);

  DatagenOptions d;
  auto* gen = app.add_subcommand("datagen", "Play Kibitz against itself and write quiet positions");
  gen->add_option("--game", d.game, "chess or draughts")->check(games);
  auto* opening_score = gen->add_option("--max-opening-score", d.max_opening_score,
                                        "Skip a game whose random opening is worse than this "
                                        "(centipawns; draughts: hundredths of a man, default 100)");
  gen->add_option("--games", d.games, "Games to play")->check(CLI::PositiveNumber);
  gen->add_option("--nodes", d.nodes, "Nodes per move")->check(CLI::PositiveNumber);
  gen->add_option("--random-plies", d.random_plies, "Random opening plies")
      ->check(CLI::Range(0, 40));
  gen->add_option("--max-plies", d.max_plies, "Plies after which a game is a draw");
  gen->add_option("--threads", d.threads, "Games played at once")->check(CLI::Range(1, 256));
  gen->add_option("--hash", d.hash_mib, "Table size per thread (MiB)")->check(CLI::Range(1, 4096));
  gen->add_option("--seed", d.seed, "Random seed of the openings");
  gen->add_option("--out", d.out, "File to append to");
  gen->add_option("--chunk-dir", d.chunk_dir,
                  "Write chunk files of --chunk-games games here instead; resumes a stopped run");
  gen->add_option("--chunk-games", d.chunk_games, "Games per chunk file")
      ->check(CLI::PositiveNumber);

  TunerOptions t;
  auto* tune = app.add_subcommand("tune", "Fit the evaluation's weights to data (Texel's method)");
  tune->add_option("--game", t.game, "chess or draughts")->check(games);
  tune->add_option("data", t.data, "Data files (FEN;RESULT;SCORE lines)")->required();
  tune->add_option("--lambda", t.lambda, "Weight of the game result (1) against the score (0)")
      ->check(CLI::Range(0.0, 1.0));
  tune->add_option("--epochs", t.epochs, "Passes over the data")->check(CLI::PositiveNumber);
  tune->add_option("--rate", t.rate, "Adam step size (centipawns)");
  tune->add_option("--l2", t.l2,
                   "Penalty on the squared change of each weight (keeps rare terms sane)");
  tune->add_option("--validation", t.validation, "Share held out")->check(CLI::Range(0.0, 0.5));
  tune->add_option("--threads", t.threads, "Threads")->check(CLI::Range(1, 256));
  tune->add_option("--max-positions", t.max_positions, "Use at most this many positions");
  tune->add_option("--out", t.out, "Header to write the weights to");

  NnOptions n;
  auto* nn =
      app.add_subcommand("nn", "Train the chess evaluation's learned correction (core/chess/nn.h)");
  nn->add_option("data", n.data, "Data files (FEN;RESULT;SCORE lines)")->required();
  nn->add_option("--lambda", n.lambda, "Weight of the game result (1) against the score (0)")
      ->check(CLI::Range(0.0, 1.0));
  nn->add_option("--epochs", n.epochs, "Passes over the data")->check(CLI::PositiveNumber);
  nn->add_option("--batch", n.batch, "Positions per step")->check(CLI::PositiveNumber);
  nn->add_option("--rate", n.rate, "Adam step size")->check(CLI::PositiveNumber);
  nn->add_option("--rate-drop", n.rate_drop, "Factor of the step size after each epoch")
      ->check(CLI::Range(0.01, 1.0));
  nn->add_option("--decay", n.decay, "Weight decay, times the step size")
      ->check(CLI::NonNegativeNumber);
  nn->add_option("--validation", n.validation, "Share held out")->check(CLI::Range(0.0, 0.5));
  nn->add_option("--threads", n.threads, "Threads")->check(CLI::Range(1, 256));
  nn->add_option("--max-positions", n.max_positions, "Use at most this many positions");
  nn->add_option("--seed", n.seed, "Seed of the initial weights and the shuffles");
  nn->add_option("--out", n.out, "Header to write the weights to");

  CLI11_PARSE(app, argc, argv);
  if (*nn) return run_nn_trainer(n);
  if (*gen) {
    // A man is worth a third of what a pawn's lead is in chess terms: a
    // draughts game is decided by 4 men, and a random opening a man down is
    // already lost.
    if (d.game == "draughts") {
      d.adjudicate_win = 400;
      if (!opening_score->count()) d.max_opening_score = 100;
    }
    return run_datagen(d);
  }
  return run_tuner(t);
}
