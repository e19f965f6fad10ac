"""All settings come from the environment (see the table in README.md).

Bad values stop start-up with one line naming the variable (opsboard.env).
"""

from __future__ import annotations

import os
import secrets
import tempfile
import warnings
from datetime import timedelta
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from opsboard.accounts.group_roles import parse_group_roles, parse_role_groups
from opsboard.env import env_bool, env_float, env_int, env_list, env_secret, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
STATE_DIR = Path(env_str("OPSBOARD_STATE_DIR", str(BASE_DIR / ".opsboard"))).resolve()

DEBUG = env_bool("OPSBOARD_DEBUG", False)
# Behind TLS (directly or through an ingress): secure cookies, HSTS, redirect to https.
HTTPS = env_bool("OPSBOARD_HTTPS", False)


# In a pod, local fallbacks would be wrong: each replica would make its own key and database.
IN_POD = bool(env_str("KUBERNETES_SERVICE_HOST"))


def _secret_key() -> str:
    key = env_secret("OPSBOARD_SECRET_KEY")
    if key:
        return key
    if IN_POD:
        raise ImproperlyConfigured(
            "OPSBOARD_SECRET_KEY (or _FILE) must be set when running in a pod"
        )
    if not env_str("DATABASE_URL", "sqlite:").startswith("sqlite:"):
        # A server database is shared by hosts; each would generate a key of its own, and a
        # session signed on one would be logged out (and its CSRF refused) on the next.
        raise ImproperlyConfigured(
            "OPSBOARD_SECRET_KEY (or _FILE) must be set with a server database "
            "(DATABASE_URL): every host that shares it must sign with the same key"
        )
    # Local runs keep one generated key under the state dir so sessions survive restarts.
    path = STATE_DIR / "secret_key"
    try:
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(secrets.token_urlsafe(50))
            path.chmod(0o600)
        return path.read_text().strip()
    except OSError as exc:
        raise ImproperlyConfigured(
            f"OPSBOARD_SECRET_KEY is not set and {path} cannot be written: {exc.strerror}"
        ) from None


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env_list("OPSBOARD_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("OPSBOARD_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "axes",
    "opsboard.core",
    "opsboard.mirror",
    "opsboard.engine",
    "opsboard.audit",
    "opsboard.accounts",
    "opsboard.dashboard",
    "opsboard.diagnosis",
]

MIDDLEWARE = [
    "opsboard.core.middleware.ProbeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "opsboard.core.content_policy.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "opsboard.accounts.permissions.NamespaceScopeMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "opsboard.accounts.htmx_login.HtmxLoginRedirectMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes requires
]

ROOT_URLCONF = "opsboard.urls"
WSGI_APPLICATION = "opsboard.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "opsboard.accounts.views.login_options",
            ],
        },
    },
]


def _database() -> dict[str, Any]:
    if IN_POD and not env_str("DATABASE_URL"):
        raise ImproperlyConfigured("DATABASE_URL must be set when running in a pod")
    url = env_str("DATABASE_URL") or f"sqlite:///{STATE_DIR / 'opsboard.sqlite3'}"
    try:
        db: dict[str, Any] = dict(
            dj_database_url.parse(url, conn_max_age=60, conn_health_checks=True)
        )
    except (ValueError, KeyError) as exc:
        raise ImproperlyConfigured(f"DATABASE_URL is malformed: {exc}") from None
    if not db.get("ENGINE") or not db.get("NAME"):
        raise ImproperlyConfigured(f"DATABASE_URL={url!r} names no database")
    if db["ENGINE"] == "django.db.backends.sqlite3":
        # WAL lets the web, the workers and the watcher read while one of them writes;
        # IMMEDIATE transactions avoid "database is locked" on lock upgrades.
        db["ENGINE"] = "opsboard.sqlite"  # Django's, placeholders converted once (see there)
        db["CONN_MAX_AGE"] = 0
        db["OPTIONS"] = {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        }
        # A file, not memory, so that Celery worker processes started by the tests share it.
        # One per test run (the pid), so parallel runs on one machine never share it.
        test_db = Path(tempfile.gettempdir()) / f"opsboard-test-{os.getpid()}.sqlite3"
        db["TEST"] = {"NAME": env_str("OPSBOARD_TEST_SQLITE_FILE") or str(test_db)}
    elif db["ENGINE"] == "django.db.backends.postgresql":
        # Parameters sent apart from the SQL, not quoted into it by psycopg in Python: that
        # quoting (of every mirrored body) was the hottest frame of the watcher on PostgreSQL.
        # `?server_side_binding=false` in DATABASE_URL turns it off.
        db.setdefault("OPTIONS", {}).setdefault("server_side_binding", True)
    return db


