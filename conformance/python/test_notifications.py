"""Notifications through PyGithub: AuthenticatedUser.get_notifications(), Notification objects
(mark_as_read, mark_as_done, get_thread), subscriptions through the requester where PyGithub has
no method."""
import secrets
from datetime import datetime, timezone

import pytest
from github.Notification import Notification

from conftest import PUBLIC_REPO, admin, client


def user_with_threads(n):
    login = "py-" + secrets.token_hex(4)
    assert admin("POST", "/users", {"login": login})[0] == 201
    status, tok = admin("POST", "/tokens", {"kind": "classic", "login": login, "scopes": ["notifications"]})
    assert status == 201
    ids = []
    for i in range(n):
        status, t = admin("POST", "/notifications", {"login": login, "repo": PUBLIC_REPO, "reason": "mention" if i % 2 else "subscribed",
                                                     "subject": {"title": f"issue {i}", "type": "Issue"}})
        assert status == 201, t
        ids.append(t["id"])
    return client(tok["token"]), ids


@pytest.mark.op("notifications/list")
def test_get_notifications_paginates_and_filters():
    gh, ids = user_with_threads(5)
    user = gh.get_user()
    notes = list(user.get_notifications())
    assert len(notes) == 5
    n = notes[0]
    assert isinstance(n, Notification)
    assert n.id in ids
    assert n.unread is True
    assert n.reason in ("mention", "subscribed")
    assert n.subject.type == "Issue"
    assert n.repository.full_name == PUBLIC_REPO
    assert isinstance(n.updated_at, datetime) and n.updated_at.tzinfo == timezone.utc
    assert len(list(user.get_notifications(participating=True))) == 2
    gh.per_page = 2
    assert len(list(gh.get_user().get_notifications(all=True))) == 5


@pytest.mark.op("notifications/mark-thread-read")
@pytest.mark.op("notifications/get-thread")
def test_mark_as_read_and_get_thread():
    gh, ids = user_with_threads(1)
    n = gh.get_user().get_notification(ids[0])
    assert n.unread is True
    n.mark_as_read()
    assert gh.get_user().get_notification(ids[0]).unread is False


@pytest.mark.op("notifications/mark-thread-done")
def test_mark_as_done():
    gh, ids = user_with_threads(1)
    n = gh.get_user().get_notification(ids[0])
    if not hasattr(n, "mark_as_done"):
        pytest.skip("PyGithub has no Notification.mark_as_done")
    n.mark_as_done()
    assert list(gh.get_user().get_notifications(all=True)) == []


@pytest.mark.op("notifications/mark-read")
def test_mark_notifications_as_read():
    gh, _ = user_with_threads(3)
    gh.get_user().mark_notifications_as_read()
    assert list(gh.get_user().get_notifications()) == []


@pytest.mark.op("notifications/get-thread-subscription", supported=False, note="through PyGithub's requester")
@pytest.mark.op("notifications/set-thread-subscription", supported=False, note="through PyGithub's requester")
@pytest.mark.op("notifications/delete-thread-subscription", supported=False, note="through PyGithub's requester")
def test_thread_subscription_through_requester():
    gh, ids = user_with_threads(1)
    req = gh.requester
    path = f"/notifications/threads/{ids[0]}/subscription"
    _, data = req.requestJsonAndCheck("GET", path)
    assert data["subscribed"] is True
    _, data = req.requestJsonAndCheck("PUT", path, input={"ignored": True})
    assert data["ignored"] is True
    status, _, _ = req.requestJson("DELETE", path)
    assert status == 204
