# syntax=docker/dockerfile:1
# Evidence Gateway: the wheel is built in one stage and installed in a slim one that holds no
# compiler, no source tree and no wheel files, and runs as an unprivileged user.
#   docker build -t evidence-gateway .
#   docker run --rm -p 8000:8000 evidence-gateway          # SQLite in /app/data, demo key on stdout
# compose.yaml runs the production shape (PostgreSQL, Redis, two API nodes, a worker).

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS builder
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY evidence_gateway ./evidence_gateway
# The project's wheel and every dependency's, so the runtime stage installs from files alone.
# tests/test_container_run.py builds the wheel with this same command. The pip cache outlives
# the build (a cache mount) and this stage is thrown away: neither reaches the image.
RUN --mount=type=cache,target=/root/.cache/pip \
    pip wheel --wheel-dir /wheels .

FROM ${PYTHON_IMAGE} AS runtime
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    EVIDENCE_DATABASE_URL=sqlite+aiosqlite:////app/data/evidence.db
# The wheels are mounted for this one step, never copied into a layer.
RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels \
    pip install --no-cache-dir --no-index --find-links /wheels evidence-gateway \
    && groupadd --system --gid 10001 evidence \
    && useradd --system --uid 10001 --gid evidence --home-dir /app --no-create-home evidence \
    && mkdir -p /app/data \
    && chown -R evidence:evidence /app
WORKDIR /app
USER 10001:10001
EXPOSE 8000
VOLUME ["/app/data"]
# Ready means: the database answers at this code's schema and the configured background work runs.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/readyz', timeout=4).status != 200)"]
ENTRYPOINT ["evidence-gateway"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8000"]
