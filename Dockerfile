# syntax=docker/dockerfile:1
# The oam-operator image (docs/image.md): a virtual environment built from the hash-pinned
# requirements.lock plus the project wheel, and a helm binary built from Go modules (it renders
# `delivery: template` charts), on a Debian-based Python image; run as UID/GID 65532 with nothing
# written outside /tmp, so readOnlyRootFilesystem works.
#
# Out of the box, with any engine that reaches Docker Hub:
#   docker build -t oam-operator:0.1.0 .          (or: podman build -t oam-operator:0.1.0 .)
#
# Release practice: pin the base by digest, and stamp the commit, for instance
#   docker build \
#     --build-arg BASE_IMAGE=python:3.12-slim@sha256:<digest> \
#     --build-arg SOURCE_DATE_EPOCH="$(git log -1 --format=%ct)" \
#     --build-arg REVISION="$(git rev-parse HEAD)" -t oam-operator:0.1.0 .
# (the digest from `docker buildx imagetools inspect python:3.12-slim`; both stages use it).
#
# Where no registry is reachable (our development machines), `make image` builds a Debian base
# with mmdebstrap and a helm image from the locally built binary, and passes them as
# BASE_IMAGE and HELM_FROM (tools/image/build.sh).
#
# requirements.lock is generated from pyproject.toml (runtime dependencies plus the build
# backend, every distribution hashed) and checked in; regenerate it after changing dependencies:
#   pip-compile --all-build-deps --allow-unsafe --generate-hashes --no-emit-index-url \
#     --no-emit-find-links --strip-extras --output-file=requirements.lock pyproject.toml

# BASE_IMAGE: any Debian-based image with python3 (python:3.12-slim, or Debian's python3).
# BUILDER_IMAGE: the same Python with its venv module (and, optionally, binutils' strip, used to
# strip the native extensions); the environment links to its interpreter, so both must carry the
# same python3 at the same path. By default both are python:3.12-slim.
ARG BASE_IMAGE=python:3.12-slim
ARG BUILDER_IMAGE=${BASE_IMAGE}
# The stage or image whose /out/helm is copied in: by default built below from Go modules.
ARG HELM_FROM=helm-source
ARG GO_IMAGE=golang:1.26-bookworm

FROM ${GO_IMAGE} AS helm-source
ARG HELM_VERSION=3.22.0
# Static, stripped, reproducible (no cgo, trimmed paths).
RUN CGO_ENABLED=0 GOFLAGS="-trimpath -buildvcs=false" GOBIN=/out \
      go install -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=v${HELM_VERSION}" \
      "helm.sh/helm/v3/cmd/helm@v${HELM_VERSION}"

FROM ${HELM_FROM} AS helm

FROM ${BUILDER_IMAGE} AS builder
ENV VENV=/opt/oam-operator \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_INPUT=1
WORKDIR /src
# Dependencies first (their layer survives source changes): exactly the locked files, no resolver.
COPY requirements.lock ./
RUN python3 -m venv "$VENV" \
 && "$VENV/bin/pip" install --no-cache-dir --no-compile --require-hashes --no-deps -r requirements.lock
COPY pyproject.toml README.md ./
COPY operator/ operator/
# The commit time: the file dates inside the project wheel, so rebuilds are identical.
ARG SOURCE_DATE_EPOCH=0
# The locked setuptools builds the wheel (no unpinned build isolation). Then the runtime needs no
# package manager: setuptools, wheel and pip leave the environment. Code never imported is
# removed: the asyncio flavour of the kubernetes client and test suites. Bytecode is compiled
# once, hash-checked (reproducible, and nothing is written at run time). The kubernetes client
# (generated code, half of the environment) is kept as bytecode only, without its docstrings: its
# tracebacks name file and line without the source text, and the image is 40 MB smaller
# (docs/image.md). Native extensions lose their symbol tables when the builder has strip.
RUN "$VENV/bin/pip" wheel --no-cache-dir --no-deps --no-build-isolation --wheel-dir dist . \
 && "$VENV/bin/pip" install --no-cache-dir --no-compile --no-deps dist/oam_operator-*.whl \
 && "$VENV/bin/python" -m pip uninstall --yes setuptools wheel pip \
 && find "$VENV/lib" -depth -type d \( -name tests -o -name aio -path '*/kubernetes/aio' \) -exec rm -rf {} + \
 && "$VENV/bin/python" -m compileall -q -j 0 --invalidation-mode checked-hash -x '/site-packages/kubernetes/' "$VENV/lib" \
 && client="$(echo "$VENV"/lib/python3*/site-packages/kubernetes)" \
 && "$VENV/bin/python" -m compileall -q -j 0 -b -o 2 "$client" \
 && find "$client" -name '*.py' -delete \
 && if command -v strip >/dev/null; then find "$VENV" -name '*.so' -exec strip --strip-unneeded {} +; fi \
 && rm -rf dist build operator/*.egg-info
COPY --from=helm /out/helm /opt/oam-operator/bin/helm

FROM ${BASE_IMAGE} AS runtime
ARG BASE_IMAGE
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG SOURCE_URL=https://github.com/oam-operator/oam-operator
LABEL org.opencontainers.image.title="oam-operator" \
      org.opencontainers.image.description="A Kubernetes operator, on kopf, that deploys OAM-style Application resources in ordered waves" \
      org.opencontainers.image.source="${SOURCE_URL}" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="${BASE_IMAGE}"
# The user by number (so the kubelet can verify runAsNonRoot), written directly: minimal bases
# have no useradd.
RUN echo 'nonroot:x:65532:65532:nonroot:/nonexistent:/usr/sbin/nologin' >> /etc/passwd \
 && echo 'nonroot:x:65532:' >> /etc/group
COPY --from=builder /opt/oam-operator /opt/oam-operator
# helm keeps its cache and configuration under the temporary directory (the chart mounts an
# emptyDir there); the root filesystem stays read-only.
ENV PATH=/opt/oam-operator/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    TMPDIR=/tmp \
    HOME=/tmp \
    HELM_CACHE_HOME=/tmp/helm/cache \
    HELM_CONFIG_HOME=/tmp/helm/config \
    HELM_DATA_HOME=/tmp/helm/data
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["oam-operator"]
CMD ["run"]
