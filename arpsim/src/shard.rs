//! `--shard K/N`: the K-th of N parts of a job, for the tools that spread
//! work over machines (chips-eval's sweeps, sim-host's suites). Which part
//! holds what is each tool's choice; the strided split here is the
//! sweeps'.

/// `K/N`: the K-th of N shards, 1 <= K <= N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// The whole job as one shard.
    pub const WHOLE: Shard = Shard { index: 1, count: 1 };

    /// The strided split: this shard's items of `total`, item `i` (from 0)
    /// belonging to shard `i mod N + 1`.
    pub fn points(self, total: u64) -> impl Iterator<Item = u64> {
        let stride = usize::try_from(self.count).unwrap_or(usize::MAX);
        (self.index - 1..total).step_by(stride)
    }

    /// How many of `total` items the strided split gives this shard.
    pub fn size(self, total: u64) -> u64 {
        if total >= self.index {
            (total - self.index) / self.count + 1
        } else {
            0
        }
    }

    /// The shard (from 1) of `count` that the strided split gives item
    /// `index`.
    pub fn of_point(index: u64, count: u64) -> u64 {
        index % count + 1
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let usage = || format!("`{s}`: expected K/N, the K-th of N shards (1 <= K <= N)");
        let (k, n) = s.split_once('/').ok_or_else(usage)?;
        let k: u64 = k.trim().parse().map_err(|_| usage())?;
        let n: u64 = n.trim().parse().map_err(|_| usage())?;
        if n == 0 {
            return Err(format!("`{s}`: at least one shard (N >= 1)"));
        }
        if !(1..=n).contains(&k) {
            return Err(format!("`{s}`: shards are numbered from 1 to {n}"));
        }
        Ok(Shard { index: k, count: n })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_numbers_are_checked() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { index: 2, count: 4 }));
        assert_eq!(
            " 2 / 4 ".parse::<Shard>().map(|s| s.to_string()),
            Ok("2/4".into())
        );
        for bad in ["0/4", "5/4", "1/0", "x/4", "a/b", "4", "", "-1/4", "1/4/2"] {
            let e = bad.parse::<Shard>().unwrap_err();
            assert!(e.contains(bad), "{bad}: {e}");
        }
        assert!("0/4".parse::<Shard>().unwrap_err().contains("from 1 to 4"));
        assert!("1/0".parse::<Shard>().unwrap_err().contains("N >= 1"));
    }

    #[test]
    fn every_point_is_in_exactly_one_shard() {
        for total in [0, 1, 7, 28, 100] {
            for count in 1..=9 {
                let mut seen = vec![0u32; total as usize];
                for index in 1..=count {
                    let shard = Shard { index, count };
                    assert_eq!(shard.size(total), shard.points(total).count() as u64);
                    for i in shard.points(total) {
                        seen[i as usize] += 1;
                        assert_eq!(Shard::of_point(i, count), index);
                    }
                }
                assert!(seen.iter().all(|&n| n == 1), "{total} points in {count}");
            }
        }
    }

    #[test]
    fn shards_differ_in_size_by_at_most_one() {
        let sizes: Vec<usize> = (1..=4)
            .map(|index| Shard { index, count: 4 }.points(10).count())
            .collect();
        assert_eq!(sizes, [3, 3, 2, 2]);
    }
}
