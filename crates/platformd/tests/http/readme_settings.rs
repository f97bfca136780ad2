//! The README's settings table against the settings' declaration (`platformd::config::Config`),
//! so a setting added, renamed or given another default or help is documented in the same
//! change. After an intended change: `UPDATE_README=1 cargo nextest run -p platformd readme_settings`.
use platformd::config::Config;

const README: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md");
const HEADER: &str = "| variable | default | meaning |";

/// One row per setting, in declaration order: its variable, its default (clap's, or the
/// `[default: …]` its help ends with) and its help.
fn table() -> String {
    let mut out = format!("{HEADER}\n|---|---|---|\n");
    for arg in Config::command().get_arguments() {
        let env = arg.get_env().expect("every setting has a PLATFORM_* variable").to_string_lossy().into_owned();
        let help = arg.get_help().expect("every setting has help").to_string();
        let defaults: Vec<String> = arg.get_default_values().iter().map(|v| format!("`{}`", v.to_string_lossy())).collect();
        let (meaning, default) = match help.strip_suffix(']').and_then(|h| h.rsplit_once(" [default: ")) {
            Some((meaning, default)) => (meaning.to_string(), default.to_string()),
            None => (help.clone(), defaults.join(", ")),
        };
        assert!(!default.is_empty(), "{env}: a default, or help ending with `[default: …]` saying what happens unset");
        out += &format!("| `{env}` | {default} | {meaning} |\n");
    }
    out
}

#[test]
fn readme_settings_table_matches_the_declaration() {
    let readme = std::fs::read_to_string(README).expect("README.md");
    let start = readme.find(HEADER).expect("README.md has the settings table");
    let end = readme[start..].find("\n\n").map_or(readme.len(), |n| start + n + 1);
    let expected = table();
    if std::env::var_os("UPDATE_README").is_some() {
        std::fs::write(README, format!("{}{expected}{}", &readme[..start], &readme[end..])).unwrap();
        return;
    }
    assert!(
        readme[start..end] == expected,
        "README.md's settings table differs from the declaration in crates/platformd/src/config.rs; run with UPDATE_README=1 to rewrite it.\n\
         expected:\n{expected}"
    );
}

#[test]
fn every_setting_is_named_alike_everywhere() {
    // Flag `--foo-bar`, variable `PLATFORM_FOO_BAR`, file key `foo_bar` (the argument's id).
    for arg in Config::command().get_arguments() {
        let id = arg.get_id().as_str();
        assert_eq!(arg.get_long(), Some(id.replace('_', "-").as_str()));
        assert_eq!(arg.get_env().map(|e| e.to_string_lossy().into_owned()), Some(format!("PLATFORM_{}", id.to_uppercase())));
    }
}
