//! Non-negative least squares (Lawson and Hanson, *Solving Least Squares
//! Problems*, 1974, chapter 23, algorithm NNLS) and the Householder QR
//! least-squares solve it needs for each passive set.
//!
//! Written here rather than taken from a crate: the problems are tiny
//! (a few dozen rows, at most a few dozen unknowns), the algorithm is
//! forty lines, and no linear-algebra crate is otherwise needed.
//!
//! Columns are scaled to unit norm before solving (a positive diagonal
//! scaling keeps the constraint `x >= 0`), so that cost tables whose
//! elements are counted in very different magnitudes, or laws with `n`
//! and `n^2` terms, stay well conditioned.

/// Why a least-squares problem has no unique solution.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NnlsError {
    #[error("{rows} equation(s) for {cols} unknown(s): the fit is under-determined")]
    UnderDetermined { rows: usize, cols: usize },
    #[error("unknown {column} cannot be separated from the others (its column is zero or a linear combination of other columns): the fit is singular")]
    Singular { column: usize },
    #[error("the data hold a value that is not a finite number")]
    NotFinite,
    #[error("row {row} has {found} entries, expected {expected}")]
    Ragged {
        row: usize,
        found: usize,
        expected: usize,
    },
}

/// Relative tolerance below which a pivot counts as zero (rank test).
const RANK_TOL: f64 = 1e-10;

fn check(rows: &[Vec<f64>], b: &[f64]) -> Result<usize, NnlsError> {
    let n = rows.first().map_or(0, Vec::len);
    for (i, r) in rows.iter().enumerate() {
        if r.len() != n {
            return Err(NnlsError::Ragged {
                row: i,
                found: r.len(),
                expected: n,
            });
        }
        if r.iter().any(|v| !v.is_finite()) {
            return Err(NnlsError::NotFinite);
        }
    }
    if b.len() != rows.len() || b.iter().any(|v| !v.is_finite()) {
        return Err(NnlsError::NotFinite);
    }
    Ok(n)
}

/// Columns of `rows` (row-major) as vectors, each scaled to unit norm;
/// returns the columns and the scale factors (`x = y * scale`). A zero
/// column keeps scale 1.
fn scaled_columns(rows: &[Vec<f64>], n: usize) -> (Vec<Vec<f64>>, Vec<f64>) {
    let mut cols = vec![Vec::with_capacity(rows.len()); n];
    for r in rows {
        for (j, v) in r.iter().enumerate() {
            cols[j].push(*v);
        }
    }
    let mut scale = vec![1.0; n];
    for (j, c) in cols.iter_mut().enumerate() {
        let norm = c.iter().map(|v| v * v).sum::<f64>().sqrt();
        if norm > 0.0 {
            scale[j] = 1.0 / norm;
            c.iter_mut().for_each(|v| *v /= norm);
        }
    }
    (cols, scale)
}

/// Least squares `min |A x - b|` over the given columns (each of length
/// m) by Householder QR. `Err(j)` names the first column (index into
/// `cols`) that is dependent on the previous ones.
fn qr_solve(cols: &[&[f64]], b: &[f64]) -> Result<Vec<f64>, usize> {
    let m = b.len();
    let k = cols.len();
    if k > m {
        return Err(m);
    }
    let mut r: Vec<Vec<f64>> = cols.iter().map(|c| c.to_vec()).collect();
    let mut qtb = b.to_vec();
    let scale = r
        .iter()
        .map(|c| c.iter().map(|v| v * v).sum::<f64>().sqrt())
        .fold(0.0f64, f64::max)
        .max(f64::MIN_POSITIVE);
    for j in 0..k {
        let norm = r[j][j..].iter().map(|v| v * v).sum::<f64>().sqrt();
        if norm <= RANK_TOL * scale {
            return Err(j);
        }
        let alpha = if r[j][j] > 0.0 { -norm } else { norm };
        let mut v: Vec<f64> = r[j][j..].to_vec();
        v[0] -= alpha;
        let vv: f64 = v.iter().map(|x| x * x).sum();
        if vv > 0.0 {
            for col in r.iter_mut().skip(j) {
                let s: f64 = v.iter().zip(&col[j..]).map(|(a, c)| a * c).sum();
                let f = 2.0 * s / vv;
                for (c, a) in col[j..].iter_mut().zip(&v) {
                    *c -= f * a;
                }
            }
            let s: f64 = v.iter().zip(&qtb[j..]).map(|(a, c)| a * c).sum();
            let f = 2.0 * s / vv;
            for (c, a) in qtb[j..].iter_mut().zip(&v) {
                *c -= f * a;
            }
        }
    }
    let mut x = vec![0.0; k];
    for j in (0..k).rev() {
        let mut s = qtb[j];
        for (l, xl) in x.iter().enumerate().skip(j + 1) {
            s -= r[l][j] * xl;
        }
        x[j] = s / r[j][j];
    }
    Ok(x)
}

