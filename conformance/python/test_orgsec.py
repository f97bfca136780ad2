"""Enterprise team memberships, development-environment secrets, private registries and assistant
content exclusion through PyGithub.

PyGithub has no methods for these operations (its secret helpers only know the `actions` and
`dependabot` paths), so they are driven through the client's own requester
(``requestJsonAndCheck``), which still maps our errors to its exception types. Secret values are
sealed with PyNaCl, an independent libsodium binding, and the stored value is checked through the
control plane: the round trip proves the server opens real ``crypto_box_seal`` boxes.
"""
import base64

import pytest
from github import GithubException, UnknownObjectException
from nacl import encoding, public

from conftest import admin, client

REQUESTER = "no PyGithub method; driven through Github(...).requester.requestJsonAndCheck: works"
ENT = "/enterprises/conf-ent"
TEAM = f"{ENT}/teams/ent:conformance/memberships"
DEVENV = "/repos/conf/public-repo/devenvs/secrets"
REGISTRIES = "/orgs/conf/private-registries"
EXCLUSION = "/orgs/conf/assistant/content_exclusion"


@pytest.fixture
def req():
    gh = client("owner")
    yield gh.requester
    gh.close()


def seal(key_b64, value):
    box = public.SealedBox(public.PublicKey(key_b64.encode(), encoding.Base64Encoder))
    return base64.b64encode(box.encrypt(value.encode())).decode()


# ---------------------------------------------------------------- enterprise teams


@pytest.mark.op("enterprise-team-members/add", supported=False, note=REQUESTER)
@pytest.mark.op("enterprise-team-members/get", supported=False, note=REQUESTER)
@pytest.mark.op("enterprise-team-members/remove", supported=False, note=REQUESTER)
@pytest.mark.op("enterprise-team-members/list", supported=False, note=REQUESTER)
def test_enterprise_team_membership_round_trip(req):
    _, user = req.requestJsonAndCheck("PUT", f"{TEAM}/member")
    assert user["login"] == "member"
    _, user = req.requestJsonAndCheck("GET", f"{TEAM}/member")
    assert user["type"] == "User"
    _, users = req.requestJsonAndCheck("GET", TEAM)
    assert "member" in [u["login"] for u in users]
    req.requestJsonAndCheck("DELETE", f"{TEAM}/member")
    with pytest.raises(UnknownObjectException):
        req.requestJsonAndCheck("GET", f"{TEAM}/member")


@pytest.mark.op("enterprise-team-members/bulk-add", supported=False, note=REQUESTER)
@pytest.mark.op("enterprise-team-members/bulk-remove", supported=False, note=REQUESTER)
def test_enterprise_team_bulk(req):
    _, added = req.requestJsonAndCheck("POST", f"{TEAM}/add", input={"usernames": ["member", "octo"]})
    assert sorted(u["login"] for u in added) == ["member", "octo"]
    with pytest.raises(GithubException) as e:
        req.requestJsonAndCheck("POST", f"{TEAM}/add", input={"usernames": ["stranger"]})
    assert e.value.status == 422
    _, removed = req.requestJsonAndCheck("POST", f"{TEAM}/remove", input={"usernames": ["member"]})
    assert [u["login"] for u in removed] == ["member"]


@pytest.mark.op("enterprise-teams/list-for-user", supported=False, note=REQUESTER)
def test_enterprise_teams_for_user(req):
    _, teams = req.requestJsonAndCheck("GET", f"{ENT}/members/octo/teams")
    assert "ent:conformance" in [t["slug"] for t in teams]
    stranger = client("stranger").requester
    with pytest.raises(UnknownObjectException):
        stranger.requestJsonAndCheck("GET", f"{ENT}/members/octo/teams")


# ---------------------------------------------------------------- devenv secrets


@pytest.mark.op("devenv-secrets/get-public-key", supported=False, note=REQUESTER)
@pytest.mark.op("devenv-secrets/create-or-update", supported=False, note=REQUESTER + "; values sealed with PyNaCl")
@pytest.mark.op("devenv-secrets/get", supported=False, note=REQUESTER)
@pytest.mark.op("devenv-secrets/list", supported=False, note=REQUESTER)
@pytest.mark.op("devenv-secrets/delete", supported=False, note=REQUESTER)
def test_devenv_secret_sealed_with_pynacl_round_trips(req):
    _, key = req.requestJsonAndCheck("GET", f"{DEVENV}/public-key")
    body = {"encrypted_value": seal(key["key"], "py-s3cret"), "key_id": key["key_id"]}
    req.requestJsonAndCheck("PUT", f"{DEVENV}/PY_SECRET", input=body)
    status, check = admin("POST", "/repos/conf/public-repo/devenvs/secrets/PY_SECRET/verify", {"value": "py-s3cret"})
    assert (status, check) == (200, {"matches": True})
    _, meta = req.requestJsonAndCheck("GET", f"{DEVENV}/py_secret")
    assert meta["name"] == "PY_SECRET" and "py-s3cret" not in str(meta)
    _, listing = req.requestJsonAndCheck("GET", DEVENV)
    assert "PY_SECRET" in [s["name"] for s in listing["secrets"]] and listing["total_count"] >= 1
    # Replacing answers 204; the new value is stored.
    body = {"encrypted_value": seal(key["key"], "py-other"), "key_id": key["key_id"]}
    req.requestJsonAndCheck("PUT", f"{DEVENV}/PY_SECRET", input=body)
    assert admin("POST", "/repos/conf/public-repo/devenvs/secrets/PY_SECRET/verify", {"value": "py-other"})[1] == {"matches": True}
    req.requestJsonAndCheck("DELETE", f"{DEVENV}/PY_SECRET")
    with pytest.raises(UnknownObjectException):
        req.requestJsonAndCheck("GET", f"{DEVENV}/PY_SECRET")


