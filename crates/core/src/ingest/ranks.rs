//! Which rank a trace file is, when several are opened together.
//!
//! `distributedInfo.rank` when the trace has it; else a number in the file name the way launchers
//! write them (`rank-3.json`, `rank_3`, `worker3_step_12…`, `trainer-3`); else the file's position.
//! Ranks stay unique: a later file whose rank is taken gets the next free number.

/// The rank a file name announces, if any.
pub fn rank_from_name(name: &str) -> Option<i64> {
    let base = name
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(name)
        .to_ascii_lowercase();
    for key in ["rank", "worker", "trainer"] {
        let mut from = 0;
        while let Some(k) = base[from..].find(key) {
            let rest = &base[from + k + key.len()..];
            let rest = rest.strip_prefix(['-', '_', '.']).unwrap_or(rest);
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            if !digits.is_empty() {
                return digits.parse().ok();
            }
            from += k + key.len();
        }
    }
    None
}

/// Assigns unique ranks to files given their `distributedInfo` rank (if any) and name, in order.
pub fn assign_ranks(files: &[(Option<i64>, &str)]) -> Vec<i64> {
    let mut taken = std::collections::BTreeSet::new();
    let mut out = Vec::with_capacity(files.len());
    for (i, (dist, name)) in files.iter().enumerate() {
        let want = dist.or_else(|| rank_from_name(name)).unwrap_or(i as i64);
        let mut r = want;
        while taken.contains(&r) {
            r += 1;
        }
        taken.insert(r);
        out.push(r);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_give_ranks_the_way_launchers_write_them() {
        assert_eq!(rank_from_name("traces/rank-3.json.gz"), Some(3));
        assert_eq!(rank_from_name("rank_12.pt.trace.json"), Some(12));
        assert_eq!(
            rank_from_name("worker5_step_12.1694128201549.pt.trace.json"),
            Some(5)
        );
        assert_eq!(rank_from_name("host_1234.1700000000.pt.trace.json"), None);
        assert_eq!(rank_from_name("ranking_rank7.json"), Some(7));
    }

    #[test]
    fn distributed_info_wins_then_names_then_order_and_ranks_stay_unique() {
        let files = [
            (Some(1), "a.json"),
            (None, "rank-0.json"),
            (None, "x.json"),
            (Some(1), "dup.json"),
        ];
        assert_eq!(assign_ranks(&files), vec![1, 0, 2, 3]);
    }
}
