//! Organization private registries: every operation, one test per validation rule of document 2
//! and api-facts §5.6/5.7, sealed values, and the permission matrix.
use reqwest::Method;
use serde_json::{json, Value};

use crate::both;
use crate::harness::*;
use crate::schema_check::assert_conforms_to_snapshot;

const BASE: &str = "/orgs/acme/private-registries";

/// Everything a test needs: alice's `admin:org` token, the key, repositories' ids.
struct W {
    t: String,
    key_id: String,
    key: String,
    widgets: i64,
    foreign: i64,
}

/// alice owns acme (repositories widgets and tools), bob is a member; carol owns carol/own.
async fn world(s: &Server) -> W {
    for u in ["alice", "bob", "carol"] {
        s.user(u).await;
    }
    s.admin_post("/orgs", json!({"login": "acme", "owners": ["alice"], "members": ["bob"]})).await;
    let widgets = s.repo("acme", "widgets", false).await["id"].as_i64().unwrap();
    s.repo("acme", "tools", true).await;
    let foreign = s.repo("carol", "own", false).await["id"].as_i64().unwrap();
    let t = s.classic("alice", &["admin:org"]).await;
    let (st, _, b) = call(s, Method::GET, &format!("{BASE}/public-key"), Some(&t), None).await;
    assert_eq!(st, 200, "{b}");
    assert_conforms_to_snapshot("PublicKey", &b);
    W { t, key_id: b["key_id"].as_str().unwrap().into(), key: b["key"].as_str().unwrap().into(), widgets, foreign }
}

impl W {
    fn sealed(&self, plain: &str) -> String {
        platform_api::secrets::seal_for(&self.key, plain.as_bytes()).unwrap()
    }
    /// A valid token-kind create body.
    fn token_body(&self) -> Value {
        json!({"registry_type": "maven_repository", "url": "https://maven.example.com/repo", "visibility": "private",
               "encrypted_value": self.sealed("tok"), "key_id": self.key_id})
    }
}

fn with(mut base: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().unwrap() {
        base[k] = v.clone();
    }
    base
}

fn without(mut base: Value, keys: &[&str]) -> Value {
    for k in keys {
        base.as_object_mut().unwrap().remove(*k);
    }
    base
}

/// A create refused with 422 naming `field` (or an `Invalid request.` message when `field` is
/// empty); nothing is created.
async fn refused(s: &Server, w: &W, body: Value, field: &str) {
    let (st, h, b) = call(s, Method::POST, BASE, Some(&w.t), Some(body)).await;
    assert_eq!(st, 422, "{b}");
    assert_eq!(header(&h, "content-type"), "application/json; charset=utf-8");
    if field.is_empty() {
        assert!(b["message"].as_str().unwrap().starts_with("Invalid request."), "{b}");
    } else {
        assert_eq!(b["message"], "Validation Failed", "{b}");
        assert_eq!(b["errors"][0]["field"], field, "{b}");
    }
    let (_, _, list) = call(s, Method::GET, BASE, Some(&w.t), None).await;
    assert_eq!(list["total_count"], 0, "nothing created");
}

/// An update of the created `name` refused with 422 on `field`; the configuration unchanged.
async fn update_refused(s: &Server, w: &W, name: &str, body: Value, field: &str) {
    let (_, _, before) = call(s, Method::GET, &format!("{BASE}/{name}"), Some(&w.t), None).await;
    let (st, _, b) = call(s, Method::PATCH, &format!("{BASE}/{name}"), Some(&w.t), Some(body)).await;
    assert_eq!((st, b["errors"][0]["field"].as_str()), (422, Some(field)), "{b}");
    let (_, _, after) = call(s, Method::GET, &format!("{BASE}/{name}"), Some(&w.t), None).await;
    assert_eq!(before, after);
}

async fn create(s: &Server, w: &W, body: Value) -> Value {
    let (st, _, b) = call(s, Method::POST, BASE, Some(&w.t), Some(body)).await;
    assert_eq!(st, 201, "{b}");
    assert_conforms_to_snapshot("RegistryConfig", &b);
    b
}

// ---------------------------------------------------------------------------------------------
// Operations.

