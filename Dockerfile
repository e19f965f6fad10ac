# syntax=docker/dockerfile:1
# One image for every opsboard process. The default command is the web server; the others
# override it (see docker-compose.yml and k8s/deploy/):
#   worker    celery -A opsboard worker --loglevel INFO
#   beat      celery -A opsboard beat --schedule /var/lib/opsboard/celerybeat-schedule
#   watcher   python manage.py runwatcher
#   migrate   python manage.py migrate --noinput
#   kubesim   python -m kubesim serve --host 0.0.0.0 --port 6443 --data-dir /data ...
# Build: docker build -t opsboard .

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# ---- builder: a virtualenv holding the runtime dependencies, each at its locked version ----
FROM ${PYTHON_IMAGE} AS builder
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /build
COPY requirements.in requirements.txt ./
# requirements.in lists the runtime packages above its "Development and test" section, and
# requirements.txt (the lock) pins them and everything they pull in: test tools stay out.
RUN python -m venv /venv \
 && sed '/^# Development and test/,$d' requirements.in > runtime.in \
 && /venv/bin/pip install -r runtime.in -c requirements.txt

# ---- runtime: the virtualenv, the code and the collected static files, run as a non-root user ----
FROM ${PYTHON_IMAGE}
ENV PATH=/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    DJANGO_SETTINGS_MODULE=opsboard.settings \
    OPSBOARD_STATE_DIR=/var/lib/opsboard
# A fixed numeric uid, so Kubernetes can check runAsNonRoot without a runAsUser.
RUN groupadd --system --gid 10001 opsboard \
 && useradd --system --uid 10001 --gid opsboard --no-create-home \
      --home-dir /var/lib/opsboard --shell /usr/sbin/nologin opsboard \
 && install -d -o opsboard -g opsboard -m 0750 /var/lib/opsboard /data /shared
COPY --from=builder /venv /venv
WORKDIR /app
# The code stays owned by root: the opsboard user can read it but never change it.
COPY . .
# STATIC_ROOT must exist before collectstatic so the settings pick the manifest storage that
# the running web process will use. Throwaway key and state dir: nothing of them is kept.
RUN mkdir staticfiles \
 && OPSBOARD_SECRET_KEY=collectstatic-only OPSBOARD_STATE_DIR=/tmp/build-state \
      python manage.py collectstatic --noinput -v 0 \
 && rm -rf /tmp/build-state \
 && python -m compileall -q opsboard controllers kubesim
USER 10001:10001
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["python", "-c", "import urllib.request as u; u.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]
# GUNICORN_CMD_ARGS adds or overrides options (e.g. "--workers 4") without a new command.
CMD ["gunicorn", "opsboard.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "2", \
     "--threads", "4", "--access-logfile", "-", "--graceful-timeout", "20"]
