//! Matching A's ops and kernels with B's (docs/compare.md; the rules are listed in
//! [`super::rows`]' module doc and in docs/compare.md): by name, by shapes, by sizes, then renames
//! within one family under the lowest common parent.

use super::family::{shape_family, COMPILED};
use super::side::{Side, Stat};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchedBy {
    Name,
    Shapes,
    /// A kernel whose name differs only in its numbers (tile or template sizes).
    Sizes,
    Parent,
}

/// How sure a match is (see the module doc for each level's rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// A renamed pair by order among several of its family, a merged group, a compiled region.
    Low,
    /// A renamed pair: the only one of its family on each side under a common parent.
    Medium,
    /// The same name with other input shapes; a kernel of the same name but its numbers.
    High,
    /// The same name (and shapes).
    Exact,
}

impl Confidence {
    pub fn label(self) -> &'static str {
        match self {
            Confidence::Exact => "exact",
            Confidence::High => "high",
            Confidence::Medium => "medium",
            Confidence::Low => "low",
        }
    }
}

/// How rows are matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatchOptions {
    /// Match renamed ops and kernels within their family through a common parent (step 3 of
    /// the module doc); off, a rename is a removal plus an addition.
    pub renames: bool,
}

impl Default for MatchOptions {
    fn default() -> Self {
        MatchOptions { renames: true }
    }
}

/// What a row is made of before its figures.
pub struct Pairing<'a> {
    pub a: Vec<&'a Stat>,
    pub b: Vec<&'a Stat>,
    pub by: Option<MatchedBy>,
    pub confidence: Option<Confidence>,
    pub family: Option<String>,
    /// The common parent.
    pub via: Option<String>,
}

impl<'a> Pairing<'a> {
    fn new(a: Vec<&'a Stat>, b: Vec<&'a Stat>, by: Option<MatchedBy>) -> Pairing<'a> {
        let confidence = match by {
            Some(MatchedBy::Name) => Some(Confidence::Exact),
            Some(MatchedBy::Shapes | MatchedBy::Sizes) => Some(Confidence::High),
            _ => None,
        };
        Pairing {
            a,
            b,
            by,
            confidence,
            family: None,
            via: None,
        }
    }

    fn renamed(a: Vec<&'a Stat>, b: Vec<&'a Stat>, c: Confidence, fam: &str, via: &str) -> Self {
        Pairing {
            confidence: Some(c),
            family: Some(fam.to_owned()),
            via: Some(via.to_owned()),
            ..Pairing::new(a, b, Some(MatchedBy::Parent))
        }
    }

    fn one_sided(a: Vec<&'a Stat>, b: Vec<&'a Stat>, via: Option<String>) -> Self {
        Pairing {
            via,
            ..Pairing::new(a, b, None)
        }
    }
}

/// The nearest op above `start` (itself included) that both sides have.
fn common_parent(
    start: Option<&str>,
    parents: &BTreeMap<String, String>,
    common: &BTreeSet<&str>,
) -> Option<String> {
    let mut cur = start?;
    for _ in 0..256 {
        if common.contains(cur) {
            return Some(cur.to_owned());
        }
        cur = parents.get(cur)?.as_str();
    }
    None
}

