//! Repositories through the API: get, the three lists, create, update and delete, with the
//! activity and `repository` webhooks the hosted platform emits for them.
mod read;
pub mod shapes;
mod write;

use axum::http::Method;

use crate::operation::{Access, AuthKind, Body, Derived, Level, Operation, Param, Resp, Traits};
use crate::routes::Api;
use crate::validate::Ty;
use shapes::{FullRepository, RepositoryItem};

/// Reading repositories: metadata; private ones need `repo` from scope tokens.
const READ: Access = Access::read(&["repo"], "metadata");
/// Lists of the caller's own repositories: authentication required.
const READ_OWN: Access = Access { public: false, ..READ };
/// Creating and changing repositories: Administration.
const ADMIN: Access = Access::write(&["repo", "public_repo"], "administration");
const DELETE_ACCESS: Access = Access {
    auth: AuthKind::Token,
    public: false,
    scopes: &["delete_repo"],
    permission: Some(("administration", Level::Write)),
    role: Level::Write,
};

const SORT: Param = Param {
    name: "sort",
    ty: Ty::Enum(&["created", "updated", "pushed", "full_name"]),
    description: "The property to sort the results by.",
    required: false,
};
const DIRECTION: Param = Param {
    name: "direction",
    ty: Ty::Enum(&["asc", "desc"]),
    description: "The order to sort by. Default: `asc` when using `full_name`, otherwise `desc`.",
    required: false,
};
const PER_PAGE: Param = Param { name: "per_page", ty: Ty::Int, description: "Results per page (max 100).", required: false };
const PAGE: Param = Param { name: "page", ty: Ty::Int, description: "Page number of the results to fetch.", required: false };

pub static GET: Operation = Operation {
    id: "repos/get",
    method: Method::GET,
    path: "/repos/{owner}/{repo}",
    summary: "Get a repository",
    docs: "https://docs.service.example/rest/repos/repos#get-a-repository",
    access: READ,
    query: &[],
    body: None,
    responses: &[Resp::typed::<FullRepository>(200, "The repository, with the caller's permissions.")],
    traits: Traits::NONE,
    derived: Derived::new(),
};

pub static LIST_FOR_ORG: Operation = Operation {
    id: "repos/list-for-org",
    method: Method::GET,
    path: "/orgs/{org}/repos",
    summary: "List organization repositories",
    docs: "https://docs.service.example/rest/repos/repos#list-organization-repositories",
    access: READ,
    query: &[
        Param {
            name: "type",
            ty: Ty::Enum(&read::ORG_TYPES),
            description: "Specifies the types of repositories you want returned.",
            required: false,
        },
        Param { description: "The property to sort the results by. Default: `created`.", ..SORT },
        DIRECTION,
        PER_PAGE,
        PAGE,
    ],
    body: None,
    responses: &[Resp::typed::<Vec<RepositoryItem>>(200, "The organization's repositories the caller may see.").with_headers(&["Link"])],
    traits: Traits::NONE,
    derived: Derived::new(),
};

pub static LIST_FOR_AUTHENTICATED_USER: Operation = Operation {
    id: "repos/list-for-authenticated-user",
    method: Method::GET,
    path: "/user/repos",
    summary: "List repositories for the authenticated user",
    docs: "https://docs.service.example/rest/repos/repos#list-repositories-for-the-authenticated-user",
    access: READ_OWN,
    query: &[
        Param {
            name: "visibility",
            ty: Ty::Enum(&["all", "public", "private"]),
            description: "Limit results to repositories with the specified visibility.",
            required: false,
        },
        Param {
            name: "affiliation",
            ty: Ty::Str,
            description: "Comma-separated list of `owner`, `collaborator`, `organization_member`. Default: all three.",
            required: false,
        },
        Param {
            name: "type",
            ty: Ty::Enum(&read::USER_TYPES),
            description: "Limit results to repositories of the specified type. Cannot be used with `visibility` or `affiliation`.",
            required: false,
        },
        Param { description: "The property to sort the results by. Default: `full_name`.", ..SORT },
        DIRECTION,
        PER_PAGE,
        PAGE,
    ],
    body: None,
    responses: &[Resp::typed::<Vec<RepositoryItem>>(200, "Repositories the caller owns or reaches as a member.").with_headers(&["Link"])],
    traits: Traits::NONE,
    derived: Derived::new(),
};

pub static LIST_FOR_USER: Operation = Operation {
    id: "repos/list-for-user",
    method: Method::GET,
    path: "/users/{username}/repos",
    summary: "List repositories for a user",
    docs: "https://docs.service.example/rest/repos/repos#list-repositories-for-a-user",
    access: READ,
    query: &[
        Param {
            name: "type",
            ty: Ty::Enum(&["all", "owner", "member"]),
            description: "Limit results to repositories of the specified type.",
            required: false,
        },
        Param { description: "The property to sort the results by. Default: `full_name`.", ..SORT },
        DIRECTION,
        PER_PAGE,
        PAGE,
    ],
    body: None,
    responses: &[Resp::typed::<Vec<RepositoryItem>>(200, "The user's public repositories.").with_headers(&["Link"])],
    traits: Traits::NONE,
    derived: Derived::new(),
};

pub static CREATE_FOR_AUTHENTICATED_USER: Operation = Operation {
    id: "repos/create-for-authenticated-user",
    method: Method::POST,
    path: "/user/repos",
    summary: "Create a repository for the authenticated user",
    docs: "https://docs.service.example/rest/repos/repos#create-a-repository-for-the-authenticated-user",
    access: ADMIN,
    query: &[],
    body: Some(Body::of::<write::CreateRepo>("Repository")),
    responses: &[Resp::typed::<FullRepository>(201, "The repository was created.").with_headers(&["Location"])],
    traits: Traits::NONE,
    derived: Derived::new(),
};

pub static CREATE_IN_ORG: Operation = Operation {
    id: "repos/create-in-org",
    method: Method::POST,
    path: "/orgs/{org}/repos",
    summary: "Create an organization repository",
    docs: "https://docs.service.example/rest/repos/repos#create-an-organization-repository",
    access: ADMIN,
    query: &[],
    body: Some(Body::of::<write::CreateOrgRepo>("Repository")),
    responses: &[Resp::typed::<FullRepository>(201, "The repository was created.").with_headers(&["Location"])],
    traits: Traits::NONE,
    derived: Derived::new(),
};

pub static UPDATE: Operation = Operation {
    id: "repos/update",
    method: Method::PATCH,
    path: "/repos/{owner}/{repo}",
    summary: "Update a repository",
    docs: "https://docs.service.example/rest/repos/repos#update-a-repository",
    access: ADMIN,
    query: &[],
    body: Some(Body::of::<write::UpdateRepo>("Repository")),
    responses: &[Resp::typed::<FullRepository>(200, "The updated repository.")],
    traits: Traits::NONE,
    derived: Derived::new(),
};

pub static DELETE: Operation = Operation {
    id: "repos/delete",
    method: Method::DELETE,
    path: "/repos/{owner}/{repo}",
    summary: "Delete a repository",
    docs: "https://docs.service.example/rest/repos/repos#delete-a-repository",
    access: DELETE_ACCESS,
    query: &[],
    body: None,
    responses: &[Resp::empty(204, "The repository and everything kept of it were deleted.")],
    traits: Traits::NONE,
    derived: Derived::new(),
};

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