both!(create_get_list_update_delete, |s| {
    let w = world(&s).await;
    let b = create(&s, &w, w.token_body()).await;
    assert_eq!(b["name"], "MAVEN_REPOSITORY_SECRET");
    assert_eq!(b["registry_type"], "maven_repository");
    assert_eq!(b["auth_type"], "token");
    assert_eq!(b["visibility"], "private");
    assert_eq!(b["replaces_base"], false);
    assert_eq!(b["selected_repository_ids"], json!([]));
    assert!(b.get("username").is_none(), "no username: left out of the create response");
    assert!(is_ts(&b["created_at"]) && is_ts(&b["updated_at"]));
    assert!(b.get("encrypted_value").is_none() && !b.to_string().contains(&w.key_id));
    // A second of the same type gets its own name.
    let b2 = create(&s, &w, with(w.token_body(), json!({"username": "deploy"}))).await;
    assert_eq!(b2["name"], "MAVEN_REPOSITORY_SECRET_2");
    assert_eq!(b2["username"], "deploy");
    // Get and list: username null when none, no selected ids unless `selected`.
    let (st, _, g) = call(&s, Method::GET, &format!("{BASE}/maven_repository_secret"), Some(&w.t), None).await;
    assert_eq!(st, 200);
    assert_conforms_to_snapshot("RegistryConfig", &g);
    assert_eq!(g["username"], Value::Null);
    assert!(g.get("selected_repository_ids").is_none());
    let (st, h, l) = call(&s, Method::GET, &format!("{BASE}?per_page=1"), Some(&w.t), None).await;
    assert_eq!(st, 200);
    assert_eq!(l["total_count"], 2);
    assert_eq!(l["configurations"][0]["name"], "MAVEN_REPOSITORY_SECRET");
    assert_conforms_to_snapshot("RegistryConfigList", &l);
    assert!(header(&h, "link").contains("rel=\"next\""));
    // Update: 204, fields replaced, selected repositories managed here.
    s.advance(5).await;
    let (st, _, b) = call(&s, Method::PATCH, &format!("{BASE}/MAVEN_REPOSITORY_SECRET"), Some(&w.t),
        Some(json!({"url": "https://mirror.example.com/", "replaces_base": true, "visibility": "selected", "selected_repository_ids": [w.widgets]}))).await;
    assert_eq!((st, b), (204, Value::Null));
    let (_, _, g2) = call(&s, Method::GET, &format!("{BASE}/MAVEN_REPOSITORY_SECRET"), Some(&w.t), None).await;
    assert_eq!(g2["url"], "https://mirror.example.com/");
    assert_eq!(g2["replaces_base"], true);
    assert_eq!(g2["selected_repository_ids"], json!([w.widgets]));
    assert_conforms_to_snapshot("RegistryConfig", &g2);
    assert_eq!(g2["created_at"], g["created_at"]);
    assert_ne!(g2["updated_at"], g["updated_at"]);
    // Leaving `selected` clears the ids; a new sealed value is accepted.
    let (st, _, _) = call(
        &s,
        Method::PATCH,
        &format!("{BASE}/MAVEN_REPOSITORY_SECRET"),
        Some(&w.t),
        Some(json!({"visibility": "all", "encrypted_value": w.sealed("new"), "key_id": w.key_id})),
    )
    .await;
    assert_eq!(st, 204);
    let (_, _, g3) = call(&s, Method::GET, &format!("{BASE}/MAVEN_REPOSITORY_SECRET"), Some(&w.t), None).await;
    assert!(g3.get("selected_repository_ids").is_none());
    // Delete: 204, then 404; a name no configuration can have: 400.
    assert_eq!(call(&s, Method::DELETE, &format!("{BASE}/MAVEN_REPOSITORY_SECRET"), Some(&w.t), None).await.0, 204);
    let (st, h, b) = call(&s, Method::GET, &format!("{BASE}/MAVEN_REPOSITORY_SECRET"), Some(&w.t), None).await;
    assert_error(st, &h, &b, 404, "Not Found");
    assert_eq!(call(&s, Method::DELETE, &format!("{BASE}/MAVEN_REPOSITORY_SECRET"), Some(&w.t), None).await.0, 404);
    let (st, h, b) = call(&s, Method::DELETE, &format!("{BASE}/bad-name!"), Some(&w.t), None).await;
    assert_error(st, &h, &b, 400, "Bad Request");
    assert_eq!(call(&s, Method::PATCH, &format!("{BASE}/NOPE"), Some(&w.t), Some(json!({}))).await.0, 404);
    // A bad page parameter on the list: 400.
    let (st, h, b) = call(&s, Method::GET, &format!("{BASE}?page=x"), Some(&w.t), None).await;
    assert_eq!((st, header(&h, "content-type")), (400, "application/json; charset=utf-8"), "{b}");
});

