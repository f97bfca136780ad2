//! Repositories through the API: get, the three lists, create, update and delete, with the
//! activity and `repository` webhooks the hosted platform emits for them.
mod read;
pub mod shapes;
mod write;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::authorize::ADMIN_RIGHTS;
use crate::operation::{Access, Level, On, Operation, Resp};
use crate::registry::Api;
use crate::request::Pagination;
use shapes::{FullRepository, RepositoryItem};

/// Reading repositories: metadata; private ones need `repo` from scope tokens.
const READ: Access = Access::read(&["repo"], "metadata");
/// Lists of the caller's own repositories: authentication required.
const READ_OWN: Access = Access { public: false, ..READ };
/// Creating and changing repositories: Administration.
const ADMIN: Access = Access::write(&["repo", "public_repo"], "administration");
const DELETE_ACCESS: Access = Access::token(&["delete_repo"], Some(("administration", Level::Write)), Level::Write);

/// `GET /orgs/{org}/repos`.
#[derive(Deserialize, JsonSchema)]
pub struct OrgReposQuery {
    /// Specifies the types of repositories you want returned.
    #[serde(rename = "type")]
    #[schemars(extend("enum" = read::ORG_TYPES))]
    kind: Option<String>,
    /// The property to sort the results by. Default: `created`.
    #[schemars(extend("enum" = read::SORTS))]
    sort: Option<String>,
    /// The order to sort by. Default: `asc` when using `full_name`, otherwise `desc`.
    #[schemars(extend("enum" = ["asc", "desc"]))]
    direction: Option<String>,
    #[serde(flatten)]
    page: Pagination,
}

/// `GET /user/repos`.
#[derive(Deserialize, JsonSchema)]
pub struct OwnReposQuery {
    /// Limit results to repositories with the specified visibility.
    #[schemars(extend("enum" = ["all", "public", "private"]))]
    visibility: Option<String>,
    /// Comma-separated list of `owner`, `collaborator`, `organization_member`. Default: all three.
    affiliation: Option<String>,
    /// Limit results to repositories of the specified type. Cannot be used with `visibility` or `affiliation`.
    #[serde(rename = "type")]
    #[schemars(extend("enum" = read::USER_TYPES))]
    kind: Option<String>,
    /// The property to sort the results by. Default: `full_name`.
    #[schemars(extend("enum" = read::SORTS))]
    sort: Option<String>,
    /// The order to sort by. Default: `asc` when using `full_name`, otherwise `desc`.
    #[schemars(extend("enum" = ["asc", "desc"]))]
    direction: Option<String>,
    #[serde(flatten)]
    page: Pagination,
}

/// `GET /users/{username}/repos`.
#[derive(Deserialize, JsonSchema)]
pub struct UserReposQuery {
    /// Limit results to repositories of the specified type.
    #[serde(rename = "type")]
    #[schemars(extend("enum" = ["all", "owner", "member"]))]
    kind: Option<String>,
    /// The property to sort the results by. Default: `full_name`.
    #[schemars(extend("enum" = read::SORTS))]
    sort: Option<String>,
    /// The order to sort by. Default: `asc` when using `full_name`, otherwise `desc`.
    #[schemars(extend("enum" = ["asc", "desc"]))]
    direction: Option<String>,
    #[serde(flatten)]
    page: Pagination,
}

pub static GET: Operation = Operation::get("repos/get", "/repos/{owner}/{repo}", "Get a repository")
    .docs("https://docs.service.example/rest/repos/repos#get-a-repository")
    .access(READ)
    .cached()
    .responds(&[Resp::typed::<FullRepository>(200, "The repository, with the caller's permissions.")]);

pub static LIST_FOR_ORG: Operation = Operation::get("repos/list-for-org", "/orgs/{org}/repos", "List organization repositories")
    .docs("https://docs.service.example/rest/repos/repos#list-organization-repositories")
    .access(READ)
    .cached()
    .responds(&[Resp::typed::<Vec<RepositoryItem>>(200, "The organization's repositories the caller may see.").with_headers(&["Link"])]);

pub static LIST_FOR_AUTHENTICATED_USER: Operation =
    Operation::get("repos/list-for-authenticated-user", "/user/repos", "List repositories for the authenticated user")
        .docs("https://docs.service.example/rest/repos/repos#list-repositories-for-the-authenticated-user")
        .access(READ_OWN)
        .cached()
        .responds(&[
            Resp::typed::<Vec<RepositoryItem>>(200, "Repositories the caller owns or reaches as a member.").with_headers(&["Link"])
        ]);

pub static LIST_FOR_USER: Operation = Operation::get("repos/list-for-user", "/users/{username}/repos", "List repositories for a user")
    .docs("https://docs.service.example/rest/repos/repos#list-repositories-for-a-user")
    .access(READ)
    .cached()
    .responds(&[Resp::typed::<Vec<RepositoryItem>>(200, "The user's public repositories.").with_headers(&["Link"])]);

pub static CREATE_FOR_AUTHENTICATED_USER: Operation =
    Operation::post("repos/create-for-authenticated-user", "/user/repos", "Create a repository for the authenticated user")
        .docs("https://docs.service.example/rest/repos/repos#create-a-repository-for-the-authenticated-user")
        .access(ADMIN)
        .resource("Repository")
        .responds(&[Resp::typed::<FullRepository>(201, "The repository was created.").with_headers(&["Location"])]);

pub static CREATE_IN_ORG: Operation = Operation::post("repos/create-in-org", "/orgs/{org}/repos", "Create an organization repository")
    .docs("https://docs.service.example/rest/repos/repos#create-an-organization-repository")
    .access(ADMIN)
    .on(On::OrgMember)
    .resource("Repository")
    .responds(&[Resp::typed::<FullRepository>(201, "The repository was created.").with_headers(&["Location"])]);

pub static UPDATE: Operation = Operation::patch("repos/update", "/repos/{owner}/{repo}", "Update a repository")
    .docs("https://docs.service.example/rest/repos/repos#update-a-repository")
    .access(ADMIN)
    .admin()
    .resource("Repository")
    .responds(&[Resp::typed::<FullRepository>(200, "The updated repository.")]);

pub static DELETE: Operation = Operation::delete("repos/delete", "/repos/{owner}/{repo}", "Delete a repository")
    .docs("https://docs.service.example/rest/repos/repos#delete-a-repository")
    .access(DELETE_ACCESS)
    .admin()
    // A scope token without `delete_repo` hears what a non-admin hears, as on the hosted platform.
    .scope_refusal(ADMIN_RIGHTS)
    .responds(&[Resp::empty(204, "The repository and everything kept of it were deleted.")]);

pub fn routes(api: Api) -> Api {
    api.op(&GET, read::get)
        .op(&LIST_FOR_ORG, read::list_for_org)
        .op(&LIST_FOR_AUTHENTICATED_USER, read::list_for_authenticated_user)
        .op(&LIST_FOR_USER, read::list_for_user)
        .op(&CREATE_FOR_AUTHENTICATED_USER, write::create_for_authenticated_user)
        .op(&CREATE_IN_ORG, write::create_in_org)
        .op(&UPDATE, write::update)
        .op(&DELETE, write::delete)
}