/// Pairs `a` with `b` (see the module doc). `kernels` says the stats' `parent` is the launching op
/// (itself a candidate), not a parent already resolved from the op tree.
pub fn match_rows<'a>(
    sa: &'a [Stat],
    sb: &'a [Stat],
    side_a: &Side,
    side_b: &Side,
    kernels: bool,
    opts: MatchOptions,
) -> Vec<Pairing<'a>> {
    let mut out: Vec<Pairing<'a>> = Vec::new();
    let key = |s: &Stat| (s.name.clone(), s.shapes.clone());
    let b_index: BTreeMap<(String, Option<String>), usize> =
        sb.iter().enumerate().map(|(k, s)| (key(s), k)).collect();
    let mut b_used = vec![false; sb.len()];
    let mut a_left: Vec<&Stat> = Vec::new();
    for s in sa {
        match b_index.get(&key(s)) {
            Some(&k) => {
                b_used[k] = true;
                out.push(Pairing::new(vec![s], vec![&sb[k]], Some(MatchedBy::Name)));
            }
            None => a_left.push(s),
        }
    }
    let mut b_left: Vec<&Stat> = sb
        .iter()
        .zip(&b_used)
        .filter(|(_, u)| !**u)
        .map(|(s, _)| s)
        .collect();
    // Same name, other shapes.
    if sa.iter().chain(sb).any(|s| s.shapes.is_some()) {
        let mut by_name: BTreeMap<&str, (Vec<&Stat>, Vec<&Stat>)> = BTreeMap::new();
        for s in &a_left {
            by_name.entry(s.name.as_str()).or_default().0.push(s);
        }
        for s in &b_left {
            by_name.entry(s.name.as_str()).or_default().1.push(s);
        }
        let (mut na, mut nb) = (Vec::new(), Vec::new());
        for (_, (mut xa, mut xb)) in by_name {
            crate::sort::by_key(&mut xa, |s| (s.first_ns, s.shapes.clone()));
            crate::sort::by_key(&mut xb, |s| (s.first_ns, s.shapes.clone()));
            let n = xa.len().min(xb.len());
            for k in 0..n {
                out.push(Pairing::new(
                    vec![xa[k]],
                    vec![xb[k]],
                    Some(MatchedBy::Shapes),
                ));
            }
            na.extend_from_slice(&xa[n..]);
            nb.extend_from_slice(&xb[n..]);
        }
        a_left = na;
        b_left = nb;
    }
    // Through the lowest common parent.
    let names_a: BTreeSet<&str> = side_a.ops.iter().map(|s| s.name.as_str()).collect();
    let names_b: BTreeSet<&str> = side_b.ops.iter().map(|s| s.name.as_str()).collect();
    let common: BTreeSet<&str> = names_a.intersection(&names_b).copied().collect();
    let lca = |s: &Stat, side: &Side| {
        let start = if kernels {
            s.parent.as_deref()
        } else {
            side.op_parent.get(&s.name).map(String::as_str)
        };
        common_parent(start, &side.op_parent, &common)
    };
    let mut groups: BTreeMap<Option<String>, (Vec<&Stat>, Vec<&Stat>)> = BTreeMap::new();
    for s in a_left {
        groups.entry(lca(s, side_a)).or_default().0.push(s);
    }
    for s in b_left {
        groups.entry(lca(s, side_b)).or_default().1.push(s);
    }
    for (via, (mut xa, mut xb)) in groups {
        let first_reached = |x: &&Stat, y: &&Stat| {
            x.first_ns
                .cmp(&y.first_ns)
                .then_with(|| x.name.cmp(&y.name))
        };
        crate::sort::by(&mut xa, first_reached);
        crate::sort::by(&mut xb, first_reached);
        if let (true, Some(v)) = (opts.renames, via.as_deref()) {
            if kernels {
                let (la, lb) = pair_sizes(xa, xb, v, &mut out);
                xa = la;
                xb = lb;
            }
            let (la, lb) = pair_renames(xa, xb, v, &mut out);
            xa = la;
            xb = lb;
        }
        for x in xa {
            out.push(Pairing::one_sided(vec![x], Vec::new(), via.clone()));
        }
        for y in xb {
            out.push(Pairing::one_sided(Vec::new(), vec![y], via.clone()));
        }
    }
    out
}

