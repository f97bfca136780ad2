//! Reading objects: commits (tree, parents, people, dates, message, signature), trees (one level
//! or recursive), blobs and their sizes, the changes between two commits with their line counts,
//! merge bases and ancestry, and the commits a set of ref updates introduces.
use std::collections::HashMap;

use crate::command::Error;
use crate::repo::{is_oid, RefUpdate, Repo, EMPTY_TREE, ZERO};

/// An author or committer as a commit records them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Person {
    pub name: String,
    pub email: String,
    /// Seconds since the epoch.
    pub time: i64,
    /// The recorded time zone, minutes east of UTC.
    pub offset_minutes: i32,
}

impl Person {
    /// `Name <email> time ±hhmm`, as a commit header holds it.
    pub fn parse(line: &str) -> Option<Person> {
        let close = line.rfind('>')?;
        let (who, when) = (&line[..close], line[close + 1..].trim());
        let (name, email) = who.rsplit_once('<')?;
        let mut parts = when.split_whitespace();
        let time = parts.next().and_then(|t| t.parse().ok()).unwrap_or(0);
        let offset_minutes = parts.next().map(parse_offset).unwrap_or(0);
        Some(Person { name: name.trim().to_string(), email: email.to_string(), time, offset_minutes })
    }

    /// The form git takes in `GIT_AUTHOR_DATE`: `@<seconds> ±hhmm`.
    pub fn git_date(&self) -> String {
        let sign = if self.offset_minutes < 0 { '-' } else { '+' };
        let m = self.offset_minutes.unsigned_abs();
        format!("@{} {sign}{:02}{:02}", self.time, m / 60, m % 60)
    }
}

fn parse_offset(tz: &str) -> i32 {
    let (sign, digits) = match tz.as_bytes().first() {
        Some(b'-') => (-1, &tz[1..]),
        Some(b'+') => (1, &tz[1..]),
        _ => (1, tz),
    };
    let n: i32 = digits.parse().unwrap_or(0);
    sign * ((n / 100) * 60 + n % 100)
}

/// A commit object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Commit {
    pub oid: String,
    pub tree: String,
    pub parents: Vec<String>,
    pub author: Person,
    pub committer: Person,
    pub message: String,
    /// The `gpgsig` header, when the commit is signed.
    pub signature: Option<String>,
}

impl Commit {
    /// Parses a raw commit object.
    pub fn parse(oid: &str, raw: &[u8]) -> Option<Commit> {
        let text = String::from_utf8_lossy(raw);
        let (head, message) = text.split_once("\n\n").unwrap_or((&text, ""));
        let (mut tree, mut parents, mut author, mut committer, mut signature) = (None, Vec::new(), None, None, None::<String>);
        let mut last: Option<&str> = None;
        for line in head.lines() {
            if let Some(cont) = line.strip_prefix(' ') {
                if last == Some("gpgsig") {
                    if let Some(s) = signature.as_mut() {
                        s.push('\n');
                        s.push_str(cont);
                    }
                }
                continue;
            }
            let (key, value) = line.split_once(' ').unwrap_or((line, ""));
            last = Some(key);
            match key {
                "tree" => tree = Some(value.to_string()),
                "parent" => parents.push(value.to_string()),
                "author" => author = Person::parse(value),
                "committer" => committer = Person::parse(value),
                "gpgsig" | "gpgsig-sha256" => {
                    last = Some("gpgsig");
                    signature = Some(value.to_string());
                }
                _ => {}
            }
        }
        Some(Commit {
            oid: oid.to_string(),
            tree: tree?,
            parents,
            author: author?,
            committer: committer?,
            message: message.to_string(),
            signature,
        })
    }
}

/// An annotated tag object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tag {
    pub oid: String,
    /// The object it names, and that object's type (`commit`, `tree`, `blob`, `tag`).
    pub object: String,
    pub kind: String,
    /// The tag's name as the object records it.
    pub name: String,
    /// Old tags may have none.
    pub tagger: Option<Person>,
    /// The message, without a signature that follows it.
    pub message: String,
    /// An armored signature at the message's end.
    pub signature: Option<String>,
}

