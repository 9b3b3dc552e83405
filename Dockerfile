# syntax=docker/dockerfile:1
# logsig container image. The build stage makes a wheel of this repository and installs it, with
# its dependencies, into a virtual environment; the runtime stage copies only that environment
# onto a clean slim base: no compiler, pip cache, wheels or source tree, and a non-root user.
#   docker build -t logsig:0.1.0 .        or        buildah bud -t logsig:0.1.0 .
# The base is pinned by tag and by the digest of its multi-platform index; update both together.

FROM docker.io/library/python:3.11.14-slim-bookworm@sha256:65a93d69fa75478d554f4ad27c85c1e69fa184956261b4301ebaf6dbb0a3543d AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    LOGSIG_CATALOG__CACHE_DIR=/var/cache/logsig
WORKDIR /src
COPY pyproject.toml ./
COPY logsig ./logsig
# hyperscan and google-re2 ship manylinux wheels for x86_64 and aarch64: nothing is compiled.
# `logsig catalog test` compiles the built-in catalog and runs its examples in the new environment;
# `logsig catalog warm` writes the compiled built-in catalog to the compile cache the runtime stage
# ships, so a replica running the built-in catalog starts without compiling it.
RUN python -m pip wheel --no-deps --wheel-dir /wheels . \
 && python -m venv /opt/logsig \
 && /opt/logsig/bin/python -m pip install /wheels/logsig-*.whl \
 && /opt/logsig/bin/python -m pip uninstall --yes pip \
 && /opt/logsig/bin/logsig catalog test \
 && /opt/logsig/bin/logsig catalog warm

FROM docker.io/library/python:3.11.14-slim-bookworm@sha256:65a93d69fa75478d554f4ad27c85c1e69fa184956261b4301ebaf6dbb0a3543d AS runtime
LABEL org.opencontainers.image.title="logsig" \
      org.opencontainers.image.description="Turns known failures in LLM inference-server logs on Kafka into enriched incident events." \
      org.opencontainers.image.licenses="Apache-2.0"
ENV PATH=/opt/logsig/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    LOGSIG_CATALOG__CACHE_DIR=/var/cache/logsig
RUN groupadd --system --gid 10001 logsig \
 && useradd --system --uid 10001 --gid logsig --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin logsig
COPY --from=build /opt/logsig /opt/logsig
# The warm compile cache, writable by the runtime user (other catalogs are cached there too).
COPY --from=build --chown=10001:10001 /var/cache/logsig /var/cache/logsig
USER 10001:10001
EXPOSE 9464
# Kubernetes uses its own probes (/healthz, /readyz); this is for docker and podman.
HEALTHCHECK --interval=30s --timeout=3s --start-period=30s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:9464/healthz', timeout=2)"]
ENTRYPOINT ["logsig"]
CMD ["run", "--config", "/etc/logsig/logsig.yaml"]