both!(every_oidc_kind_is_created_without_a_secret, |s| {
    let w = world(&s).await;
    let kinds = [
        ("oidc_cloud_a", json!({"tenant_id": "t", "client_id": "c"})),
        (
            "oidc_cloud_b",
            json!({"cloud_b_region": "eu-1", "account_id": "1", "role_name": "r", "domain": "d", "domain_owner": "2", "audience": "a"}),
        ),
        ("oidc_artifact_a", json!({"artifact_a_oidc_provider_name": "p", "identity_mapping_name": "m"})),
        ("oidc_artifact_b", json!({"namespace": "n", "service_slug": "s", "audience": "a", "api_host": "https://h.example"})),
        ("oidc_cloud_c", json!({"workload_identity_provider": "projects/1/locations/global/workloadIdentityPools/p/providers/q"})),
    ];
    for (auth, fields) in kinds {
        let body = with(
            json!({"registry_type": "docker_registry", "url": "https://r.example", "visibility": "all", "auth_type": auth}),
            fields.clone(),
        );
        let b = create(&s, &w, body).await;
        assert_eq!(b["auth_type"], auth);
        for (k, v) in fields.as_object().unwrap() {
            assert_eq!(&b[k], v, "{auth}: {k}");
        }
        let (_, _, g) = call(&s, Method::GET, &format!("{BASE}/{}", b["name"].as_str().unwrap()), Some(&w.t), None).await;
        assert_eq!(g["auth_type"], auth);
        assert_conforms_to_snapshot("RegistryConfig", &g);
    }
    let (_, _, l) = call(&s, Method::GET, BASE, Some(&w.t), None).await;
    assert_eq!(l["total_count"], 5);
});

both!(username_password_kind, |s| {
    let w = world(&s).await;
    let b =
        create(&s, &w, with(w.token_body(), json!({"auth_type": "username_password", "username": "u", "registry_type": "npm_registry"})))
            .await;
    assert_eq!((b["auth_type"].as_str(), b["username"].as_str()), (Some("username_password"), Some("u")));
});

// An update's `username`: absent keeps it, null clears it (the token kind needs none).
both!(update_username_null_clears_absent_keeps, |s| {
    let w = world(&s).await;
    let b = create(&s, &w, with(w.token_body(), json!({"username": "u"}))).await;
    let path = format!("{BASE}/{}", b["name"].as_str().unwrap());
    let username = |b: Value| b["username"].clone();
    assert_eq!(call(&s, Method::PATCH, &path, Some(&w.t), Some(json!({"replaces_base": true}))).await.0, 204);
    assert_eq!(username(call(&s, Method::GET, &path, Some(&w.t), None).await.2), json!("u"));
    assert_eq!(call(&s, Method::PATCH, &path, Some(&w.t), Some(json!({"username": null}))).await.0, 204);
    assert_eq!(username(call(&s, Method::GET, &path, Some(&w.t), None).await.2), json!(null));
});

// ---------------------------------------------------------------------------------------------
// One test per validation rule.

both!(rule_registry_type_required, |s| {
    let w = world(&s).await;
    refused(&s, &w, without(w.token_body(), &["registry_type"]), "").await;
});

both!(rule_registry_type_enum, |s| {
    let w = world(&s).await;
    refused(&s, &w, with(w.token_body(), json!({"registry_type": "apt_repository"})), "registry_type").await;
});

both!(rule_url_required, |s| {
    let w = world(&s).await;
    refused(&s, &w, without(w.token_body(), &["url"]), "").await;
});

both!(rule_url_is_an_http_url, |s| {
    let w = world(&s).await;
    refused(&s, &w, with(w.token_body(), json!({"url": "not a url"})), "url").await;
    refused(&s, &w, with(w.token_body(), json!({"url": "ftp://files.example.com"})), "url").await;
});

both!(rule_visibility_required, |s| {
    let w = world(&s).await;
    refused(&s, &w, without(w.token_body(), &["visibility"]), "").await;
});

both!(rule_visibility_enum, |s| {
    let w = world(&s).await;
    refused(&s, &w, with(w.token_body(), json!({"visibility": "internal"})), "visibility").await;
});

both!(rule_auth_type_enum, |s| {
    let w = world(&s).await;
    refused(&s, &w, with(w.token_body(), json!({"auth_type": "oidc_unknown"})), "auth_type").await;
});

both!(rule_token_needs_encrypted_value, |s| {
    let w = world(&s).await;
    refused(&s, &w, without(w.token_body(), &["encrypted_value"]), "encrypted_value").await;
    refused(&s, &w, without(w.token_body(), &["encrypted_value", "key_id"]), "encrypted_value").await;
});

both!(rule_token_needs_key_id, |s| {
    let w = world(&s).await;
    refused(&s, &w, without(w.token_body(), &["key_id"]), "key_id").await;
});