impl Tag {
    /// Parses a raw tag object.
    pub fn parse(oid: &str, raw: &[u8]) -> Option<Tag> {
        let text = String::from_utf8_lossy(raw);
        let (head, body) = text.split_once("\n\n").unwrap_or((&text, ""));
        let (mut object, mut kind, mut name, mut tagger) = (None, None, None, None);
        for line in head.lines() {
            let (key, value) = line.split_once(' ').unwrap_or((line, ""));
            match key {
                "object" => object = Some(value.to_string()),
                "type" => kind = Some(value.to_string()),
                "tag" => name = Some(value.to_string()),
                "tagger" => tagger = Person::parse(value),
                _ => {}
            }
        }
        let (message, signature) = match body.find("-----BEGIN ") {
            Some(at) => (&body[..at], Some(body[at..].trim_end().to_string())),
            None => (body, None),
        };
        Some(Tag { oid: oid.to_string(), object: object?, kind: kind?, name: name?, tagger, message: message.to_string(), signature })
    }
}

/// The kind of a tree entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Blob,
    Tree,
    /// A submodule's commit.
    Commit,
}

/// An entry of a tree listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// `100644`, `100755`, `120000` (a link), `040000`, `160000`.
    pub mode: String,
    pub kind: Kind,
    pub oid: String,
    /// From the listed tree's root.
    pub path: String,
    /// Blobs only.
    pub size: Option<u64>,
}

/// How a path changed between two commits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Added,
    Removed,
    Modified,
}

impl Status {
    /// From `--name-status`'s letter (type changes count as modifications).
    pub fn of_letter(s: &str) -> Status {
        match s.chars().next() {
            Some('A') => Status::Added,
            Some('D') => Status::Removed,
            _ => Status::Modified,
        }
    }
}

/// A changed path, with its line counts (none for binary files).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub path: String,
    pub status: Status,
    /// The blob before ([`ZERO`] for an added path) and after ([`ZERO`] for a removed one).
    pub old_oid: String,
    pub new_oid: String,
    pub additions: u64,
    pub deletions: u64,
    pub binary: bool,
}

/// `rev-list --stdin` input: the `wanted` tips, then `--not` and the `known` ones.
fn tips(wanted: &[String], known: &[String]) -> Vec<u8> {
    let mut s = String::new();
    for w in wanted.iter().filter(|w| is_oid(w) && *w != ZERO) {
        s.push_str(w);
        s.push('\n');
    }
    s.push_str("--not\n");
    for k in known.iter().filter(|k| is_oid(k) && *k != ZERO) {
        s.push_str(k);
        s.push('\n');
    }
    s.into_bytes()
}

fn oids(out: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(out).lines().map(str::trim).filter(|l| is_oid(l)).map(str::to_string).collect()
}

impl Repo {
    /// The commits among `oids` (in that order; others and missing ones left out).
    pub async fn commits(&self, oids: &[String]) -> Result<Vec<Commit>, Error> {
        let mut input = String::new();
        for o in oids.iter().filter(|o| is_oid(o)) {
            input.push_str(o);
            input.push('\n');
        }
        if input.is_empty() {
            return Ok(Vec::new());
        }
        let out = self.cmd().args(["cat-file", "--batch"]).input(input.into_bytes()).output().await?;
        Ok(batch(&out).into_iter().filter(|(_, kind, _)| kind == "commit").filter_map(|(oid, _, raw)| Commit::parse(&oid, raw)).collect())
    }

    /// The annotated tag `oid` names, if it names one.
    pub async fn tag(&self, oid: &str) -> Result<Option<Tag>, Error> {
        if !is_oid(oid) {
            return Ok(None);
        }
        let out = self.cmd().args(["cat-file", "--batch"]).input(format!("{oid}\n").into_bytes()).output().await?;
        Ok(batch(&out).into_iter().find(|(_, kind, _)| kind == "tag").and_then(|(oid, _, raw)| Tag::parse(&oid, raw)))
    }

