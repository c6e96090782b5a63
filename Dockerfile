# syntax=docker/dockerfile:1
# codeport's image: one static binary (the CPython runtimes are embedded in
# it, so no other file of the project is copied) on an empty base, run as a
# numeric non-root user. deploy/kubernetes/ runs it with a read-only root
# file system and points every directory codeport writes at a volume.
#
#   docker build -t codeport:dev .
#   docker run --rm -p 8080:8080 codeport:dev
#
# As it stands, serve listens on the container's port 8080 with no token:
# give it one before exposing it (docs/configuration.md: auth-token-file).

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
# CGO_ENABLED=0: a static binary that needs no libc in the final image.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/codeport ./cmd/codeport
# All the final image has besides the binary: a /tmp (sessions and
# snapshots are staged under TMPDIR), a home for the compilation cache, and
# the CA certificates a remote sandbox (sandbox-url over https) needs.
RUN mkdir -p /out/root/tmp /out/root/etc/ssl/certs /out/home && \
    chmod 1777 /out/root/tmp && \
    cp /etc/ssl/certs/ca-certificates.crt /out/root/etc/ssl/certs/
# The container starts compiled: the interpreter and the shell are
# compiled here into the home's default compilation cache (about 80 MB;
# COMPILE_FLAGS=--all-profiles adds the scientific profile's, about 125
# MB), so that serve loads them in a fraction of a second instead of
# compiling them for seconds at every start. Compiled code is keyed by
# the CPU's features: on a host whose processor differs from the
# builder's, serve compiles once at start, as without this step.
ARG COMPILE_FLAGS=
RUN HOME=/out/home /out/codeport compile ${COMPILE_FLAGS}

FROM scratch
COPY --from=build /out/root/ /
COPY --from=build --chown=65532:65532 /out/home /home/codeport
COPY --from=build /out/codeport /codeport
ENV HOME=/home/codeport
# No user database on scratch: the user is a number. The StatefulSet's
# runAsUser is the same (deploy/deploy_test.go checks).
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/codeport"]
# Flags beat the configuration file and the environment, so Kubernetes
# replaces these arguments (statefulset.yaml) rather than override them.
CMD ["serve", "--listen", ":8080"]
