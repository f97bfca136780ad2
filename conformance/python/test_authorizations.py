"""OAuth application authorizations (check, reset, delete token, delete grant).

PyGithub 2.x has no method for these: ``Github.get_oauth_application(client_id, secret)`` returns an
``ApplicationOAuth`` with only the web-flow helpers (login URL, access/refresh token exchange). They
are driven through PyGithub's own requester with basic application credentials
(``Github(auth=Auth.Login(client_id, client_secret)).requester.requestJsonAndCheck``), and the
answers are read with PyGithub's ``Authorization`` class.
"""
import secrets
from datetime import datetime

import pytest
from github import Auth, BadCredentialsException, Github, UnknownObjectException
from github.ApplicationOAuth import ApplicationOAuth
from github.Authorization import Authorization
from github.AuthorizationApplication import AuthorizationApplication

from conftest import PRIVATE_REPO, URL, admin, client

NOTE = (
    "no PyGithub method (ApplicationOAuth has only web-flow helpers); driven through "
    "Github(auth=Auth.Login(client_id, secret)).requester.requestJsonAndCheck: works"
)


@pytest.fixture
def app():
    status, body = admin("POST", "/apps", {"name": f"py-{secrets.token_hex(4)}", "owner": "conf", "kind": "oauth"})
    assert status == 201, (status, body)
    gh = Github(base_url=URL, auth=Auth.Login(body["client_id"], body["client_secret"]), retry=None)
    gh.client_id = body["client_id"]
    yield gh
    gh.close()


def user_token(client_id, login="octo"):
    status, body = admin("POST", "/tokens", {"kind": "oauth", "login": login, "client_id": client_id, "scopes": ["repo"]})
    assert status == 201, (status, body)
    return body["token"]


def token_works(token):
    """The token reads the private repository's combined status (needs a live token with `repo`)."""
    try:
        client(token, retry=None).get_repo(PRIVATE_REPO).get_commit("main").get_combined_status()
        return True
    except BadCredentialsException:
        return False


def call(app, verb, token):
    return app.requester.requestJsonAndCheck(verb, f"/applications/{app.client_id}/token", input={"access_token": token})


def test_pygithub_has_no_authorization_methods(app):
    oauth_app = app.get_oauth_application(app.client_id, "unused")
    assert isinstance(oauth_app, ApplicationOAuth)
    assert not any(hasattr(oauth_app, m) for m in ("check_token", "reset_token", "delete_token", "delete_grant"))


@pytest.mark.op("authorizations/check-token", supported=False, note=NOTE)
def test_check_token(app):
    token = user_token(app.client_id)
    headers, data = call(app, "POST", token)
    auth = Authorization(app.requester, headers, data)
    assert isinstance(auth.id, int)
    assert auth.token == token
    assert auth.scopes == ["repo"]
    assert isinstance(auth.app, AuthorizationApplication)
    assert auth.app.name and auth.app.url.startswith("http")
    assert data["app"]["client_id"] == app.client_id
    assert isinstance(auth.created_at, datetime) and isinstance(auth.updated_at, datetime)
    assert auth.url.startswith(URL)
    assert data["token_last_eight"] == token[-8:]
    assert data["user"]["login"] == "octo"
    assert "expires_at" in data and "fingerprint" in data and "hashed_token" in data


@pytest.mark.op("authorizations/check-token", supported=False, note=NOTE)
def test_check_unknown_token_is_unknown_object(app):
    with pytest.raises(UnknownObjectException) as ei:
        call(app, "POST", "svo_" + "x" * 36)
    assert ei.value.status == 404


@pytest.mark.op("authorizations/check-token", supported=False, note=NOTE)
def test_wrong_application_secret_is_bad_credentials(app):
    token = user_token(app.client_id)
    wrong = Github(base_url=URL, auth=Auth.Login(app.client_id, "0" * 40), retry=None)
    with pytest.raises(BadCredentialsException) as ei:
        wrong.requester.requestJsonAndCheck(
            "POST", f"/applications/{app.client_id}/token", input={"access_token": token}
        )
    assert ei.value.status == 401


@pytest.mark.op("authorizations/reset-token", supported=False, note=NOTE)
def test_reset_token(app):
    old = user_token(app.client_id)
    headers, data = call(app, "PATCH", old)
    new = Authorization(app.requester, headers, data).token
    assert new and new != old
    assert data["token_last_eight"] == new[-8:]
    assert token_works(new)
    assert not token_works(old)
    assert call(app, "POST", new)[1]["token"] == new
    with pytest.raises(UnknownObjectException):
        call(app, "POST", old)


@pytest.mark.op("authorizations/delete-token", supported=False, note=NOTE)
def test_delete_token(app):
    token = user_token(app.client_id)
    other = user_token(app.client_id)
    headers, data = call(app, "DELETE", token)
    assert data is None  # 204, no body
    with pytest.raises(UnknownObjectException):
        call(app, "POST", token)
    assert not token_works(token)
    assert token_works(other)  # only that token


@pytest.mark.op("authorizations/delete-grant", supported=False, note=NOTE)
def test_delete_grant(app):
    first = user_token(app.client_id)
    second = user_token(app.client_id)
    stranger = user_token(app.client_id, login="stranger")
    headers, data = app.requester.requestJsonAndCheck(
        "DELETE", f"/applications/{app.client_id}/grant", input={"access_token": first}
    )
    assert data is None  # 204, no body
    for token in (first, second):  # every token of the app for that user
        with pytest.raises(UnknownObjectException):
            call(app, "POST", token)
        assert not token_works(token)
    assert call(app, "POST", stranger)[1]["user"]["login"] == "stranger"