DATABASES = {"default": _database()}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"


def _redis_url() -> str:
    url = env_str("REDIS_URL")
    if url:
        if not url.startswith(("redis://", "rediss://", "unix://")):
            raise ImproperlyConfigured(f"REDIS_URL={url!r} must start with redis://, rediss://")
        return url
    # Written by the embedded redis-server that `make run` starts (opsboard.embedded.redis).
    embedded = STATE_DIR / "redis" / "url"
    return embedded.read_text().strip() if embedded.exists() else "redis://127.0.0.1:6379/0"


REDIS_URL = _redis_url()

# The cluster: KUBECONFIG, else in-cluster config, else the embedded kubesim's kubeconfig.
KUBECONFIG_IN_CLUSTER = IN_POD and not env_str("KUBECONFIG")
KUBECONFIG = env_str("KUBECONFIG") or (
    "" if KUBECONFIG_IN_CLUSTER else str(STATE_DIR / "kubeconfig")
)
# The kubeconfig's context to manage, as kubectl's --context; empty: its current-context.
KUBE_CONTEXT = env_str("OPSBOARD_KUBE_CONTEXT", "")
# What every page calls the cluster; empty: the context's name ("in-cluster" in a pod).
CLUSTER_NAME = env_str("OPSBOARD_CLUSTER_NAME", "")
KUBE_REQUEST_TIMEOUT = env_float("OPSBOARD_KUBE_TIMEOUT", 10.0, minimum=0.1)
WATCH_NAMESPACES = env_list("OPSBOARD_WATCH_NAMESPACES", [])  # empty: all namespaces
# The web's calls for a person carry Impersonate-User/-Group, so the cluster's RBAC decides
# (its ServiceAccount then needs `impersonate`: the k8s/overlays/impersonate overlay).
OPSBOARD_KUBE_IMPERSONATE = env_bool("OPSBOARD_KUBE_IMPERSONATE", False)
OPSBOARD_KUBE_IMPERSONATE_PREFIX = env_str("OPSBOARD_KUBE_IMPERSONATE_PREFIX", "")
OPSBOARD_KUBE_ROLE_GROUPS = parse_role_groups(env_str("OPSBOARD_KUBE_ROLE_GROUPS"))

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"

