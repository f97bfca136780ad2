//! Route registration: each declared [`Operation`] is wired exactly once, with a layer that
//! tags requests and responses with it (for auth headers, error docs, metrics, OpenAPI).
use axum::handler::Handler;
use axum::response::Response;
use axum::routing::MethodFilter;
use axum::Router;
use tower::util::MapResponseLayer;

use crate::operation::Operation;
use crate::request::OpRef;
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

    pub fn op<H, T>(mut self, op: &'static Operation, handler: H) -> Api
    where
        H: Handler<T, Shared>,
        T: 'static,
    {
        let filter = MethodFilter::try_from(op.method.clone()).expect("operation method");
        // The operation travels with the request (for `Ctx`) and back with the response (for the
        // contract layer). Plain combinators: a `from_fn` layer boxes a future on every request.
        let route: axum::routing::MethodRouter<Shared> =
            axum::routing::on(filter, handler).layer(MapResponseLayer::new(move |mut resp: Response| {
                resp.extensions_mut().insert(OpRef(op));
                resp
            }));
        let route = route.layer(axum::Extension(OpRef(op)));
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