@pytest.mark.op("devenv-secrets/create-or-update", supported=False, note=REQUESTER + "; values sealed with PyNaCl")
def test_devenv_secret_tampered_box_is_refused(req):
    _, key = req.requestJsonAndCheck("GET", f"{DEVENV}/public-key")
    raw = bytearray(base64.b64decode(seal(key["key"], "value")))
    raw[-1] ^= 1
    for value in (base64.b64encode(bytes(raw)).decode(), base64.b64encode(b"plaintext").decode()):
        with pytest.raises(GithubException) as e:
            req.requestJsonAndCheck("PUT", f"{DEVENV}/PY_BAD", input={"encrypted_value": value, "key_id": key["key_id"]})
        assert e.value.status == 422
        assert "could not be decrypted" in e.value.data["errors"][0]["message"]


# ---------------------------------------------------------------- private registries


@pytest.mark.op("private-registries/get-public-key", supported=False, note=REQUESTER)
@pytest.mark.op("private-registries/create", supported=False, note=REQUESTER + "; values sealed with PyNaCl")
@pytest.mark.op("private-registries/get", supported=False, note=REQUESTER)
@pytest.mark.op("private-registries/list", supported=False, note=REQUESTER)
@pytest.mark.op("private-registries/update", supported=False, note=REQUESTER)
@pytest.mark.op("private-registries/delete", supported=False, note=REQUESTER)
def test_private_registry_lifecycle(req):
    _, key = req.requestJsonAndCheck("GET", f"{REGISTRIES}/public-key")
    body = {"registry_type": "python_index", "url": "https://pypi.example.com/simple", "visibility": "private",
            "username": "ci", "auth_type": "username_password",
            "encrypted_value": seal(key["key"], "pw"), "key_id": key["key_id"]}
    _, created = req.requestJsonAndCheck("POST", REGISTRIES, input=body)
    name = created["name"]
    assert created["auth_type"] == "username_password" and created["selected_repository_ids"] == []
    _, got = req.requestJsonAndCheck("GET", f"{REGISTRIES}/{name}")
    assert got["username"] == "ci" and "encrypted_value" not in got
    _, listing = req.requestJsonAndCheck("GET", REGISTRIES)
    assert name in [c["name"] for c in listing["configurations"]]
    req.requestJsonAndCheck("PATCH", f"{REGISTRIES}/{name}", input={"replaces_base": True})
    assert req.requestJsonAndCheck("GET", f"{REGISTRIES}/{name}")[1]["replaces_base"] is True
    with pytest.raises(GithubException) as e:
        req.requestJsonAndCheck("PATCH", f"{REGISTRIES}/{name}", input={"auth_type": "token"})
    assert e.value.status == 422
    req.requestJsonAndCheck("DELETE", f"{REGISTRIES}/{name}")
    with pytest.raises(UnknownObjectException):
        req.requestJsonAndCheck("GET", f"{REGISTRIES}/{name}")


# ---------------------------------------------------------------- assistant content exclusion


@pytest.mark.op("assistant-exclusions/set", supported=False, note=REQUESTER)
@pytest.mark.op("assistant-exclusions/get", supported=False, note=REQUESTER)
def test_content_exclusion_set_and_get(req):
    _, out = req.requestJsonAndCheck("PUT", EXCLUSION, input={"public-repo": ["/secrets/**"], "*": ["*.key"]})
    assert isinstance(out["message"], str)
    _, rules = req.requestJsonAndCheck("GET", EXCLUSION)
    rules.pop("url", None)  # PyGithub stamps the request URL into object responses
    assert rules == {"public-repo": ["/secrets/**"], "*": ["*.key"]}
    with pytest.raises(GithubException) as e:
        req.requestJsonAndCheck("PUT", EXCLUSION, input={"public-repo": "/not/an/array"})
    assert e.value.status == 422