    /// One commit, if `oid` names one.
    pub async fn commit(&self, oid: &str) -> Result<Option<Commit>, Error> {
        Ok(self.commits(&[oid.to_string()]).await?.pop())
    }

    /// The entries of a tree (a tree's or commit's name): one level, or every blob, link and
    /// submodule below it (`recursive`; subtrees listed too).
    pub async fn tree(&self, rev: &str, recursive: bool) -> Result<Vec<Entry>, Error> {
        if !is_oid(rev) {
            return Err(Error::Invalid(format!("not an object name: {rev:?}")));
        }
        let mut c = self.cmd().args(["ls-tree", "-z", "-l"]);
        if recursive {
            c = c.args(["-r", "-t"]);
        }
        let out = c.arg(rev).output().await?;
        Ok(parse_ls_tree(&out))
    }

    /// A blob's contents, if `oid` names a blob no larger than `max` bytes (`Err(TooLarge)`
    /// when larger).
    pub async fn blob(&self, oid: &str, max: u64) -> Result<Option<Vec<u8>>, Error> {
        match self.blob_size(oid).await? {
            None => Ok(None),
            Some(n) if n > max => Err(Error::TooLarge),
            Some(_) => Ok(Some(self.cmd().args(["cat-file", "blob", oid]).output().await?)),
        }
    }

    /// A blob's size, if `oid` names a blob.
    pub async fn blob_size(&self, oid: &str) -> Result<Option<u64>, Error> {
        if self.object_type(oid).await?.as_deref() != Some("blob") {
            return Ok(None);
        }
        Ok(self.cmd().args(["cat-file", "-s", oid]).text().await?.trim().parse().ok())
    }

