//! Which files make up which run of a trend (`tracelight trend DIR` and the page's Trend tab use
//! the same rule, so a folder opens as the same series in both): each entry right under the
//! folder is one run — a trace file (`.json`, `.json.gz`), a digest (`STEM.digest.json` with its
//! `STEM.*.parquet` tables), or a folder (a run folder of one trace or digest per rank) — named
//! by its file name less the format's suffixes (`2026-11-01.pt.trace.json.gz` → `2026-11-01`,
//! `0042-abc.pt.trace.digest.json` → `0042-abc`), and runs are ordered by that name.

use crate::digest::HEADER_SUFFIX;

/// The run a file right under the trend's folder stands for, by its name: `None` for files that
/// are no run (a digest's Parquet tables, logs, hidden files).
pub fn run_name(file_name: &str) -> Option<String> {
    if file_name.starts_with('.') {
        return None;
    }
    let lower = file_name.to_ascii_lowercase();
    let cut = if lower.ends_with(HEADER_SUFFIX) {
        HEADER_SUFFIX.len()
    } else if lower.ends_with(".json.gz") {
        ".json.gz".len()
    } else if lower.ends_with(".json") {
        ".json".len()
    } else {
        return None;
    };
    let s = &file_name[..file_name.len() - cut];
    let s = s.strip_suffix(".pt.trace").unwrap_or(s);
    Some(s.to_owned())
}

/// The runs of a folder given the paths of every file under it (`root/run/…` as a folder pick
/// gives them, `/root/run/…` as a drop does, or bare names for files picked without a folder):
/// (run name, indices into `paths`), ordered by name. A file inside a subfolder belongs to the
/// subfolder's run; a file right under the root is a run by [`run_name`], and a digest's Parquet
/// table goes with the digest header whose stem it starts with. Files that belong to no run are
/// left out.
pub fn group(paths: &[&str]) -> Vec<(String, Vec<usize>)> {
    let parts: Vec<Vec<&str>> = paths
        .iter()
        .map(|p| p.split(['/', '\\']).filter(|c| !c.is_empty()).collect())
        .collect();
    // The dropped folder itself is the first component every path shares.
    let root = parts.first().and_then(|p| p.first().copied());
    let strip = parts
        .iter()
        .all(|p| p.len() >= 2 && p.first().copied() == root);
    let rel: Vec<&[&str]> = parts
        .iter()
        .map(|p| if strip { &p[1..] } else { &p[..] })
        .collect();
    let mut runs: Vec<(String, Vec<usize>)> = Vec::new();
    let add = |name: String, i: usize, runs: &mut Vec<(String, Vec<usize>)>| match runs
        .iter_mut()
        .find(|r| r.0 == name)
    {
        Some(r) => r.1.push(i),
        None => runs.push((name, vec![i])),
    };
    // Digest headers right under the root, by stem, for their tables.
    let mut stems: Vec<(String, String)> = Vec::new();
    for (i, r) in rel.iter().enumerate() {
        match r {
            [dir, _, ..] => add((*dir).to_owned(), i, &mut runs),
            [file] => {
                if let Some(name) = run_name(file) {
                    if let Some(stem) = file.strip_suffix(HEADER_SUFFIX) {
                        stems.push((format!("{stem}."), name.clone()));
                    }
                    add(name, i, &mut runs);
                }
            }
            [] => {}
        }
    }
    for (i, r) in rel.iter().enumerate() {
        if let [file] = r {
            if file.to_ascii_lowercase().ends_with(".parquet") {
                // The longest stem wins (`a.` and `a.b.` both prefix `a.b.ops.parquet`).
                let owner = stems
                    .iter()
                    .filter(|(s, _)| file.starts_with(s.as_str()))
                    .max_by_key(|(s, _)| s.len());
                if let Some((_, name)) = owner {
                    add(name.clone(), i, &mut runs);
                }
            }
        }
    }
    crate::sort::by(&mut runs, |a, b| a.0.cmp(&b.0));
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_drop_the_format_suffixes() {
        assert_eq!(
            run_name("2026-11-01.pt.trace.json.gz").as_deref(),
            Some("2026-11-01")
        );
        assert_eq!(run_name("0042-abc.json").as_deref(), Some("0042-abc"));
        assert_eq!(
            run_name("0042-abc.pt.trace.digest.json").as_deref(),
            Some("0042-abc")
        );
        assert_eq!(run_name("n.digest.json").as_deref(), Some("n"));
        assert_eq!(run_name("n.ops.parquet"), None);
        assert_eq!(run_name("notes.txt"), None);
        assert_eq!(run_name(".hidden.json"), None);
    }

    #[test]
    fn a_folder_groups_into_runs_by_its_entries() {
        let paths = [
            "runs/2026-11-03/rank0.json",
            "runs/2026-11-01.pt.trace.json.gz",
            "runs/2026-11-03/rank1.json",
            "runs/2026-11-02.pt.trace.digest.json",
            "runs/2026-11-02.pt.trace.ops.parquet",
            "runs/2026-11-02.pt.trace.steps.parquet",
            "runs/README.md",
        ];
        let g = group(&paths);
        assert_eq!(
            g,
            vec![
                ("2026-11-01".to_owned(), vec![1]),
                ("2026-11-02".to_owned(), vec![3, 4, 5]),
                ("2026-11-03".to_owned(), vec![0, 2]),
            ]
        );
        // A drop's paths start with '/'; bare names (a pick of files) are runs by name.
        assert_eq!(group(&["/r/b.json", "/r/a.json"]).len(), 2);
        assert_eq!(
            group(&["b.json", "a.json"]),
            vec![("a".to_owned(), vec![1]), ("b".to_owned(), vec![0])]
        );
    }
}