both!(rule_username_password_needs_username, |s| {
    let w = world(&s).await;
    refused(&s, &w, with(w.token_body(), json!({"auth_type": "username_password"})), "username").await;
    refused(&s, &w, without(with(w.token_body(), json!({"auth_type": "username_password", "username": "u"})), &["key_id"]), "key_id").await;
});

both!(rule_oidc_kinds_take_no_secret, |s| {
    let w = world(&s).await;
    let oidc = with(w.token_body(), json!({"auth_type": "oidc_cloud_a", "tenant_id": "t", "client_id": "c"}));
    refused(&s, &w, oidc.clone(), "encrypted_value").await;
    refused(&s, &w, without(oidc, &["encrypted_value"]), "key_id").await;
});

fn oidc(kind: &str, fields: Value) -> Value {
    with(json!({"registry_type": "docker_registry", "url": "https://r.example", "visibility": "all", "auth_type": kind}), fields)
}

both!(rule_oidc_cloud_a_required_fields, |s| {
    let w = world(&s).await;
    refused(&s, &w, oidc("oidc_cloud_a", json!({"client_id": "c"})), "tenant_id").await;
    refused(&s, &w, oidc("oidc_cloud_a", json!({"tenant_id": "t"})), "client_id").await;
});

both!(rule_oidc_cloud_b_required_fields, |s| {
    let w = world(&s).await;
    let full = json!({"cloud_b_region": "r", "account_id": "1", "role_name": "n", "domain": "d", "domain_owner": "2"});
    for f in ["cloud_b_region", "account_id", "role_name", "domain", "domain_owner"] {
        refused(&s, &w, without(oidc("oidc_cloud_b", full.clone()), &[f]), f).await;
    }
});

both!(rule_oidc_artifact_a_required_fields, |s| {
    let w = world(&s).await;
    refused(&s, &w, oidc("oidc_artifact_a", json!({"audience": "a"})), "artifact_a_oidc_provider_name").await;
});

both!(rule_oidc_artifact_b_required_fields, |s| {
    let w = world(&s).await;
    let full = json!({"namespace": "n", "service_slug": "s", "audience": "a"});
    for f in ["namespace", "service_slug", "audience"] {
        refused(&s, &w, without(oidc("oidc_artifact_b", full.clone()), &[f]), f).await;
    }
});

both!(rule_oidc_cloud_c_required_fields, |s| {
    let w = world(&s).await;
    refused(&s, &w, oidc("oidc_cloud_c", json!({"service_account": "sa"})), "workload_identity_provider").await;
});

both!(rule_fields_of_another_auth_type_are_refused, |s| {
    let w = world(&s).await;
    refused(&s, &w, with(w.token_body(), json!({"tenant_id": "t"})), "tenant_id").await;
    refused(&s, &w, oidc("oidc_cloud_a", json!({"tenant_id": "t", "client_id": "c", "audience": "a"})), "audience").await;
});

both!(rule_selected_repository_ids_only_with_selected, |s| {
    let w = world(&s).await;
    refused(&s, &w, with(w.token_body(), json!({"selected_repository_ids": [w.widgets]})), "selected_repository_ids").await;
    refused(&s, &w, with(w.token_body(), json!({"visibility": "all", "selected_repository_ids": []})), "selected_repository_ids").await;
    let b = create(&s, &w, with(w.token_body(), json!({"visibility": "selected", "selected_repository_ids": [w.widgets]}))).await;
    assert_eq!(b["selected_repository_ids"], json!([w.widgets]));
});

both!(rule_selected_repositories_belong_to_the_org, |s| {
    let w = world(&s).await;
    refused(
        &s,
        &w,
        with(w.token_body(), json!({"visibility": "selected", "selected_repository_ids": [w.foreign]})),
        "selected_repository_ids",
    )
    .await;
    refused(
        &s,
        &w,
        with(w.token_body(), json!({"visibility": "selected", "selected_repository_ids": [987654321]})),
        "selected_repository_ids",
    )
    .await;
});

both!(rule_sealed_value_must_open_with_the_current_key, |s| {
    let w = world(&s).await;
    refused(&s, &w, with(w.token_body(), json!({"encrypted_value": "%%%"})), "encrypted_value").await;
    refused(&s, &w, with(w.token_body(), json!({"key_id": "1"})), "key_id").await;
    refused(&s, &w, with(w.token_body(), json!({"encrypted_value": "cGxhaW4gdGV4dA=="})), "encrypted_value").await;
});

