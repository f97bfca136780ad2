//! The command line: `serve`, `migrate` and `seed`, each taking every setting of [`Config`].
//! A setting's value comes from, lowest first: its declared default, the TOML file
//! (`--config FILE` or `PLATFORM_CONFIG`), its `PLATFORM_*` variable, its flag. The file's values
//! become the settings' defaults for one more parse, so they go through the same parsers.
use std::ffi::OsString;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::config::Config;

/// Where a setting's value comes from, in `--help`.
const PRECEDENCE: &str = "Each setting is read from, lowest first: its default, the TOML file (keys are the flags' names with \
                          `_`, e.g. `listen = \"0.0.0.0:8080\"`; unknown keys are refused), its PLATFORM_* variable (empty is \
                          unset), its flag.";

#[derive(Debug, Parser)]
#[command(name = "platformd", about = "The platform REST API server", after_help = PRECEDENCE)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Commands,
}

#[derive(Debug, Subcommand)]
pub enum Commands {
    /// Migrates, optionally seeds (printing credentials), prints `listening on http://ADDR`, serves until SIGTERM/SIGINT (graceful)
    Serve {
        #[command(flatten)]
        seeding: Seeding,
        #[command(flatten)]
        settings: Settings,
    },
    /// Applies pending migrations and exits
    Migrate {
        #[command(flatten)]
        settings: Settings,
    },
    /// Loads a seed file into the configured database
    Seed {
        /// The seed file (TOML)
        #[arg(value_name = "FILE")]
        file: String,
        /// Also write `{name: token}` JSON of the tokens created to this file
        #[arg(long, value_name = "FILE")]
        tokens_out: Option<String>,
        #[command(flatten)]
        settings: Settings,
    },
}

/// What `serve` loads before it listens.
#[derive(Debug, clap::Args)]
pub struct Seeding {
    /// Seed the database from this file before serving
    #[arg(long, value_name = "FILE")]
    pub seed: Option<String>,
    /// Seed the demo world (`demo/seed.toml`) unless `--seed` is given
    #[arg(long)]
    pub demo: bool,
    /// Also write `{name: token}` JSON of the tokens created to this file
    #[arg(long, value_name = "FILE")]
    pub tokens_out: Option<String>,
}

#[derive(Debug, clap::Args)]
#[command(after_help = PRECEDENCE)]
pub struct Settings {
    /// A TOML file of settings
    #[arg(long = "config", env = "PLATFORM_CONFIG", value_name = "FILE")]
    pub config_file: Option<String>,
    #[command(flatten)]
    pub config: Config,
}

/// Why the command line was not taken.
#[derive(Debug)]
pub enum Refused {
    /// Usage, `--help` and values refused by a setting's parser: clap prints them.
    Usage(clap::Error),
    /// The file, or a rule between settings (`Config::validate`).
    Config(String),
}

impl Cli {
    /// The settings of the command given.
    pub fn settings(&self) -> &Settings {
        match &self.command {
            Commands::Serve { settings, .. } | Commands::Migrate { settings } | Commands::Seed { settings, .. } => settings,
        }
    }
}

/// The command line and settings from `argv` (program name first) and the process environment.
pub fn parse(argv: impl IntoIterator<Item = OsString>) -> Result<Cli, Refused> {
    let argv: Vec<OsString> = argv.into_iter().collect();
    let cmd = without_empty_variables(Cli::command());
    let first = cmd.clone().try_get_matches_from(&argv).map_err(Refused::Usage)?;
    let (name, matches) = first.subcommand().expect("clap requires a subcommand");
    let cli = match matches.get_one::<String>("config_file") {
        None => Cli::from_arg_matches(&first).map_err(Refused::Usage)?,
        Some(path) => {
            let cmd = file_defaults(cmd, name, path)?;
            // Only a file's value can fail now: flags and variables were taken above.
            let m = cmd.try_get_matches_from(&argv).map_err(|e| Refused::Config(format!("{path}: {}", e.render().to_string().trim())))?;
            Cli::from_arg_matches(&m).map_err(Refused::Usage)?
        }
    };
    cli.settings().config.validate().map_err(Refused::Config)?;
    Ok(cli)
}

/// An empty `PLATFORM_*` variable counts as unset, as it always has; except the webhook
/// allow-list, where empty means "none" (and overrides `serve --demo`'s `loopback`).
fn without_empty_variables(cmd: clap::Command) -> clap::Command {
    cmd.mut_subcommands(|sub| {
        sub.mut_args(|a| {
            let empty =
                a.get_env().is_some_and(|v| v != "PLATFORM_WEBHOOK_ALLOWED_HOSTS" && std::env::var_os(v).is_some_and(|v| v.is_empty()));
            if empty {
                a.env(None::<&str>)
            } else {
                a
            }
        })
    })
}

