"""Signals the accounts app listens to: logins, logouts and changes to a person's access."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.contrib.auth.signals import user_logged_in, user_logged_out
from django.db.models.signals import m2m_changed, post_delete, post_save, pre_save

from opsboard.accounts import sessions
from opsboard.accounts.models import NamespaceGrant


def connect() -> None:
    uid = "opsboard-accounts-"
    user_logged_in.connect(sessions.session_started, dispatch_uid=uid + "login")
    user_logged_out.connect(sessions.session_ended, dispatch_uid=uid + "logout")
    pre_save.connect(sessions.user_saving, sender=User, dispatch_uid=uid + "user-saving")
    post_save.connect(sessions.user_saved, sender=User, dispatch_uid=uid + "user-saved")
    m2m_changed.connect(
        sessions.groups_changed, sender=User.groups.through, dispatch_uid=uid + "groups"
    )
    post_save.connect(sessions.grant_changed, sender=NamespaceGrant, dispatch_uid=uid + "g+")
    post_delete.connect(sessions.grant_changed, sender=NamespaceGrant, dispatch_uid=uid + "g-")