    /// The paths that differ from commit (or tree) `base` (`None`: the empty tree, as for a
    /// root commit) to `head`, with their line counts; renames show as a removal and an addition.
    pub async fn diff(&self, base: Option<&str>, head: &str) -> Result<Vec<Change>, Error> {
        let base = base.unwrap_or(EMPTY_TREE);
        if !is_oid(base) || !is_oid(head) {
            return Err(Error::Invalid("not an object name".into()));
        }
        let raw = self.cmd().args(["diff-tree", "-r", "-z", "--no-renames", "--raw", base, head]).output().await?;
        let stats = self.cmd().args(["diff-tree", "-r", "-z", "--no-renames", "--numstat", base, head]).output().await?;
        let mut counts = std::collections::HashMap::new();
        // numstat -z: "added\tdeleted\tpath\0" ("-\t-\t" for binary files).
        for rec in stats.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            let rec = String::from_utf8_lossy(rec);
            let mut f = rec.splitn(3, '\t');
            let (a, d, p) = (f.next().unwrap_or(""), f.next().unwrap_or(""), f.next().unwrap_or(""));
            counts.insert(p.to_string(), (a.parse().ok(), d.parse().ok()));
        }
        // raw -z: ":oldmode newmode oldoid newoid S\0path\0".
        let fields: Vec<String> = raw.split(|b| *b == 0).map(|f| String::from_utf8_lossy(f).into_owned()).collect();
        let mut changes = Vec::new();
        for pair in fields.chunks(2) {
            let [meta, path] = pair else { continue };
            let f: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
            if f.len() != 5 || f[4].is_empty() {
                continue;
            }
            let status = Status::of_letter(f[4]);
            let (a, d): (Option<u64>, Option<u64>) = counts.get(path).copied().unwrap_or((None, None));
            changes.push(Change {
                path: path.clone(),
                status,
                old_oid: f[2].to_string(),
                new_oid: f[3].to_string(),
                additions: a.unwrap_or(0),
                deletions: d.unwrap_or(0),
                binary: a.is_none() && d.is_none(),
            });
        }
        Ok(changes)
    }

    /// The unified diff of each text file that differs from `base` (`None`: the empty tree) to
    /// `head`, by path: its hunks from the first `@@` on, without the trailing line end (the
    /// form of a commit's `patch`). Binary files and mode-only changes have none.
    pub async fn patches(&self, base: Option<&str>, head: &str) -> Result<HashMap<String, String>, Error> {
        let base = base.unwrap_or(EMPTY_TREE);
        if !is_oid(base) || !is_oid(head) {
            return Err(Error::Invalid("not an object name".into()));
        }
        let out = self
            .cmd()
            .args(["diff-tree", "-r", "-p", "--no-renames", "--no-color", "--no-ext-diff", "--no-textconv", "--full-index", base, head])
            .output()
            .await?;
        Ok(parse_patches(&String::from_utf8_lossy(&out)))
    }

    /// The entry at `path` (slash-separated, from the root) in commit or tree `rev`; `None`
    /// when nothing is there.
    pub async fn entry(&self, rev: &str, path: &str) -> Result<Option<Entry>, Error> {
        if !is_oid(rev) {
            return Err(Error::Invalid(format!("not an object name: {rev:?}")));
        }
        let path = path.trim_matches('/');
        if path.is_empty() || path.contains('\0') {
            return Ok(None);
        }
        let out = self.cmd().args(["ls-tree", "-z", "-l", "--full-tree", rev, "--", path]).output().await?;
        Ok(parse_ls_tree(&out).into_iter().find(|e| e.path == path))
    }

    /// The commits of a history listing, newest first ([`LogQuery`]), and how many there are in
    /// all (without `skip` and `max`).
    pub async fn log(&self, q: &LogQuery<'_>) -> Result<(Vec<String>, u64), Error> {
        if !is_oid(q.start) {
            return Err(Error::Invalid(format!("not an object name: {:?}", q.start)));
        }
        let filters = |mut c: crate::command::Cmd| {
            if !q.authors.is_empty() {
                c = c.arg("--fixed-strings");
                for a in q.authors {
                    c = c.arg(format!("--author={a}"));
                }
            }
            if let Some(s) = q.since {
                c = c.arg(format!("--max-age={s}"));
            }
            if let Some(u) = q.until {
                c = c.arg(format!("--min-age={u}"));
            }
            c = c.arg(q.start).arg("--");
            if let Some(p) = q.path.map(|p| p.trim_matches('/')).filter(|p| !p.is_empty()) {
                c = c.arg(p);
            }
            c
        };
        let list = filters(self.cmd().args(["rev-list".to_string(), format!("--skip={}", q.skip), format!("--max-count={}", q.max)]))
            .output()
            .await?;
        let count = filters(self.cmd().args(["rev-list", "--count"])).text().await?;
        Ok((oids(&list), count.trim().parse().unwrap_or(0)))
    }

    /// How many commits `head` has that `base` does not.
    pub async fn count_between(&self, base: &str, head: &str) -> Result<u64, Error> {
        if !is_oid(base) || !is_oid(head) {
            return Err(Error::Invalid("not an object name".into()));
        }
        Ok(self.cmd().args(["rev-list", "--count", head, "--not", base, "--"]).text().await?.trim().parse().unwrap_or(0))
    }

    /// The best common ancestor of two commits.
    pub async fn merge_base(&self, a: &str, b: &str) -> Result<Option<String>, Error> {
        if !is_oid(a) || !is_oid(b) {
            return Ok(None);
        }
        let (ok, out, _) = self.cmd().args(["merge-base", a, b]).run().await?;
        Ok(if ok { oids(&out).into_iter().next() } else { None })
    }

    /// Is `ancestor` reachable from `descendant` (or the same commit)?
    pub async fn is_ancestor(&self, ancestor: &str, descendant: &str) -> Result<bool, Error> {
        if !is_oid(ancestor) || !is_oid(descendant) {
            return Ok(false);
        }
        let (ok, _, err) = self.cmd().args(["merge-base", "--is-ancestor", ancestor, descendant]).run().await?;
        if !ok && !err.is_empty() {
            return Err(Error::Failed(crate::command::last_error(&err)));
        }
        Ok(ok)
    }

    /// Commits reachable from `wanted` but from none of `known`, newest first (what ref updates
    /// to `wanted` introduce into a repository whose refs were `known`).
    pub async fn rev_list(&self, wanted: &[String], known: &[String]) -> Result<Vec<String>, Error> {
        if !wanted.iter().any(|w| is_oid(w) && w != ZERO) {
            return Ok(Vec::new());
        }
        let out = self.cmd().args(["rev-list", "--stdin"]).input(tips(wanted, known)).output().await?;
        Ok(oids(&out))
    }

    /// What `updates` introduce into a repository whose refs are `before`: the new commits.
    pub async fn introduced(&self, updates: &[RefUpdate], before: &[crate::repo::Ref]) -> Result<Vec<String>, Error> {
        let wanted: Vec<String> = updates.iter().filter(|u| !u.is_delete()).map(|u| u.new.clone()).collect();
        let known: Vec<String> = before.iter().map(|r| r.oid.clone()).collect();
        self.rev_list(&wanted, &known).await
    }

    /// The paths under `prefix` that commits reachable from `wanted` but not from `known` change
    /// (merges compared with their first parent).
    pub async fn paths_changed(&self, wanted: &[String], known: &[String], prefix: &str) -> Result<Vec<String>, Error> {
        if !wanted.iter().any(|w| is_oid(w) && w != ZERO) {
            return Ok(Vec::new());
        }
        let out = self
            .cmd()
            .args(["log", "--stdin", "--format=", "--name-only", "-z", "--no-renames", "--diff-merges=first-parent", "--", prefix])
            .input(tips(wanted, known))
            .output()
            .await?;
        let mut paths: Vec<String> =
            out.split(|b| *b == 0 || *b == b'\n').filter(|p| !p.is_empty()).map(|p| String::from_utf8_lossy(p).into_owned()).collect();
        paths.sort();
        paths.dedup();
        Ok(paths)
    }
}

