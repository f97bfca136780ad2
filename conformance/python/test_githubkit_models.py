"""Responses parsed with githubkit's own pydantic models (PyPI `githubkit`), for both API versions
it ships: a typed client that rejects a missing or mistyped field rejects our response here.

Each request names its API version (`X-Service-Api-Version`) and is parsed with that version's
models. The models are the ones githubkit's methods use for these operations: `FullRepository`
(get and create), `Repository` (the authenticated user's list), `MinimalRepository` (organization
and user lists). githubkit has no enterprise-team operations; its `EnterpriseTeam` model (the
official schema of that shape) is what the single team is parsed with.
"""
import json
import secrets
import urllib.request

import pytest
from githubkit_schemas.v2022_11_28 import models as v2022
from githubkit_schemas.v2026_03_10 import models as v2026
from pydantic import TypeAdapter

from conftest import PUBLIC_REPO, TOKENS, URL

VERSIONS = [("2022-11-28", v2022), ("2026-03-10", v2026)]


def get(path, version, token="owner", method="GET", body=None):
    req = urllib.request.Request(
        f"{URL}{path}",
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={
            "Authorization": f"Bearer {TOKENS[token]}",
            "Accept": "application/json",
            "X-Service-Api-Version": version,
            "Content-Type": "application/json",
            "User-Agent": "conformance-githubkit",
        },
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def parse(model, data):
    return TypeAdapter(model).validate_python(data)


@pytest.mark.parametrize("version,models", VERSIONS, ids=[v for v, _ in VERSIONS])
def test_full_repository(version, models):
    repo = parse(models.FullRepository, get(f"/repos/{PUBLIC_REPO}", version))
    assert repo.full_name == PUBLIC_REPO
    assert repo.license_ is None


@pytest.mark.parametrize("version,models", VERSIONS, ids=[v for v, _ in VERSIONS])
def test_new_empty_repository(version, models):
    """A repository created without a commit: `pushed_at` is its creation time, as hosted."""
    name = f"gk-{secrets.token_hex(4)}"
    created = parse(models.FullRepository, get("/orgs/conf/repos", version, method="POST", body={"name": name}))
    assert created.pushed_at is not None
    again = parse(models.FullRepository, get(f"/repos/conf/{name}", version))
    assert again.pushed_at == created.pushed_at


@pytest.mark.parametrize("version,models", VERSIONS, ids=[v for v, _ in VERSIONS])
def test_repository_lists(version, models):
    mine = parse(list[models.Repository], get("/user/repos?per_page=100", version))
    assert mine and all(r.license_ is None for r in mine)
    org = parse(list[models.MinimalRepository], get("/orgs/conf/repos?per_page=100", version))
    assert PUBLIC_REPO in [r.full_name for r in org]
    theirs = parse(list[models.MinimalRepository], get("/users/octo/repos", version))
    assert isinstance(theirs, list)


@pytest.mark.parametrize("version,models", VERSIONS, ids=[v for v, _ in VERSIONS])
def test_enterprise_team(version, models):
    data = get("/enterprises/conf-ent/teams/ent:conformance", version)
    team = parse(models.EnterpriseTeam, data)
    assert team.name == "Conformance"
    # Not in githubkit's model (which keeps it as an extra field): the hosted single team has it.
    assert data["members_count"] == 1
    teams = parse(list[models.EnterpriseTeam], get("/enterprises/conf-ent/teams", version))
    assert "ent:conformance" in [t.slug for t in teams]
