//! Route registration: each declared [`Operation`] is wired exactly once, to its handler behind
//! the contract's part for routed requests (`contract::declared`), which enforces the
//! declaration before the handler runs. The query and body types come from the handler's
//! signature ([`Handler::takes`]): registration works out their rules ([`InputRules`]), which the
//! contract checks and the OpenAPI document publishes.
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::routing::MethodFilter;
use axum::Router;

use crate::operation::{On, Operation};
use crate::request::{Handler, InputRules};
use crate::state::Shared;

/// A registered operation: its declaration and what its handler takes.
#[derive(Clone)]
pub struct Registered {
    pub op: &'static Operation,
    pub input: Arc<InputRules>,
}

pub struct Api {
    /// The routes so far (the application adds the contract and the fallbacks).
    pub router: Router<Shared>,
    /// Every registered operation, in registration order.
    pub ops: Vec<Registered>,
}

impl Api {
    pub fn new() -> Api {
        Api { router: Router::new(), ops: Vec::new() }
    }

    /// Wires `op` to `handler`. A handler taking a body needs the declared `resource` its
    /// validation errors name (and one taking none, none), and a path naming a repository must
    /// be authorized as one: a mismatch stops the server at startup (and every test), not a
    /// request.
    pub fn op<H, A>(mut self, op: &'static Operation, handler: H) -> Api
    where
        H: Handler<A>,
        A: Send + 'static,
    {
        let takes = H::takes();
        assert!(takes.body.is_some() == op.resource.is_some(), "{}: declare `.resource(…)` exactly when the handler takes a body", op.id);
        let names_repo = On::of_path(op.path) == On::Repo;
        assert!(!names_repo || op.on.names_repo(), "{}: the path names a repository the declaration does not authorize", op.id);
        let input = Arc::new(InputRules::of(takes, op.resource));
        let filter = MethodFilter::try_from(op.method.http()).expect("operation method");
        let rules = input.clone();
        let route = axum::routing::on(filter, move |State(app): State<Shared>, req: Request| {
            crate::contract::declared::serve(app, op, rules.clone(), req, handler.clone())
        });
        self.router = self.router.route(op.path, route);
        self.ops.push(Registered { op, input });
        self
    }
}

impl Default for Api {
    fn default() -> Self {
        Api::new()
    }
}