/// A path that new commits change, with the size of the content they give it (`None`: they
/// remove it, or it is a submodule).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangedFile {
    pub path: String,
    pub size: Option<u64>,
}

impl Repo {
    /// Every path the commits reachable from `wanted` but not from `known` change (merges compared
    /// with their first parent), one entry per distinct content, with its size: what push rules
    /// (path, extension, size) judge. Streams through `git log --raw` and `cat-file --batch-check`.
    pub async fn files_changed(&self, wanted: &[String], known: &[String]) -> Result<Vec<ChangedFile>, Error> {
        if !wanted.iter().any(|w| is_oid(w) && w != ZERO) {
            return Ok(Vec::new());
        }
        let out = self
            .cmd()
            .args(["log", "--stdin", "--format=", "--raw", "-z", "--no-renames", "--no-abbrev", "--diff-merges=first-parent"])
            .input(tips(wanted, known))
            .output()
            .await?;
        let changes = parse_raw(&out);
        let mut blobs: Vec<String> = changes.iter().filter_map(|(_, b)| b.clone()).collect();
        blobs.sort();
        blobs.dedup();
        let mut sizes = std::collections::HashMap::new();
        if !blobs.is_empty() {
            let input: String = blobs.iter().map(|b| format!("{b}\n")).collect();
            let out = self.cmd().args(["cat-file", "--batch-check"]).input(input.into_bytes()).output().await?;
            for line in String::from_utf8_lossy(&out).lines() {
                let f: Vec<&str> = line.split(' ').collect();
                if let [oid, "blob", size] = f[..] {
                    if let Ok(n) = size.parse::<u64>() {
                        sizes.insert(oid.to_string(), n);
                    }
                }
            }
        }
        let mut files: Vec<ChangedFile> =
            changes.into_iter().map(|(path, blob)| ChangedFile { size: blob.and_then(|b| sizes.get(&b).copied()), path }).collect();
        files.sort_by(|a, b| (&a.path, a.size).cmp(&(&b.path, b.size)));
        files.dedup();
        Ok(files)
    }
}