/// The command with the file's values as the defaults of subcommand `name`'s settings. Keys
/// are the settings' names; any other key is refused.
fn file_defaults(mut cmd: clap::Command, name: &str, path: &str) -> Result<clap::Command, Refused> {
    let text = std::fs::read_to_string(path).map_err(|e| Refused::Config(format!("{path}: {e}")))?;
    let table: toml::Table = toml::from_str(&text).map_err(|e| Refused::Config(format!("{path}: {e}")))?;
    let settings = Config::command();
    for (key, value) in table {
        if settings.get_arguments().all(|a| a.get_id() != key.as_str()) {
            return Err(Refused::Config(format!("{path}: unknown field `{key}` (the settings are listed by `platformd serve --help`)")));
        }
        let text = match value {
            toml::Value::String(s) => s,
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            other => return Err(Refused::Config(format!("{path}: {key}: expected a string, number or boolean, got {}", other.type_str()))),
        };
        cmd = cmd.mut_subcommand(name, |sub| sub.mut_arg(&key, |a| a.default_value(text)));
    }
    Ok(cmd)
}

#[cfg(test)]
mod tests {
    use super::*;
    use platform_api::forwarded::TrustedProxies;
    use platform_api::secrets::AtRestKey;

    use crate::config::ClockKind;

    /// `f` with `vars` set in the environment (one test at a time: the environment is the process's).
    fn with_env<T>(vars: &[(&str, &str)], f: impl FnOnce() -> T) -> T {
        static ENV: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _one = ENV.lock().unwrap_or_else(|e| e.into_inner());
        vars.iter().for_each(|(k, v)| std::env::set_var(k, v));
        let out = f();
        vars.iter().for_each(|(k, _)| std::env::remove_var(k));
        out
    }

    /// The settings of `platformd serve ARGS` with `vars` in the environment.
    fn serve(args: &[&str], vars: &[(&str, &str)]) -> Result<Config, String> {
        let argv = ["platformd", "serve"].iter().chain(args).map(OsString::from);
        with_env(vars, || parse(argv)).map(|c| c.settings().config.clone()).map_err(|e| match e {
            Refused::Usage(e) => e.render().to_string(),
            Refused::Config(e) => e,
        })
    }

