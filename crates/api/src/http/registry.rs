//! Route registration: each declared [`Operation`] is wired exactly once, to its handler behind
//! the contract's part for routed requests (`contract::declared`), which enforces the
//! declaration before the handler runs.
use axum::extract::{Request, State};
use axum::routing::MethodFilter;
use axum::Router;

use crate::operation::{On, Operation};
use crate::request::Handler;
use crate::state::Shared;

pub struct Api {
    /// The routes so far (the application adds the contract and the fallbacks).
    pub router: Router<Shared>,
    /// Every registered operation, in registration order.
    pub ops: Vec<&'static Operation>,
}

impl Api {
    pub fn new() -> Api {
        Api { router: Router::new(), ops: Vec::new() }
    }

    /// Wires `op` to `handler`. The handler's query and body types must be the declared ones,
    /// and a path naming a repository must be authorized as one: a mismatch stops the server at
    /// startup (and every test), not a request.
    pub fn op<H, A>(mut self, op: &'static Operation, handler: H) -> Api
    where
        H: Handler<A>,
        A: Send + 'static,
    {
        assert!(H::takes().fits(op), "{}: the handler's query or body type is not the declared one", op.id);
        let names_repo = On::of_path(op.path) == On::Repo;
        assert!(!names_repo || op.on.names_repo(), "{}: the path names a repository the declaration does not authorize", op.id);
        let filter = MethodFilter::try_from(op.method.http()).expect("operation method");
        let route = axum::routing::on(filter, move |State(app): State<Shared>, req: Request| {
            crate::contract::declared::serve(app, op, req, handler.clone())
        });
        self.router = self.router.route(op.path, route);
        self.ops.push(op);
        self
    }
}

impl Default for Api {
    fn default() -> Self {
        Api::new()
    }
}