/// Kernels whose names differ only in their numbers, one on each side under `via`, pair
/// ([`MatchedBy::Sizes`]); returns the rest, in order.
fn pair_sizes<'a>(
    xa: Vec<&'a Stat>,
    xb: Vec<&'a Stat>,
    via: &str,
    out: &mut Vec<Pairing<'a>>,
) -> (Vec<&'a Stat>, Vec<&'a Stat>) {
    use super::family::sizes_stem;
    let mut count: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for s in &xa {
        count.entry(sizes_stem(&s.name)).or_default().0 += 1;
    }
    for s in &xb {
        count.entry(sizes_stem(&s.name)).or_default().1 += 1;
    }
    let unique = |s: &Stat| count.get(&sizes_stem(&s.name)) == Some(&(1, 1));
    let (pa, la): (Vec<&Stat>, Vec<&Stat>) = xa.into_iter().partition(|s| unique(s));
    let (pb, lb): (Vec<&Stat>, Vec<&Stat>) = xb.into_iter().partition(|s| unique(s));
    for x in pa {
        let stem = sizes_stem(&x.name);
        if let Some(y) = pb.iter().find(|y| sizes_stem(&y.name) == stem) {
            out.push(Pairing {
                family: x.family.clone(),
                via: Some(via.to_owned()),
                ..Pairing::new(vec![x], vec![*y], Some(MatchedBy::Sizes))
            });
        }
    }
    (la, lb)
}

/// A family and, when shapes are known on the item, its shape family: what a rename must share.
fn rename_key(s: &Stat) -> Option<(String, Option<Vec<i32>>)> {
    let fam = s.family.clone()?;
    Some((fam, s.shapes.as_deref().map(shape_family)))
}

/// Step 3 of the module doc under one common parent `via`, items in first-reached order: pairs
/// or merges what shares a family, lets a one-sided compiled region take the other side's rest;
/// returns what stays unmatched on each side.
fn pair_renames<'a>(
    xa: Vec<&'a Stat>,
    xb: Vec<&'a Stat>,
    via: &str,
    out: &mut Vec<Pairing<'a>>,
) -> (Vec<&'a Stat>, Vec<&'a Stat>) {
    type Key = (String, Option<Vec<i32>>);
    let mut fam: BTreeMap<Key, (Vec<&Stat>, Vec<&Stat>)> = BTreeMap::new();
    let (mut la, mut lb) = (Vec::new(), Vec::new());
    for s in xa {
        match rename_key(s) {
            Some(k) => fam.entry(k).or_default().0.push(s),
            None => la.push(s),
        }
    }
    for s in xb {
        match rename_key(s) {
            Some(k) => fam.entry(k).or_default().1.push(s),
            None => lb.push(s),
        }
    }
    // Under the step itself everything of a family meets: a pair there is a guess.
    let coarse = via.starts_with("ProfilerStep") || crate::model::steps::is_merged(via);
    let mut compiled: (Vec<&Stat>, Vec<&Stat>) = (Vec::new(), Vec::new());
    for ((f, _), (ya, yb)) in fam {
        if ya.is_empty() || yb.is_empty() {
            if f == COMPILED {
                compiled.0.extend(ya);
                compiled.1.extend(yb);
            } else {
                la.extend(ya);
                lb.extend(yb);
            }
            continue;
        }
        if ya.len() == yb.len() {
            let c = if ya.len() == 1 && !coarse {
                Confidence::Medium
            } else {
                Confidence::Low
            };
            for (x, y) in ya.into_iter().zip(yb) {
                out.push(Pairing::renamed(vec![x], vec![y], c, &f, via));
            }
        } else {
            out.push(Pairing::renamed(ya, yb, Confidence::Low, &f, via));
        }
    }
    // A compiled region on one side stands for every eager op left on the other.
    let first_reached = |v: &mut Vec<&Stat>| {
        crate::sort::by(v, |x, y| {
            x.first_ns
                .cmp(&y.first_ns)
                .then_with(|| x.name.cmp(&y.name))
        })
    };
    match (compiled.0.is_empty(), compiled.1.is_empty()) {
        (true, false) if !la.is_empty() => {
            first_reached(&mut la);
            out.push(Pairing::renamed(
                std::mem::take(&mut la),
                compiled.1,
                Confidence::Low,
                COMPILED,
                via,
            ));
        }
        (false, true) if !lb.is_empty() => {
            first_reached(&mut lb);
            out.push(Pairing::renamed(
                compiled.0,
                std::mem::take(&mut lb),
                Confidence::Low,
                COMPILED,
                via,
            ));
        }
        _ => {
            la.extend(compiled.0);
            lb.extend(compiled.1);
        }
    }
    first_reached(&mut la);
    first_reached(&mut lb);
    (la, lb)
}
