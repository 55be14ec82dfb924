# syntax=docker/dockerfile:1
# The oam-operator image (operator.md §13): a virtual environment built from the hash-pinned
# requirements.lock plus the project wheel, copied onto the same slim Python base, run as
# UID/GID 65532 with nothing written outside /tmp (so readOnlyRootFilesystem works).
#
#   docker build \
#     --build-arg PYTHON_DIGEST=sha256:<digest of python:3.12-slim> \
#     --build-arg SOURCE_DATE_EPOCH="$(git log -1 --format=%ct)" \
#     --build-arg REVISION="$(git rev-parse HEAD)" \
#     -t oam-operator:0.1.0 .
#
# PYTHON_DIGEST below is a PLACEHOLDER (all zeros): this repository is developed where no image
# registry is reachable, so the real digest could not be looked up. Pin it before the first
# build, and again whenever you move to a newer base, with one of
#   docker buildx imagetools inspect python:3.12-slim --format '{{json .Manifest.Digest}}'
#   docker pull python:3.12-slim && docker inspect --format '{{index .RepoDigests 0}}' python:3.12-slim
# (the manifest-list digest, so every platform resolves). Both stages use the same digest.
#
# requirements.lock is generated from pyproject.toml (runtime dependencies plus the build
# backend, every distribution hashed) and checked in; regenerate it after changing dependencies:
#   pip-compile --all-build-deps --allow-unsafe --generate-hashes --no-emit-index-url \
#     --no-emit-find-links --strip-extras --output-file=requirements.lock pyproject.toml
# tests/integration/helm/test_image_install.py runs this file's build steps in a fresh
# virtual environment.

ARG PYTHON_VERSION=3.12
ARG PYTHON_DIGEST=sha256:0000000000000000000000000000000000000000000000000000000000000000

FROM python:${PYTHON_VERSION}-slim@${PYTHON_DIGEST} AS builder
ENV VENV=/opt/oam-operator \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_INPUT=1
WORKDIR /src
# Dependencies first (their layer survives source changes): exactly the locked files, no resolver.
COPY requirements.lock ./
RUN python -m venv "$VENV" \
 && "$VENV/bin/pip" install --no-cache-dir --no-compile --require-hashes --no-deps -r requirements.lock
COPY pyproject.toml README.md ./
COPY operator/ operator/
# The commit time: the file dates inside the project wheel, so rebuilds are identical.
ARG SOURCE_DATE_EPOCH=0
# The locked setuptools builds the wheel (no unpinned build isolation). Then the runtime needs no
# package manager: setuptools, wheel and pip leave the environment. Bytecode is compiled once,
# hash-checked (reproducible, and nothing is written at run time), except for code never
# imported: the asyncio flavour of the kubernetes client and test suites.
RUN "$VENV/bin/pip" wheel --no-cache-dir --no-deps --no-build-isolation --wheel-dir dist . \
 && "$VENV/bin/pip" install --no-cache-dir --no-compile --no-deps dist/oam_operator-*.whl \
 && "$VENV/bin/python" -m pip uninstall --yes setuptools wheel pip \
 && "$VENV/bin/python" -m compileall -q -j 0 --invalidation-mode checked-hash \
      -x '/(kubernetes/aio|tests)/' "$VENV/lib" \
 && rm -rf dist build operator/*.egg-info

FROM python:${PYTHON_VERSION}-slim@${PYTHON_DIGEST} AS runtime
ARG PYTHON_VERSION
ARG PYTHON_DIGEST
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG SOURCE_URL=https://github.com/oam-operator/oam-operator
LABEL org.opencontainers.image.title="oam-operator" \
      org.opencontainers.image.description="A Kubernetes operator, on kopf, that deploys OAM-style Application resources in ordered waves" \
      org.opencontainers.image.source="${SOURCE_URL}" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="docker.io/library/python:${PYTHON_VERSION}-slim" \
      org.opencontainers.image.base.digest="${PYTHON_DIGEST}"
RUN groupadd --system --gid 65532 nonroot \
 && useradd --system --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin nonroot
COPY --from=builder /opt/oam-operator /opt/oam-operator
ENV PATH=/opt/oam-operator/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    TMPDIR=/tmp
# Numeric, so the kubelet can verify runAsNonRoot.
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["oam-operator"]
CMD ["run"]