/// The rank test used by the fits: `Ok(())` when the columns of `rows`
/// are linearly independent and there are at least as many rows as
/// columns.
pub fn check_full_rank(rows: &[Vec<f64>]) -> Result<(), NnlsError> {
    let n = check(rows, &vec![0.0; rows.len()])?;
    if rows.len() < n {
        return Err(NnlsError::UnderDetermined {
            rows: rows.len(),
            cols: n,
        });
    }
    let (cols, _) = scaled_columns(rows, n);
    let refs: Vec<&[f64]> = cols.iter().map(Vec::as_slice).collect();
    qr_solve(&refs, &vec![0.0; rows.len()])
        .map(|_| ())
        .map_err(|column| NnlsError::Singular { column })
}

/// Unconstrained least squares `min |A x - b|` (rows of `A` given
/// row-major). Errors when the columns are dependent or too few rows.
pub fn lstsq(rows: &[Vec<f64>], b: &[f64]) -> Result<Vec<f64>, NnlsError> {
    let n = check(rows, b)?;
    if rows.len() < n {
        return Err(NnlsError::UnderDetermined {
            rows: rows.len(),
            cols: n,
        });
    }
    let (cols, scale) = scaled_columns(rows, n);
    let refs: Vec<&[f64]> = cols.iter().map(Vec::as_slice).collect();
    let y = qr_solve(&refs, b).map_err(|column| NnlsError::Singular { column })?;
    Ok(y.iter().zip(&scale).map(|(y, s)| y * s).collect())
}

