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
