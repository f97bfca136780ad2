//! `platformd`: the platform REST API server.
//!
//! `platformd serve [--config FILE] [--seed FILE | --demo] [--tokens-out FILE]`
//! `platformd migrate [--config FILE]`
//! `platformd seed FILE [--config FILE] [--tokens-out FILE]`
// mimalloc: the request path allocates many small objects; glibc malloc was a quarter of CPU.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod config;
mod server;

use config::Config;

const USAGE: &str = "usage:
  platformd serve [--config FILE] [--seed FILE | --demo] [--tokens-out FILE]
  platformd migrate [--config FILE]
  platformd seed FILE [--config FILE] [--tokens-out FILE]
Configuration: a TOML file and PLATFORM_* environment variables (see README).";

pub struct Args {
    pub command: String,
    pub config: Option<String>,
    pub seed: Option<String>,
    pub demo: bool,
    pub tokens_out: Option<String>,
}

fn parse_args(mut it: impl Iterator<Item = String>) -> Result<Args, String> {
    let command = it.next().ok_or("missing command")?;
    let mut a = Args { command, config: None, seed: None, demo: false, tokens_out: None };
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--config" => a.config = Some(it.next().ok_or("--config needs a file")?),
            "--seed" => a.seed = Some(it.next().ok_or("--seed needs a file")?),
            "--tokens-out" => a.tokens_out = Some(it.next().ok_or("--tokens-out needs a file")?),
            "--demo" => a.demo = true,
            "-h" | "--help" => return Err(String::new()),
            f if a.command == "seed" && a.seed.is_none() && !f.starts_with('-') => a.seed = Some(f.into()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(a)
}

fn main() {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("platformd: {e}");
            }
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    };
    let config = match Config::load(args.config.as_deref(), |k| std::env::var(k).ok()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("platformd: configuration: {e}");
            std::process::exit(2);
        }
    };
    let _log_guard = server::init_logging(&config);
    // Blocking work (git, name lookups) runs on a bounded pool: waiting requests queue as tasks
    // instead of each holding a thread. The stores have their own fixed database threads.
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().max_blocking_threads(64).build().expect("tokio runtime");
    let result = rt.block_on(async {
        match args.command.as_str() {
            "serve" => server::serve(config, &args).await,
            "migrate" => server::migrate(config).await,
            "seed" if args.seed.is_some() => server::seed_only(config, &args).await,
            _ => Err(format!("unknown command {:?}\n{USAGE}", args.command)),
        }
    });
    if let Err(e) = result {
        drop(_log_guard); // flush the logs: exit() skips destructors
        eprintln!("platformd: {e}");
        std::process::exit(1);
    }
}
