//! Fits for calibration: a non-negative linear fit with its quality
//! (residuals, R², per-point error, leave-one-out cross-validation) and
//! cost laws of one parameter chosen by cross-validation, as Extra-P
//! does (Calotoiu et al., "Using automated performance modeling to find
//! scalability bugs in complex codes", SC 2013: hypotheses of the
//! performance model normal form `c0 + c1 * n^i * log2(n)^j`, the best
//! one chosen by cross-validation).

use crate::nnls::{self, NnlsError};

/// A non-negative linear fit `y ≈ A x`, `x >= 0`, and how good it is.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearFit {
    pub coefficients: Vec<f64>,
    pub predicted: Vec<f64>,
    /// `measured - predicted`, per row.
    pub residuals: Vec<f64>,
    /// Sum of squared residuals.
    pub rss: f64,
    /// Coefficient of determination `1 - RSS/TSS`; `None` when every
    /// measurement is equal (TSS = 0).
    pub r_squared: Option<f64>,
    /// `100 * (predicted - measured) / measured`, per row (`None` where the
    /// measurement is 0).
    pub error_percent: Vec<Option<f64>>,
    /// Leave-one-out cross-validation; `None` when there are not more rows
    /// than unknowns (then every left-out fit is under-determined).
    pub loo: Option<LooError>,
}

/// Leave-one-out cross-validation: each row predicted by the fit of all
/// the other rows.
#[derive(Debug, Clone, PartialEq)]
pub struct LooError {
    /// `measured - predicted` of each left-out row.
    pub residuals: Vec<f64>,
    /// Root mean square of `residuals`.
    pub rmse: f64,
    /// Mean of `|residual| / |measured|`, in percent (rows with a zero
    /// measurement are left out of the mean).
    pub mean_abs_percent: f64,
    /// Mean symmetric absolute percentage error,
    /// `200 * |y - ŷ| / (|y| + |ŷ|)`, the criterion Extra-P ranks by.
    pub smape_percent: f64,
}

/// Fits `y ≈ A x` with `x >= 0` and measures the fit. Rows whose
/// left-out fit is singular (a row that alone determines an unknown) make
/// the cross-validation `None`.
pub fn fit_nonneg(rows: &[Vec<f64>], y: &[f64]) -> Result<LinearFit, NnlsError> {
    let coefficients = nnls::nnls(rows, y)?;
    let predicted: Vec<f64> = rows.iter().map(|r| dot(r, &coefficients)).collect();
    let residuals: Vec<f64> = y.iter().zip(&predicted).map(|(a, b)| a - b).collect();
    let rss = residuals.iter().map(|r| r * r).sum();
    let mean = y.iter().sum::<f64>() / y.len().max(1) as f64;
    let tss: f64 = y.iter().map(|v| (v - mean) * (v - mean)).sum();
    let r_squared = (tss > 0.0).then(|| 1.0 - rss / tss);
    let error_percent = y
        .iter()
        .zip(&predicted)
        .map(|(m, p)| (*m != 0.0).then(|| 100.0 * (p - m) / m))
        .collect();
    let loo = leave_one_out(rows, y);
    Ok(LinearFit {
        coefficients,
        predicted,
        residuals,
        rss,
        r_squared,
        error_percent,
        loo,
    })
}

/// Leave-one-out cross-validation of the non-negative fit.
pub fn leave_one_out(rows: &[Vec<f64>], y: &[f64]) -> Option<LooError> {
    let n = rows.first().map_or(0, Vec::len);
    if rows.len() <= n {
        return None;
    }
    let mut residuals = Vec::with_capacity(rows.len());
    for i in 0..rows.len() {
        let r: Vec<Vec<f64>> = rows
            .iter()
            .enumerate()
            .filter(|(k, _)| *k != i)
            .map(|(_, r)| r.clone())
            .collect();
        let b: Vec<f64> = y
            .iter()
            .enumerate()
            .filter(|(k, _)| *k != i)
            .map(|(_, v)| *v)
            .collect();
        let x = nnls::nnls(&r, &b).ok()?;
        residuals.push(y[i] - dot(&rows[i], &x));
    }
    let m = residuals.len() as f64;
    let rmse = (residuals.iter().map(|r| r * r).sum::<f64>() / m).sqrt();
    let rel: Vec<f64> = residuals
        .iter()
        .zip(y)
        .filter(|(_, y)| **y != 0.0)
        .map(|(r, y)| (r / y).abs() * 100.0)
        .collect();
    let mean_abs_percent = rel.iter().sum::<f64>() / rel.len().max(1) as f64;
    let smape_percent = residuals
        .iter()
        .zip(y)
        .map(|(r, y)| {
            let p = y - r;
            let d = y.abs() + p.abs();
            if d == 0.0 {
                0.0
            } else {
                200.0 * r.abs() / d
            }
        })
        .sum::<f64>()
        / m;
    Some(LooError {
        residuals,
        rmse,
        mean_abs_percent,
        smape_percent,
    })
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

// ------------------------------------------------------------------ laws

/// One term `n^exponent * log2(n)^log_exponent` of a cost law.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Term {
    pub coefficient: f64,
    pub exponent: f64,
    pub log_exponent: f64,
}