/// `log --raw -z` output: (path, the blob it now holds; `None` when removed or not a blob).
fn parse_raw(out: &[u8]) -> Vec<(String, Option<String>)> {
    let mut list = Vec::new();
    let mut meta: Option<String> = None;
    for tok in out.split(|b| *b == 0) {
        let tok = String::from_utf8_lossy(tok);
        match meta.take() {
            None => {
                let t = tok.trim_start_matches('\n');
                if t.starts_with(':') {
                    meta = Some(t.to_string());
                }
            }
            Some(m) => {
                // ":<old mode> <new mode> <old oid> <new oid> <status>"
                let f: Vec<&str> = m.trim_start_matches(':').split(' ').collect();
                let blob = match f[..] {
                    [_, mode, _, new, status] if !status.starts_with('D') && !mode.starts_with("160") && new != ZERO => {
                        Some(new.to_string())
                    }
                    _ => None,
                };
                list.push((tok.into_owned(), blob));
            }
        }
    }
    list
}

/// What a history listing ([`Repo::log`]) lists: commits reachable from `start`, by whom
/// (author emails or names, any one), committed within `since..=until` (seconds), touching
/// `path`; `skip` of them left out and at most `max` listed.
#[derive(Clone, Debug, Default)]
pub struct LogQuery<'a> {
    pub start: &'a str,
    pub path: Option<&'a str>,
    pub authors: &'a [String],
    pub since: Option<i64>,
    pub until: Option<i64>,
    pub skip: u64,
    pub max: u64,
}

/// Splits `diff-tree -p` output into each path's hunks (a path diffed twice, as a type change
/// is, gets both). Paths git quotes (control characters, quotes) are left out.
fn parse_patches(out: &str) -> HashMap<String, String> {
    let mut patches: HashMap<String, String> = HashMap::new();
    for block in out.split("\ndiff --git ").map(|b| b.strip_prefix("diff --git ").unwrap_or(b)) {
        let Some((header, rest)) = block.split_once('\n') else { continue };
        // `a/<path> b/<path>`: the same path twice, as renames are off.
        if header.starts_with('"') || header.len() < 5 || (header.len() - 5) % 2 != 0 {
            continue;
        }
        let path = &header[2..2 + (header.len() - 5) / 2];
        if header != format!("a/{path} b/{path}") {
            continue;
        }
        let Some(at) = rest.find("\n@@").map(|i| i + 1).or_else(|| rest.starts_with("@@").then_some(0)) else { continue };
        let hunks = rest[at..].trim_end_matches('\n');
        let entry = patches.entry(path.to_string()).or_default();
        if !entry.is_empty() {
            entry.push('\n');
        }
        entry.push_str(hunks);
    }
    patches
}

/// Parses `ls-tree -z -l` output.
fn parse_ls_tree(out: &[u8]) -> Vec<Entry> {
    let mut list = Vec::new();
    for rec in out.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let rec = String::from_utf8_lossy(rec);
        let Some((meta, path)) = rec.split_once('\t') else { continue };
        let f: Vec<&str> = meta.split_whitespace().collect();
        if f.len() != 4 {
            continue;
        }
        let kind = match f[1] {
            "blob" => Kind::Blob,
            "tree" => Kind::Tree,
            _ => Kind::Commit,
        };
        list.push(Entry { mode: f[0].to_string(), kind, oid: f[2].to_string(), path: path.to_string(), size: f[3].parse().ok() });
    }
    list
}