both!(rule_auth_type_cannot_change_on_update, |s| {
    let w = world(&s).await;
    let b = create(&s, &w, w.token_body()).await;
    let name = b["name"].as_str().unwrap();
    update_refused(&s, &w, name, json!({"auth_type": "username_password", "username": "u"}), "auth_type").await;
    // Sending the same auth type is fine.
    assert_eq!(call(&s, Method::PATCH, &format!("{BASE}/{name}"), Some(&w.t), Some(json!({"auth_type": "token"}))).await.0, 204);
});

both!(rule_update_keeps_the_rules, |s| {
    let w = world(&s).await;
    let b = create(&s, &w, w.token_body()).await;
    let name = b["name"].as_str().unwrap();
    update_refused(&s, &w, name, json!({"selected_repository_ids": [w.widgets]}), "selected_repository_ids").await;
    update_refused(&s, &w, name, json!({"encrypted_value": w.sealed("x")}), "key_id").await;
    update_refused(&s, &w, name, json!({"key_id": w.key_id}), "encrypted_value").await;
    update_refused(&s, &w, name, json!({"tenant_id": "t"}), "tenant_id").await;
    update_refused(&s, &w, name, json!({"url": "nope"}), "url").await;
    let (st, _, b) = call(&s, Method::PATCH, &format!("{BASE}/{name}"), Some(&w.t), Some(json!({"visibility": "everyone"}))).await;
    assert_eq!((st, b["errors"][0]["field"].as_str()), (422, Some("visibility")));
});

// ---------------------------------------------------------------------------------------------
// Access.

both!(permissions, |s| {
    let w = world(&s).await;
    create(&s, &w, w.token_body()).await;
    let (_, h, _) = call(&s, Method::GET, BASE, Some(&w.t), None).await;
    assert_eq!(header(&h, "x-accepted-oauth-scopes"), "admin:org");
    assert_eq!(header(&h, "x-accepted-service-permissions"), "organization_private_registries=read");
    // Members and outsiders: 404; unknown organizations: 404; no credentials: 401.
    let bob = s.classic("bob", &["admin:org"]).await;
    for p in [BASE.to_string(), format!("{BASE}/public-key"), format!("{BASE}/MAVEN_REPOSITORY_SECRET")] {
        let (st, h, b) = call(&s, Method::GET, &p, Some(&bob), None).await;
        assert_error(st, &h, &b, 404, "Not Found");
    }
    assert_eq!(call(&s, Method::POST, BASE, Some(&bob), Some(w.token_body())).await.0, 404);
    assert_eq!(call(&s, Method::GET, "/orgs/nope/private-registries", Some(&w.t), None).await.0, 404);
    let (st, h, b) = call(&s, Method::GET, BASE, None, None).await;
    assert_error(st, &h, &b, 401, "Requires authentication");
    // Classic tokens need admin:org.
    let hook = s.classic("alice", &["admin:org_hook", "repo"]).await;
    let (st, h, b) = call(&s, Method::GET, BASE, Some(&hook), None).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by personal access token");
    // Fine-grained: read lists, write changes.
    let fg_read = s.token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme", "permissions": {"organization_private_registries": "read"}})).await;
    assert_eq!(call(&s, Method::GET, BASE, Some(&fg_read), None).await.0, 200);
    assert_eq!(call(&s, Method::GET, &format!("{BASE}/public-key"), Some(&fg_read), None).await.0, 200);
    let (st, h, b) = call(&s, Method::DELETE, &format!("{BASE}/MAVEN_REPOSITORY_SECRET"), Some(&fg_read), None).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by personal access token");
    let fg_write = s.token(json!({"kind": "fine_grained", "login": "alice", "resource_owner": "acme", "permissions": {"organization_private_registries": "write"}})).await;
    assert_eq!(call(&s, Method::DELETE, &format!("{BASE}/MAVEN_REPOSITORY_SECRET"), Some(&fg_write), None).await.0, 204);
    // Installation tokens act for their organization with the permission.
    let app = s.admin_post("/apps", json!({"name": "CI", "owner": "acme", "kind": "app"})).await;
    s.admin_post(&format!("/apps/{}/installations", app["client_id"].as_str().unwrap()), json!({"org": "acme"})).await;
    let inst = s
        .token(json!({"kind": "installation", "app": "CI", "org": "acme", "permissions": {"organization_private_registries": "read"}}))
        .await;
    assert_eq!(call(&s, Method::GET, BASE, Some(&inst), None).await.0, 200);
    let (st, h, b) = call(&s, Method::POST, BASE, Some(&inst), Some(w.token_body())).await;
    assert_error(st, &h, &b, 403, "Resource not accessible by integration");
});