impl Term {
    /// The term's value at `n` without its coefficient.
    pub fn basis(exponent: f64, log_exponent: f64, n: f64) -> f64 {
        let p = if exponent == 0.0 {
            1.0
        } else {
            n.powf(exponent)
        };
        let l = if log_exponent == 0.0 {
            1.0
        } else {
            n.log2().powf(log_exponent)
        };
        p * l
    }
}

/// A cost law of one parameter: `constant + Σ coefficient * n^i * log2(n)^j`.
#[derive(Debug, Clone, PartialEq)]
pub struct Law {
    pub constant: f64,
    pub terms: Vec<Term>,
}

impl Law {
    pub fn eval(&self, n: f64) -> f64 {
        self.constant
            + self
                .terms
                .iter()
                .map(|t| t.coefficient * Term::basis(t.exponent, t.log_exponent, n))
                .sum::<f64>()
    }

    /// Whether the law can be evaluated at `n` (log terms need `n > 0`,
    /// fractional powers `n >= 0`).
    pub fn defined_at(&self, n: f64) -> bool {
        n.is_finite()
            && self.terms.iter().all(|t| {
                (t.log_exponent == 0.0 || n > 0.0)
                    && (t.exponent.fract() == 0.0 || n >= 0.0)
                    && (t.exponent >= 0.0 || n != 0.0)
            })
    }

    /// `50 + 3 * n * log2(n)` style text.
    pub fn formula(&self, parameter: &str) -> String {
        let mut s = format!("{}", self.constant);
        for t in &self.terms {
            s.push_str(&format!(" + {}", t.coefficient));
            if t.exponent != 0.0 {
                if t.exponent == 1.0 {
                    s.push_str(&format!(" * {parameter}"));
                } else {
                    s.push_str(&format!(" * {parameter}^{}", t.exponent));
                }
            }
            if t.log_exponent != 0.0 {
                if t.log_exponent == 1.0 {
                    s.push_str(&format!(" * log2({parameter})"));
                } else {
                    s.push_str(&format!(" * log2({parameter})^{}", t.log_exponent));
                }
            }
        }
        s
    }
}

/// The hypotheses tried, simplest first: (name, exponent, log exponent)
/// of the one term beside the constant; `constant` has none.
pub const HYPOTHESES: [(&str, Option<(f64, f64)>); 5] = [
    ("constant", None),
    ("log", Some((0.0, 1.0))),
    ("linear", Some((1.0, 0.0))),
    ("nlogn", Some((1.0, 1.0))),
    ("quadratic", Some((2.0, 0.0))),
];

/// A simpler hypothesis is kept unless a more complex one lowers the
/// cross-validation SMAPE by more than this fraction (parsimony, so noise
/// does not buy a term).
pub const PARSIMONY: f64 = 0.02;

/// Points per parameter below which the fit is flagged unreliable
/// (Extra-P's documentation asks for at least five).
pub const RELIABLE_POINTS: usize = 5;

/// One hypothesis fitted.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub name: &'static str,
    pub law: Law,
    pub fit: LinearFit,
}

/// The law chosen for a kernel, with every candidate tried.
#[derive(Debug, Clone, PartialEq)]
pub struct LawFit {
    pub chosen: usize,
    pub candidates: Vec<Candidate>,
    /// Problems a user should hear about (too few points, ...).
    pub warnings: Vec<String>,
}