# Throttled password logins (django-axes): after this many failures for one username, or
# from one address, password logins for it are refused until the lockout expires. Refused
# attempts do not extend it, so the time the refusal names is the time it ends. Single
# sign-on is not throttled (opsboard.accounts.password_throttle).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: refuses locked-out password logins
    "opsboard.accounts.local_login.LocalPasswordBackend",  # refuses all with local login off
]
AXES_ENABLED = env_bool("OPSBOARD_LOGIN_THROTTLE", True)
AXES_FAILURE_LIMIT = env_int("OPSBOARD_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(seconds=env_int("OPSBOARD_LOGIN_LOCKOUT_SECONDS", 300, minimum=1))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]  # either one locks
AXES_RESET_ON_SUCCESS = True
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_HANDLER = "opsboard.accounts.password_throttle.PasswordLoginHandler"
AXES_LOCKOUT_CALLABLE = "opsboard.accounts.throttle.lockout_response"
AXES_CLIENT_IP_CALLABLE = "opsboard.accounts.throttle.client_address"
AXES_DISABLE_ACCESS_LOG = True  # successful logins are the LoginSession rows
# Single sign-on with OpenID Connect (mozilla-django-oidc; docs/access.md): the code flow
# with PKCE, nonce and state; endpoints from the issuer's discovery document.
OPSBOARD_OIDC_ISSUER = env_str("OPSBOARD_OIDC_ISSUER").rstrip("/")
OPSBOARD_OIDC_NAME = env_str("OPSBOARD_OIDC_NAME", "single sign-on")
OPSBOARD_OIDC_GROUPS_CLAIM = env_str("OPSBOARD_OIDC_GROUPS_CLAIM", "groups")
OPSBOARD_OIDC_GROUP_ROLES = parse_group_roles(env_str("OPSBOARD_OIDC_GROUP_ROLES"))
OIDC_RP_CLIENT_ID = env_secret("OPSBOARD_OIDC_CLIENT_ID")
OIDC_RP_CLIENT_SECRET = env_secret("OPSBOARD_OIDC_CLIENT_SECRET")
OIDC_RP_SCOPES = env_str("OPSBOARD_OIDC_SCOPES", "openid email profile groups")
OIDC_RP_SIGN_ALGO = "RS256"
OIDC_USE_PKCE = True
OIDC_USE_NONCE = True
OIDC_STORE_ID_TOKEN = True  # the id_token_hint of the provider's logout (opsboard.accounts.logout)
OIDC_TIMEOUT = 10
OIDC_AUTHENTICATE_CLASS = "opsboard.accounts.sso_views.SsoAuthenticateView"
OIDC_CALLBACK_CLASS = "opsboard.accounts.sso_views.SsoCallbackView"
if OPSBOARD_OIDC_ISSUER:
    if not OPSBOARD_OIDC_ISSUER.startswith(("https://", "http://")):
        raise ImproperlyConfigured(f"OPSBOARD_OIDC_ISSUER={OPSBOARD_OIDC_ISSUER!r} is not a URL")
    if not (OIDC_RP_CLIENT_ID and OIDC_RP_CLIENT_SECRET):
        raise ImproperlyConfigured(
            "OPSBOARD_OIDC_ISSUER is set: OPSBOARD_OIDC_CLIENT_ID and "
            "OPSBOARD_OIDC_CLIENT_SECRET (or their _FILE) must be set too"
        )
    AUTHENTICATION_BACKENDS.append("opsboard.accounts.oidc.SsoBackend")
# Local passwords beside single sign-on; off: only SSO logs in.
OPSBOARD_LOCAL_LOGIN = env_bool("OPSBOARD_LOCAL_LOGIN", True)
if not OPSBOARD_LOCAL_LOGIN and not OPSBOARD_OIDC_ISSUER:
    raise ImproperlyConfigured(
        "OPSBOARD_LOCAL_LOGIN=false leaves no way to log in: set OPSBOARD_OIDC_ISSUER too"
    )
# Behind an ingress, the client's address is the one this many proxies in front report.
OPSBOARD_LOGIN_TRUSTED_PROXIES = env_int("OPSBOARD_LOGIN_TRUSTED_PROXIES", 0, minimum=0)

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if not DEBUG and STATIC_ROOT.exists()
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
# Serve straight from the finders when `collectstatic` has not run (local `make run`).
WHITENOISE_USE_FINDERS = not STATIC_ROOT.exists()
if WHITENOISE_USE_FINDERS:
    warnings.filterwarnings("ignore", message="No directory at", category=UserWarning)

# Sessions and CSRF: HttpOnly everywhere, Secure and HSTS once behind TLS.
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_AGE = env_int("OPSBOARD_SESSION_AGE", 12 * 3600, minimum=60)
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
CSRF_COOKIE_HTTPONLY = True  # htmx sends the page's token (hx-headers), no script reads it
SECURE_SSL_REDIRECT = HTTPS
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
SECURE_HSTS_SECONDS = env_int("OPSBOARD_HSTS_SECONDS", 31536000 if HTTPS else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = HTTPS
SECURE_HSTS_PRELOAD = HTTPS
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if HTTPS else None
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Celery: the reconcile tasks are idempotent, so a task is acknowledged only once it has
# run, and a worker lost mid-task hands it back to the queue.
CELERY_BROKER_URL = REDIS_URL
if REDIS_URL.startswith("redis://"):  # rediss:// and sentinels keep kombu's own transport
    CELERY_BROKER_TRANSPORT = "opsboard.engine.broker:Transport"  # see engine/broker.py
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
# Else Celery closes the database connection around every task (opsboard.engine.tasks
# reuses it for CONN_MAX_AGE instead); this recycles it every 10,000 tasks.
CELERY_DB_REUSE_MAX = 10_000
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env_int("OPSBOARD_TASK_SOFT_TIME_LIMIT", 60, minimum=1)
CELERY_TASK_TIME_LIMIT = env_int("OPSBOARD_TASK_TIME_LIMIT", 90, minimum=2)
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A late-acked task must be redelivered long before this; the default is one hour.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_TASK_TIME_LIMIT * 4}
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# No broadcast remote control (nothing uses inspect/control): its Redis pub/sub channel
# is what crashes a worker ("Unrecoverable error") when Redis restarts under it.
CELERY_WORKER_ENABLE_REMOTE_CONTROL = False

if CELERY_TASK_SOFT_TIME_LIMIT >= CELERY_TASK_TIME_LIMIT:
    raise ImproperlyConfigured(
        "OPSBOARD_TASK_SOFT_TIME_LIMIT must be below OPSBOARD_TASK_TIME_LIMIT"
    )

# The reconcile engine (opsboard/engine): which operators run, and the queue's timings.
OPSBOARD_CONTROLLERS = env_list(
    "OPSBOARD_CONTROLLERS",
    [
        "controllers.memcached",
        "controllers.webserver",
        "controllers.bookstore",
        "controllers.ptemplate",
    ],
)
OPSBOARD_BACKOFF_BASE = env_float("OPSBOARD_BACKOFF_BASE", 0.005, minimum=0.001)
OPSBOARD_BACKOFF_MAX = env_float("OPSBOARD_BACKOFF_MAX", 1000.0, minimum=0.001)
# The longest retry delay of a temporary error (a 409, a NodePort another Service holds, a
# 5xx, the API server out of reach): it clears when something else changes, which wakes
# no CR, so the retry must not come a quarter of an hour after (engine.queue.backoff).
OPSBOARD_BACKOFF_TEMPORARY_MAX = env_float("OPSBOARD_BACKOFF_TEMPORARY_MAX", 60.0, minimum=0.001)
# How long a pod may wait for a node before its CR is Degraded (controllers.scheduling):
# more where a cluster autoscaler adds nodes for pending pods, which takes minutes.
OPSBOARD_UNSCHEDULABLE_GRACE_SECONDS = env_float(
    "OPSBOARD_UNSCHEDULABLE_GRACE_SECONDS", 30.0, minimum=0.0
)
# How long a running pod may stay unready before its CR is Degraded ReadinessFailing
# (controllers.unready), or its readiness probe's own window where that is longer.
OPSBOARD_UNREADY_GRACE_SECONDS = env_float("OPSBOARD_UNREADY_GRACE_SECONDS", 30.0, minimum=0.0)
OPSBOARD_RESYNC_SECONDS = env_float("OPSBOARD_RESYNC_SECONDS", 600.0, minimum=1.0)
# A per-key lock outlives a dead worker by at most this; live workers renew it.
OPSBOARD_LOCK_TTL = env_float("OPSBOARD_LOCK_TTL", 10.0, minimum=1.0)
# A key queued this long without running is sent again (its task was lost with Redis).
OPSBOARD_QUEUE_STALE_SECONDS = env_float("OPSBOARD_QUEUE_STALE_SECONDS", 60.0, minimum=1.0)
# A refusal (403) waits for a grant, which nothing in the cluster announces: a kind the
# watcher may not list or watch is looked at again this often; a reconcile's refused write
# is retried after this long, then twice as long each time up to OPSBOARD_DENIED_RETRY_MAX:
# its failure count is the key's, which its children's events raise too, so a grant made
# later is taken within five minutes, not at the resync.
OPSBOARD_DENIED_RETRY = env_float("OPSBOARD_DENIED_RETRY", 30.0, minimum=0.1)
OPSBOARD_DENIED_RETRY_MAX = env_float("OPSBOARD_DENIED_RETRY_MAX", 300.0, minimum=0.1)
# A batch of owned objects' changes only (Pods, ReplicaSets, Events) waits this long for
# more before the watcher writes it: on a real API server they arrive one at a time, and
# each batch costs a mirror transaction and the Redis round trips of its keys. Held a
# quarter of a second, a new pod's creation and scheduling wait for its readiness and wake
# its CR once: at 20 ms a Memcached CR took 2.2 to 2.6 reconciles on the real control
# plane. A primary object's change that leaves its generation observed (the operator's
# own status write, two or three per new CR) is held the same; its spec edits and
# deletions never are (a user's edit is what latency is about); a pod turning ready or
# deleted (what a CR's status tells) 20 ms at most. kopf holds every change of an object
# for 100 ms.
OPSBOARD_OWNED_LINGER_SECONDS = env_float("OPSBOARD_OWNED_LINGER_SECONDS", 0.25, minimum=0.0)
OPSBOARD_LEASE_NAMESPACE = env_str("OPSBOARD_LEASE_NAMESPACE", "default")
# CRDs (by name) opsboard runs no operator for, shown and scaled through /scale.
OPSBOARD_GENERIC_KINDS = env_list("OPSBOARD_GENERIC_KINDS", [])
# The ClusterRole bound to the operators' identity: a 403's diagnosis says to change it.
OPSBOARD_OPERATOR_CLUSTER_ROLE = env_str("OPSBOARD_OPERATOR_CLUSTER_ROLE", "opsboard-operator")
OPSBOARD_LEASE_DURATION = env_float("OPSBOARD_LEASE_DURATION", 15.0, minimum=1.0)
OPSBOARD_LEASE_RENEW_DEADLINE = env_float("OPSBOARD_LEASE_RENEW_DEADLINE", 10.0, minimum=0.5)
OPSBOARD_LEASE_RETRY_PERIOD = env_float("OPSBOARD_LEASE_RETRY_PERIOD", 2.0, minimum=0.1)
OPSBOARD_RUNLOG_KEEP_PER_KEY = env_int("OPSBOARD_RUNLOG_KEEP_PER_KEY", 200, minimum=1)
OPSBOARD_RUNLOG_KEEP_DAYS = env_int("OPSBOARD_RUNLOG_KEEP_DAYS", 14, minimum=1)
CELERY_BEAT_SCHEDULE = {
    "resync": {"task": "opsboard.engine.tasks.resync", "schedule": OPSBOARD_RESYNC_SECONDS}
}
# /metrics sums every worker process's samples from here (prometheus_client reads it
# at import, so it is set before anything imports it).
PROMETHEUS_MULTIPROC_DIR = env_str("PROMETHEUS_MULTIPROC_DIR") or str(STATE_DIR / "metrics")
os.environ["PROMETHEUS_MULTIPROC_DIR"] = PROMETHEUS_MULTIPROC_DIR

if OPSBOARD_LOCK_TTL >= CELERY_TASK_TIME_LIMIT:
    raise ImproperlyConfigured("OPSBOARD_LOCK_TTL must be below OPSBOARD_TASK_TIME_LIMIT")
if not OPSBOARD_LEASE_RETRY_PERIOD < OPSBOARD_LEASE_RENEW_DEADLINE < OPSBOARD_LEASE_DURATION:
    raise ImproperlyConfigured(
        "need OPSBOARD_LEASE_RETRY_PERIOD < OPSBOARD_LEASE_RENEW_DEADLINE < OPSBOARD_LEASE_DURATION"
    )

LOG_LEVEL = env_str("OPSBOARD_LOG_LEVEL", "INFO").upper()
if LOG_LEVEL not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
    raise ImproperlyConfigured(f"OPSBOARD_LOG_LEVEL={LOG_LEVEL!r} is not a log level")
LOG_FORMAT = env_str("OPSBOARD_LOG_FORMAT", "plain")
if LOG_FORMAT not in {"plain", "console"}:
    raise ImproperlyConfigured(f"OPSBOARD_LOG_FORMAT={LOG_FORMAT!r}: use plain or console")
# Celery's two lines per task ("Task ... received", "... succeeded in 0.01s: None") only at
# DEBUG: the engine's own line per reconcile (logger opsboard.reconciles) says more.
_PER_TASK = "INFO" if LOG_LEVEL == "DEBUG" else "WARNING"
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
        "console": {"()": "opsboard.logformat.ConsoleFormatter"},
    },
    "filters": {"refusals": {"()": "opsboard.logformat.RefusalWithoutTraceback"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django.request": {"filters": ["refusals"]},
        "kubernetes": {"level": "WARNING"},
        "urllib3": {"level": "WARNING"},
        "axes": {"level": "WARNING"},  # one INFO line per request otherwise
        "celery.app.trace": {"level": _PER_TASK},
        "celery.worker.strategy": {"level": _PER_TASK},
        "celery.worker.consumer.connection": {"level": _PER_TASK},
        "celery.worker.consumer.mingle": {"level": _PER_TASK},
    },
}