/// Non-negative least squares: `min |A x - b|` subject to `x >= 0`
/// (Lawson–Hanson). The columns must be linearly independent and there
/// must be at least as many rows as columns, so that the solution is
/// unique; otherwise an error says which.
pub fn nnls(rows: &[Vec<f64>], b: &[f64]) -> Result<Vec<f64>, NnlsError> {
    let n = check(rows, b)?;
    if rows.len() < n {
        return Err(NnlsError::UnderDetermined {
            rows: rows.len(),
            cols: n,
        });
    }
    check_full_rank(rows)?;
    let (cols, scale) = scaled_columns(rows, n);
    let m = b.len();
    let residual = |x: &[f64]| -> Vec<f64> {
        let mut r = b.to_vec();
        for (j, c) in cols.iter().enumerate() {
            if x[j] != 0.0 {
                for i in 0..m {
                    r[i] -= c[i] * x[j];
                }
            }
        }
        r
    };
    let gradient = |r: &[f64]| -> Vec<f64> {
        cols.iter()
            .map(|c| c.iter().zip(r).map(|(a, b)| a * b).sum())
            .collect()
    };
    let bnorm = b.iter().map(|v| v * v).sum::<f64>().sqrt();
    let tol = 1e-12 * bnorm.max(f64::MIN_POSITIVE) * (n.max(1) as f64);
    let mut x = vec![0.0; n];
    let mut passive = vec![false; n];
    let mut w = gradient(&residual(&x));
    let max_outer = 3 * n + 10;
    for _ in 0..max_outer {
        // Entering variable: the largest positive gradient among the zeros.
        let Some((t, _)) = w
            .iter()
            .enumerate()
            .filter(|(j, wj)| !passive[*j] && **wj > tol)
            .max_by(|a, b| a.1.total_cmp(b.1))
        else {
            break;
        };
        passive[t] = true;
        loop {
            let idx: Vec<usize> = (0..n).filter(|&j| passive[j]).collect();
            let refs: Vec<&[f64]> = idx.iter().map(|&j| cols[j].as_slice()).collect();
            // The full matrix has full rank, so every subset does too.
            let s = qr_solve(&refs, b).map_err(|c| NnlsError::Singular { column: idx[c] })?;
            if s.iter().all(|v| *v > 0.0) {
                for (k, &j) in idx.iter().enumerate() {
                    x[j] = s[k];
                }
                break;
            }
            // Step from x towards s as far as feasibility allows; the
            // variable that limits the step leaves the passive set.
            let mut alpha = f64::INFINITY;
            let mut limiting = idx[0];
            for (k, &j) in idx.iter().enumerate() {
                if s[k] <= 0.0 {
                    let a = x[j] / (x[j] - s[k]);
                    if a < alpha {
                        alpha = a;
                        limiting = j;
                    }
                }
            }
            for (k, &j) in idx.iter().enumerate() {
                x[j] += alpha * (s[k] - x[j]);
                if x[j] <= 0.0 || j == limiting {
                    x[j] = 0.0;
                    passive[j] = false;
                }
            }
            if !passive.iter().any(|p| *p) {
                break;
            }
        }
        w = gradient(&residual(&x));
    }
    Ok(x.iter().zip(&scale).map(|(x, s)| x * s).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(state: &mut u64) -> f64 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*state >> 11) as f64) / ((1u64 << 53) as f64)
    }

    #[test]
    fn recovers_known_non_negative_coefficients() {
        // 12 kernels, 4 cost elements with prices 3, 0, 8, 1.5.
        let truth = [3.0, 0.0, 8.0, 1.5];
        let mut s = 7;
        let rows: Vec<Vec<f64>> = (0..12)
            .map(|_| (0..4).map(|_| (lcg(&mut s) * 100.0).round()).collect())
            .collect();
        let b: Vec<f64> = rows
            .iter()
            .map(|r| r.iter().zip(&truth).map(|(a, x)| a * x).sum())
            .collect();
        let x = nnls(&rows, &b).unwrap();
        for (got, want) in x.iter().zip(&truth) {
            assert!((got - want).abs() < 1e-8, "{x:?}");
        }
    }

    #[test]
    fn clamps_where_least_squares_would_go_negative() {
        // A = [[1,0],[1,1],[0,1]], b = [3, 1, -1]. Normal equations
        // [[2,1],[1,2]] x = [4, 0] give x = (8/3, -4/3); with x2 clamped
        // to 0, x1 = argmin (3-x)^2 + (1-x)^2 = 2.
        let rows = vec![vec![1.0, 0.0], vec![1.0, 1.0], vec![0.0, 1.0]];
        let b = [3.0, 1.0, -1.0];
        let ls = lstsq(&rows, &b).unwrap();
        assert!((ls[0] - 8.0 / 3.0).abs() < 1e-12 && (ls[1] + 4.0 / 3.0).abs() < 1e-12);
        let x = nnls(&rows, &b).unwrap();
        assert!((x[0] - 2.0).abs() < 1e-12 && x[1] == 0.0, "{x:?}");
    }

    #[test]
    fn singular_and_under_determined_are_errors() {
        let rows = vec![vec![1.0, 2.0], vec![2.0, 4.0], vec![3.0, 6.0]];
        assert!(matches!(
            nnls(&rows, &[1.0, 2.0, 3.0]),
            Err(NnlsError::Singular { column: 1 })
        ));
        let rows = vec![vec![1.0, 2.0, 3.0]];
        assert!(matches!(
            nnls(&rows, &[1.0]),
            Err(NnlsError::UnderDetermined { rows: 1, cols: 3 })
        ));
        let rows = vec![vec![1.0, 0.0], vec![1.0, 0.0]];
        assert!(matches!(
            lstsq(&rows, &[1.0, 1.0]),
            Err(NnlsError::Singular { column: 1 })
        ));
        assert!(matches!(
            nnls(&[vec![f64::NAN]], &[1.0]),
            Err(NnlsError::NotFinite)
        ));
    }

    #[test]
    fn badly_scaled_columns_are_solved() {
        // c0 + c1 n + c2 n^2 for n up to 4096.
        let ns = [16.0, 64.0, 256.0, 1024.0, 4096.0, 100.0];
        let rows: Vec<Vec<f64>> = ns.iter().map(|n| vec![1.0, *n, n * n]).collect();
        let b: Vec<f64> = ns.iter().map(|n| 40.0 + 2.0 * n + 0.5 * n * n).collect();
        let x = nnls(&rows, &b).unwrap();
        assert!(
            (x[0] - 40.0).abs() < 1e-5 && (x[1] - 2.0).abs() < 1e-8 && (x[2] - 0.5).abs() < 1e-10,
            "{x:?}"
        );
    }
}