impl LawFit {
    pub fn best(&self) -> &Candidate {
        &self.candidates[self.chosen]
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LawError {
    #[error(
        "a law needs measurements at {needed} or more distinct parameter values, found {found}"
    )]
    TooFewPoints { needed: usize, found: usize },
    #[error("parameter value {0} is not a finite number")]
    BadParameter(f64),
    #[error("no hypothesis could be fitted: {0}")]
    NoFit(NnlsError),
}

/// Fits `y(n)` by every hypothesis (non-negative coefficients: costs
/// grow with `n`) and keeps the one with the lowest leave-one-out SMAPE,
/// preferring the simpler one within [`PARSIMONY`]. Needs at least 3
/// distinct values of `n` (2 for the fit of a two-coefficient law, one
/// more to cross-validate it).
pub fn fit_law(points: &[(f64, f64)]) -> Result<LawFit, LawError> {
    let mut distinct: Vec<f64> = points.iter().map(|p| p.0).collect();
    if let Some(bad) = distinct.iter().find(|v| !v.is_finite()) {
        return Err(LawError::BadParameter(*bad));
    }
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    if distinct.len() < 3 {
        return Err(LawError::TooFewPoints {
            needed: 3,
            found: distinct.len(),
        });
    }
    let mut warnings = Vec::new();
    if distinct.len() < RELIABLE_POINTS {
        warnings.push(format!(
            "only {} distinct parameter values: a law fitted to fewer than {RELIABLE_POINTS} is unreliable",
            distinct.len()
        ));
    }
    let y: Vec<f64> = points.iter().map(|p| p.1).collect();
    let mut candidates = Vec::new();
    let mut last_err = None;
    for (name, term) in HYPOTHESES {
        let defined = points.iter().all(|(n, _)| match term {
            Some((_, l)) if l != 0.0 => *n > 0.0,
            _ => true,
        });
        if !defined {
            continue;
        }
        let rows: Vec<Vec<f64>> = points
            .iter()
            .map(|(n, _)| match term {
                None => vec![1.0],
                Some((e, l)) => vec![1.0, Term::basis(e, l, *n)],
            })
            .collect();
        match fit_nonneg(&rows, &y) {
            Ok(fit) => {
                let law = Law {
                    constant: fit.coefficients[0],
                    terms: term
                        .map(|(e, l)| Term {
                            coefficient: fit.coefficients[1],
                            exponent: e,
                            log_exponent: l,
                        })
                        .into_iter()
                        .collect(),
                };
                candidates.push(Candidate { name, law, fit });
            }
            Err(e) => last_err = Some(e),
        }
    }
    if candidates.is_empty() {
        return Err(LawError::NoFit(last_err.unwrap_or(NnlsError::NotFinite)));
    }
    let score = |c: &Candidate| {
        c.fit
            .loo
            .as_ref()
            .map_or(f64::INFINITY, |l| l.smape_percent)
    };
    let mut chosen = 0;
    for (i, c) in candidates.iter().enumerate().skip(1) {
        let best = score(&candidates[chosen]);
        if score(c) < best * (1.0 - PARSIMONY) - 1e-12 {
            chosen = i;
        }
    }
    Ok(LawFit {
        chosen,
        candidates,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loo_by_hand_on_a_tiny_case() {
        // y = c * x with x = 1, 2, 3 and y = 2, 4, 7. Leaving out row i,
        // c = Σ x y / Σ x² over the others:
        //  out 1: (8 + 21) / 13 = 29/13, predicts 29/13, residual 2 - 29/13 = -3/13
        //  out 2: (2 + 21) / 10 = 2.3, predicts 4.6, residual -0.6
        //  out 3: (2 + 8) / 5 = 2, predicts 6, residual 1
        let rows = vec![vec![1.0], vec![2.0], vec![3.0]];
        let y = [2.0, 4.0, 7.0];
        let f = fit_nonneg(&rows, &y).unwrap();
        // Full fit: c = (2 + 8 + 21) / 14 = 31/14.
        assert!((f.coefficients[0] - 31.0 / 14.0).abs() < 1e-12);
        let loo = f.loo.unwrap();
        let want = [-3.0 / 13.0, -0.6, 1.0];
        for (g, w) in loo.residuals.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{:?}", loo.residuals);
        }
        let rmse = ((9.0 / 169.0 + 0.36 + 1.0) / 3.0f64).sqrt();
        assert!((loo.rmse - rmse).abs() < 1e-12);
        let mape = (100.0 * (3.0 / 13.0) / 2.0 + 100.0 * 0.6 / 4.0 + 100.0 / 7.0) / 3.0;
        assert!((loo.mean_abs_percent - mape).abs() < 1e-9);
        // R² = 1 - RSS/TSS; mean 13/3.
        let c = 31.0 / 14.0;
        let rss: f64 = [(2.0, 1.0), (4.0, 2.0), (7.0, 3.0)]
            .iter()
            .map(|(y, x)| (y - c * x) * (y - c * x))
            .sum();
        let m = 13.0 / 3.0;
        let tss = (2.0 - m) * (2.0f64 - m) + (4.0 - m) * (4.0f64 - m) + (7.0 - m) * (7.0f64 - m);
        assert!((f.r_squared.unwrap() - (1.0 - rss / tss)).abs() < 1e-12);
        assert!((f.error_percent[2].unwrap() - 100.0 * (3.0 * c - 7.0) / 7.0).abs() < 1e-9);
    }

    #[test]
    fn no_cross_validation_without_spare_rows() {
        let f = fit_nonneg(&[vec![1.0, 0.0], vec![0.0, 1.0]], &[1.0, 2.0]).unwrap();
        assert!(f.loo.is_none());
    }

    fn noisy(n: f64, i: usize, f: impl Fn(f64) -> f64) -> f64 {
        // Deterministic ±1 % noise.
        let noise = [0.01, -0.008, 0.004, -0.01, 0.007, -0.003, 0.009, -0.006];
        f(n) * (1.0 + noise[i % noise.len()])
    }

    #[test]
    fn picks_nlogn_for_nlogn_data_with_noise() {
        let law = |n: f64| 200.0 + 3.0 * n * n.log2();
        let pts: Vec<(f64, f64)> = (4..=12)
            .enumerate()
            .map(|(i, k)| {
                let n = (1u64 << k) as f64;
                (n, noisy(n, i, law))
            })
            .collect();
        let f = fit_law(&pts).unwrap();
        assert_eq!(f.best().name, "nlogn", "{:#?}", f.candidates);
        let c = f.best().law.terms[0].coefficient;
        assert!((c - 3.0).abs() < 0.1, "{c}");
        assert!(f.warnings.is_empty());
    }

    #[test]
    fn picks_linear_quadratic_and_constant() {
        for (want, law) in [
            (
                "linear",
                Box::new(|n: f64| 100.0 + 7.0 * n) as Box<dyn Fn(f64) -> f64>,
            ),
            ("quadratic", Box::new(|n: f64| 10.0 + 0.5 * n * n)),
            ("constant", Box::new(|_n: f64| 1234.0)),
        ] {
            let pts: Vec<(f64, f64)> = [8.0, 16.0, 32.0, 64.0, 128.0, 256.0]
                .iter()
                .enumerate()
                .map(|(i, n)| (*n, noisy(*n, i, &law)))
                .collect();
            assert_eq!(fit_law(&pts).unwrap().best().name, want);
        }
    }

    #[test]
    fn too_few_points_are_refused_or_flagged() {
        assert_eq!(
            fit_law(&[(1.0, 2.0), (2.0, 3.0), (2.0, 3.1)]),
            Err(LawError::TooFewPoints {
                needed: 3,
                found: 2
            })
        );
        let f = fit_law(&[(1.0, 2.0), (2.0, 3.0), (4.0, 5.0)]).unwrap();
        assert_eq!(f.warnings.len(), 1);
    }

    #[test]
    fn law_formula_and_eval() {
        let l = Law {
            constant: 50.0,
            terms: vec![Term {
                coefficient: 3.0,
                exponent: 1.0,
                log_exponent: 1.0,
            }],
        };
        assert_eq!(l.eval(8.0), 50.0 + 3.0 * 8.0 * 3.0);
        assert_eq!(l.formula("n"), "50 + 3 * n * log2(n)");
        assert!(!l.defined_at(0.0));
    }
}