/// Parses `cat-file --batch` output into (name, type, contents); missing objects left out.
fn batch(out: &[u8]) -> Vec<(String, String, &[u8])> {
    let mut list = Vec::new();
    let mut rest = out;
    while !rest.is_empty() {
        let Some(nl) = rest.iter().position(|b| *b == b'\n') else { break };
        let header = String::from_utf8_lossy(&rest[..nl]).into_owned();
        rest = &rest[nl + 1..];
        let f: Vec<&str> = header.split(' ').collect();
        if f.len() != 3 {
            continue; // "<name> missing"
        }
        let Ok(size) = f[2].parse::<usize>() else { break };
        if rest.len() < size {
            break;
        }
        list.push((f[0].to_string(), f[1].to_string(), &rest[..size]));
        rest = rest.get(size + 1..).unwrap_or_default();
    }
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commits_and_people_parse() {
        let raw = b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nparent 1111111111111111111111111111111111111111\n\
author Ann Author <ann@example.com> 1700000000 -0130\ncommitter C <c@x> 1700000100 +0200\n\
gpgsig -----BEGIN PGP SIGNATURE-----\n abc\n -----END PGP SIGNATURE-----\n\nSubject\n\nBody\n";
        let c = Commit::parse("2222222222222222222222222222222222222222", raw).unwrap();
        assert_eq!(c.tree, EMPTY_TREE);
        assert_eq!(c.parents, vec!["1111111111111111111111111111111111111111".to_string()]);
        assert_eq!(
            c.author,
            Person { name: "Ann Author".into(), email: "ann@example.com".into(), time: 1_700_000_000, offset_minutes: -90 }
        );
        assert_eq!(c.committer.offset_minutes, 120);
        assert_eq!(c.message, "Subject\n\nBody\n");
        assert_eq!(c.signature.as_deref(), Some("-----BEGIN PGP SIGNATURE-----\nabc\n-----END PGP SIGNATURE-----"));
        assert_eq!(c.author.git_date(), "@1700000000 -0130");
        assert!(Commit::parse("x", b"garbage").is_none());
    }

    #[test]
    fn patches_split_by_path() {
        let out = "diff --git a/a b/a\nindex 1..2 100644\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n\
diff --git a/dir/b c b/dir/b c\nnew file mode 100644\nindex 0..3\n--- /dev/null\n+++ b/dir/b c\n@@ -0,0 +1 @@\n+z\n\\ No newline at end of file\n\
diff --git a/bin b/bin\nindex 4..5 100644\nBinary files a/bin and b/bin differ\n";
        let p = parse_patches(out);
        assert_eq!(p["a"], "@@ -1 +1 @@\n-x\n+y");
        assert_eq!(p["dir/b c"], "@@ -0,0 +1 @@\n+z\n\\ No newline at end of file");
        assert!(!p.contains_key("bin"));
    }

    #[test]
    fn tags_parse() {
        let raw = b"object 1111111111111111111111111111111111111111\ntype commit\ntag v1.0\n\
tagger Ann <ann@example.com> 1700000000 +0000\n\nRelease\n-----BEGIN PGP SIGNATURE-----\nabc\n-----END PGP SIGNATURE-----\n";
        let t = Tag::parse("2222222222222222222222222222222222222222", raw).unwrap();
        assert_eq!((t.object.as_str(), t.kind.as_str(), t.name.as_str()), ("1111111111111111111111111111111111111111", "commit", "v1.0"));
        assert_eq!(t.tagger.unwrap().email, "ann@example.com");
        assert_eq!(t.message, "Release\n");
        assert_eq!(t.signature.as_deref(), Some("-----BEGIN PGP SIGNATURE-----\nabc\n-----END PGP SIGNATURE-----"));
        assert!(Tag::parse("x", b"garbage").is_none());
    }

    #[test]
    fn raw_output_parses() {
        let a = "a".repeat(40);
        let out =
            format!(":000000 100644 {ZERO} {a} A\0new file.txt\0\n:100644 000000 {a} {ZERO} D\0gone\0:160000 160000 {a} {a} M\0sub\0");
        let r = parse_raw(out.as_bytes());
        assert_eq!(r, vec![("new file.txt".into(), Some(a.clone())), ("gone".into(), None), ("sub".into(), None)]);
    }

    #[test]
    fn batch_output_parses() {
        let out = b"aaaa blob 3\nabc\nbbbb missing\ncccc tree 0\n\n";
        let b = batch(out);
        assert_eq!(b.len(), 2);
        assert_eq!((b[0].0.as_str(), b[0].1.as_str(), b[0].2), ("aaaa", "blob", &b"abc"[..]));
        assert_eq!(b[1].2, b"");
    }
}
