// Match statistics: Elo from a score, its 95% interval, likelihood of
// superiority, and the sequential probability ratio test (SPRT) on game
// pairs (pentanomial model). Pure functions, no dependencies, so that the
// test can check them against values worked out by hand.
//
// Elo here is always *logistic* Elo: score s <-> elo by
//   s = 1 / (1 + 10^(-elo/400)),  elo = -400 * log10(1/s - 1).

/** Expected score of a side that is `elo` logistic Elo stronger. */
export function scoreOfElo(elo) {
  return 1 / (1 + Math.pow(10, -elo / 400));
}

/** Logistic Elo of a score in (0, 1); null at 0 or 1 (no finite value). */
export function eloOfScore(s) {
  if (!(s > 0 && s < 1)) return null;
  return -400 * Math.log10(1 / s - 1);
}

/**
 * Error function, Abramowitz & Stegun 7.1.26 (absolute error < 1.5e-7),
 * which is plenty for a likelihood of superiority printed to 3 digits.
 */
export function erf(x) {
  const sign = x < 0 ? -1 : 1;
  const ax = Math.abs(x);
  const t = 1 / (1 + 0.3275911 * ax);
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return sign * (1 - poly * Math.exp(-ax * ax));
}

/**
 * Likelihood of superiority from wins and losses (draws say nothing about
 * which side is stronger): 1/2 (1 + erf((W - L) / sqrt(2 (W + L)))).
 * null when there is no decisive game.
 */
export function los(wins, losses) {
  if (wins + losses === 0) return null;
  return 0.5 * (1 + erf((wins - losses) / Math.sqrt(2 * (wins + losses))));
}

/**
 * Score, Elo and 95% interval from outcome counts. `values` are the score of
 * each outcome (per game: [0, 0.5, 1]; per pair: [0, 0.25, 0.5, 0.75, 1]) and
 * `counts` how often each occurred. The interval is score +- 1.96 standard
 * errors of the mean, turned into Elo; a bound that would pass 0 or 1 is null.
 */
export function eloInterval(values, counts) {
  const n = counts.reduce((a, b) => a + b, 0);
  if (n === 0) return { n: 0, score: null, elo: null, elo_95: [null, null], var: null };
  let s = 0;
  for (let i = 0; i < values.length; i++) s += values[i] * counts[i];
  s /= n;
  let v = 0;
  for (let i = 0; i < values.length; i++) v += counts[i] * (values[i] - s) ** 2;
  v /= n;
  const se = Math.sqrt(v / n);
  return { n, score: s, elo: eloOfScore(s), elo_95: [eloOfScore(s - 1.96 * se), eloOfScore(s + 1.96 * se)], var: v };
}

/** Per-game statistics from engine1's wins, draws and losses. */
export function gameStats(wins, draws, losses) {
  return eloInterval([0, 0.5, 1], [losses, draws, wins]);
}

/**
 * Per-pair statistics from a pentanomial count [LL, LD+DL, DD+WL+LW, WD+DW, WW]
 * (pair scores 0, 0.5, 1, 1.5, 2, here divided by 2 so that 0.5 is even).
 */
export function pairStats(penta) {
  return eloInterval([0, 0.25, 0.5, 0.75, 1], penta);
}

/** SPRT bounds on the log-likelihood ratio for error rates alpha and beta. */
export function sprtBounds(alpha, beta) {
  return { lower: Math.log(beta / (1 - alpha)), upper: Math.log((1 - beta) / alpha) };
}

/**
 * The maximum-likelihood distribution over outcome values a_i with mean
 * fixed to s, given observed frequencies p_i: q_i = p_i / (1 + x (a_i - s)),
 * where x solves sum_i p_i (a_i - s) / (1 + x (a_i - s)) = 0 (a Lagrange
 * multiplier; the left side falls strictly with x, so bisection finds it).
 * Needs p_i > 0 at the smallest and largest a_i and min a < s < max a.
 */
export function mleWithMean(values, probs, s) {
  const d = values.map((a) => a - s);
  const dmin = Math.min(...d), dmax = Math.max(...d);
  if (!(dmin < 0 && dmax > 0)) throw new Error(`mleWithMean: mean ${s} outside the values`);
  // 1 + x d_i > 0 for every i  <=>  -1/dmax < x < -1/dmin.
  let lo = -1 / dmax, hi = -1 / dmin;
  const f = (x) => {
    let sum = 0;
    for (let i = 0; i < d.length; i++) sum += (probs[i] * d[i]) / (1 + x * d[i]);
    return sum;
  };
  const span = hi - lo;
  lo += span * 1e-12;
  hi -= span * 1e-12;
  for (let it = 0; it < 200; it++) {
    const mid = (lo + hi) / 2;
    if (f(mid) > 0) lo = mid; else hi = mid;
    if (hi - lo < 1e-15 * Math.max(1, Math.abs(mid))) break;
  }
  const x = (lo + hi) / 2;
  return probs.map((p, i) => p / (1 + x * d[i]));
}

/** Zero counts replaced by a small prior (1e-3), so that the MLE exists early on. */
export function regularize(counts) {
  return counts.map((c) => (c === 0 ? 1e-3 : c));
}

/**
 * Generalised log-likelihood ratio of H1 (score s1) over H0 (score s0) for
 * outcome counts over `values`, each hypothesis taking the maximum-likelihood
 * distribution with its mean: LLR = sum_i n_i ln(q1_i / q0_i).
 */
export function llrExact(values, counts, s0, s1) {
  const c = regularize(counts);
  const n = c.reduce((a, b) => a + b, 0);
  const p = c.map((x) => x / n);
  const q0 = mleWithMean(values, p, s0);
  const q1 = mleWithMean(values, p, s1);
  let llr = 0;
  for (let i = 0; i < c.length; i++) llr += c[i] * (Math.log(q1[i]) - Math.log(q0[i]));
  return llr;
}

/**
 * The usual approximation of the same ratio, N/2 ln(r0 / r1) with
 * r = sum_i p_i (a_i - s)^2; the test checks that both agree closely for
 * small Elo bounds.
 */
export function llrApprox(values, counts, s0, s1) {
  const c = regularize(counts);
  const n = c.reduce((a, b) => a + b, 0);
  const r = (s) => c.reduce((acc, ci, i) => acc + (ci / n) * (values[i] - s) ** 2, 0);
  return (n / 2) * Math.log(r(s0) / r(s1));
}

export const PAIR_VALUES = [0, 0.25, 0.5, 0.75, 1];

/**
 * Pentanomial SPRT in logistic Elo: H0 elo = elo0 against H1 elo = elo1,
 * on the game-pair counts [LL, LD, DD+WL, WD, WW] (engine1's view). A pair's
 * expected half-score is the per-game expected score, so the hypotheses are
 * s = scoreOfElo(elo0) and s = scoreOfElo(elo1) on pair scores divided by 2.
 */
export function sprt(penta, elo0, elo1, alpha = 0.05, beta = 0.05) {
  const { lower, upper } = sprtBounds(alpha, beta);
  const pairs = penta.reduce((a, b) => a + b, 0);
  const llr = pairs === 0 ? 0 : llrExact(PAIR_VALUES, penta, scoreOfElo(elo0), scoreOfElo(elo1));
  const result = llr >= upper ? 'H1' : llr <= lower ? 'H0' : 'continue';
  return { elo0, elo1, alpha, beta, model: 'pentanomial, logistic Elo', pairs, llr, lower, upper, result };
}

/** Pair outcome index 0..4 from engine1's two game scores (0, 0.5 or 1 each). */
export function pairIndex(score1, score2) {
  return Math.round((score1 + score2) * 2);
}
