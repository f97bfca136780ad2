//! `platformd`: the platform REST API server. `platformd --help` lists the commands, and
//! `platformd serve --help` every setting with its `PLATFORM_*` variable and default.
// mimalloc: the request path allocates many small objects; glibc malloc was a quarter of CPU.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use platformd::cli::{self, Commands, Refused};
use platformd::server;

fn main() {
    let cli = match cli::parse(std::env::args_os()) {
        Ok(c) => c,
        Err(Refused::Usage(e)) => e.exit(),
        Err(Refused::Config(e)) => {
            eprintln!("platformd: configuration: {e}");
            std::process::exit(2);
        }
    };
    let config = cli.settings().config.clone();
    let _log_guard = server::init_logging(&config);
    // Blocking work (git, name lookups) runs on a bounded pool: waiting requests queue as tasks
    // instead of each holding a thread. The stores have their own fixed database threads.
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().max_blocking_threads(64).build().expect("tokio runtime");
    let result = rt.block_on(async {
        match &cli.command {
            Commands::Serve { seeding, .. } => server::serve(config, seeding).await,
            Commands::Migrate { .. } => server::migrate(config).await,
            Commands::Seed { file, tokens_out, .. } => server::seed_only(config, file, tokens_out.as_deref()).await,
        }
    });
    if let Err(e) = result {
        drop(_log_guard); // flush the logs: exit() skips destructors
        eprintln!("platformd: {e}");
        std::process::exit(1);
    }
}