    fn file(name: &str, text: &str) -> String {
        let path = std::env::temp_dir().join(format!("platformd-{name}-{}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    }

    #[test]
    fn env_overrides_and_redaction() {
        let vars = [
            ("PLATFORM_LISTEN", "127.0.0.1:0"),
            ("PLATFORM_RATE_LIMITS", "off"),
            ("PLATFORM_ADMIN_TOKEN", "s3cret"),
            ("PLATFORM_DATABASE_URL", "postgres://u:pw@h/db"),
            ("PLATFORM_REDIS_URL", "redis://u:redispw@h:6379"),
        ];
        let c = serve(&[], &vars).unwrap();
        assert_eq!(c.listen, "127.0.0.1:0");
        assert!(!c.limits.rate_limits);
        let dbg = format!("{c:?}");
        assert!(!dbg.contains("s3cret") && !dbg.contains("pw@") && dbg.contains("u:<redacted>@h/db"), "{dbg}");
        let e = serve(&[], &[("PLATFORM_CLOCK", "fast")]).unwrap_err();
        assert!(e.contains("PLATFORM_CLOCK: expected system or manual, got \"fast\""), "{e}");
        let e = serve(&[], &[("PLATFORM_MAX_BODY_BYTES", "lots")]).unwrap_err();
        assert!(e.contains("PLATFORM_MAX_BODY_BYTES: not a number: \"lots\""), "{e}");
        let e = serve(&[], &[("PLATFORM_INSIGHTS", "maybe")]).unwrap_err();
        assert!(e.contains("PLATFORM_INSIGHTS: expected on/off, got \"maybe\""), "{e}");
    }

    #[test]
    fn secret_key_from_env_or_file() {
        let hex_key = "07".repeat(32);
        let c = serve(&[], &[("PLATFORM_SECRET_KEY", &hex_key)]).unwrap();
        assert_eq!(c.at_rest_key(), AtRestKey::External([7; 32]));
        assert!(!format!("{c:?}").contains(&hex_key));
        let path = file("key", &format!("{}\n", base64::Engine::encode(&base64::engine::general_purpose::STANDARD, [9u8; 32])));
        let c = serve(&[], &[("PLATFORM_SECRET_KEY_FILE", &path)]).unwrap();
        assert_eq!(c.at_rest_key(), AtRestKey::External([9; 32]));
        let c = serve(&[], &[("PLATFORM_SECRET_KEY_FILE", &path), ("PLATFORM_SECRET_KEY", &hex_key)]).unwrap();
        assert_eq!(c.at_rest_key(), AtRestKey::External([7; 32]), "the key itself wins over its file");
        std::fs::remove_file(&path).unwrap();
        let e = serve(&[], &[("PLATFORM_SECRET_KEY", "short")]).unwrap_err();
        assert!(e.contains("PLATFORM_SECRET_KEY: the secret key must be 32 bytes") && !e.contains("short"), "the value is not echoed: {e}");
        assert!(serve(&[], &[("PLATFORM_SECRET_KEY_FILE", "/nonexistent/key")]).is_err());
        assert_eq!(serve(&[], &[]).unwrap().at_rest_key(), AtRestKey::InDatabase);
    }

    #[test]
    fn defaults_then_file_then_environment_then_flags() {
        let path = file(
            "config.toml",
            "listen = \"127.0.0.1:1\"\nrate_limit_factor = 0.5\ntrusted_proxies = \"10.0.0.0/8\"\nmax_body_bytes = 10\nclock = \"manual\"\n",
        );
        let c = serve(&["--config", &path], &[]).unwrap();
        assert_eq!(
            (c.listen.as_str(), c.limits.rate_limit_factor, c.trusted_proxies.clone(), c.limits.max_body_bytes),
            ("127.0.0.1:1", 0.5, Some(TrustedProxies::parse("10.0.0.0/8").unwrap()), 10)
        );
        assert_eq!((c.clock, c.log.as_str()), (ClockKind::Manual, "info"), "unset in the file: the default");
        let c = serve(
            &["--max-body-bytes", "30"],
            &[("PLATFORM_CONFIG", &path), ("PLATFORM_LISTEN", "127.0.0.1:2"), ("PLATFORM_MAX_BODY_BYTES", "20")],
        )
        .unwrap();
        assert_eq!((c.listen.as_str(), c.limits.max_body_bytes, c.limits.rate_limit_factor), ("127.0.0.1:2", 30, 0.5));
        std::fs::remove_file(&path).unwrap();

        let path = file("unknown.toml", "listen = \"127.0.0.1:1\"\nlisten_address = \"x\"\n");
        let e = serve(&["--config", &path], &[]).unwrap_err();
        assert!(e.starts_with(&format!("{path}: unknown field `listen_address`")), "{e}");
        std::fs::remove_file(&path).unwrap();
        let path = file("bad.toml", "max_body_bytes = \"lots\"\n");
        let e = serve(&["--config", &path], &[]).unwrap_err();
        assert!(e.starts_with(&format!("{path}: ")) && e.contains("PLATFORM_MAX_BODY_BYTES: not a number"), "{e}");
        std::fs::remove_file(&path).unwrap();
        assert!(serve(&["--config", "/nonexistent/platformd.toml"], &[]).is_err());
    }

    #[test]
    fn empty_variables_are_unset_but_an_empty_allow_list_is_kept() {
        let c = serve(&[], &[("PLATFORM_LISTEN", ""), ("PLATFORM_MAX_BODY_BYTES", ""), ("PLATFORM_WEBHOOK_ALLOWED_HOSTS", "")]).unwrap();
        assert_eq!((c.listen.as_str(), c.limits.max_body_bytes), ("127.0.0.1:8080", 1 << 20));
        assert_eq!(c.webhooks.allowed_hosts.as_deref(), Some(""), "empty overrides `serve --demo`'s loopback");
        assert_eq!(serve(&[], &[]).unwrap().webhooks.allowed_hosts, None);
    }

    #[test]
    fn commands_and_their_arguments() {
        let cli =
            parse(["platformd", "seed", "demo.toml", "--tokens-out", "t.json", "--listen", "127.0.0.1:0"].map(OsString::from)).unwrap();
        match &cli.command {
            Commands::Seed { file, tokens_out, settings } => {
                assert_eq!(
                    (file.as_str(), tokens_out.as_deref(), settings.config.listen.as_str()),
                    ("demo.toml", Some("t.json"), "127.0.0.1:0")
                )
            }
            other => panic!("{other:?}"),
        }
        let cli = parse(["platformd", "serve", "--demo"].map(OsString::from)).unwrap();
        assert!(matches!(cli.command, Commands::Serve { seeding: Seeding { demo: true, seed: None, .. }, .. }));
        assert!(matches!(parse(["platformd", "bake"].map(OsString::from)), Err(Refused::Usage(_))));
        assert!(matches!(parse(["platformd", "serve", "--help"].map(OsString::from)), Err(Refused::Usage(_))));
    }

    #[test]
    fn default_is_the_declared_defaults_whatever_the_environment() {
        let c = with_env(&[("PLATFORM_LISTEN", "127.0.0.1:9"), ("PLATFORM_RATE_LIMITS", "off")], Config::default);
        assert_eq!((c.listen.as_str(), c.limits.rate_limits), ("127.0.0.1:8080", true));
        let api = c.api_config(String::new(), String::new());
        assert_eq!(format!("{:?}", api.limits.secondary), format!("{:?}", platform_api::secondary::SecondarySettings::default()));
    }
}
