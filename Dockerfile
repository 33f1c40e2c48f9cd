# syntax=docker/dockerfile:1

# One image, two programs: the shop (the entrypoint) and the load generator
# (compose.yaml's loadgen service sets its entrypoint to /usr/local/bin/loadgen).
#
#   docker build -t flashsale .
#   docker run --rm -p 8080:8080 flashsale     # one shop on embedded backends

# --- build: the Go toolchain, never shipped ---------------------------------
# Keep the tag on go.mod's `go` line (deploy/dockerfile_test.go checks they agree).
FROM golang:1.26.8-alpine AS build
WORKDIR /src

# Dependencies first, in their own layer: editing the code does not download
# the modules again.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download

# The SQL migrations are compiled into the shop (//go:embed in migrations/),
# so the runtime image needs no files besides the two binaries.
COPY . .

# CGO_ENABLED=0: fully static binaries (the SQLite driver is pure Go) that
# need no C library at run time. -trimpath drops this machine's paths from the
# binaries; -ldflags "-s -w" drops the symbol table and DWARF (smaller image).
ENV CGO_ENABLED=0
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -ldflags "-s -w" -o /out/ ./cmd/shop ./cmd/loadgen

# --- runtime: two static binaries on a small base, run as a plain user ------
# Alpine rather than distroless/static: compose.yaml health-checks the shop
# with busybox's wget, and distroless has no shell, no wget, no curl (the shop
# has no probe mode of its own). Nothing is installed here: no compiler, no
# Go toolchain, no package added.
FROM alpine:3.22
RUN addgroup -S -g 10001 flashsale && adduser -S -D -H -u 10001 -G flashsale flashsale
COPY --from=build /out/shop /out/loadgen /usr/local/bin/
# Numeric, so that a runtime can verify it is not root without reading
# /etc/passwd (Kubernetes' runAsNonRoot insists on that).
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/shop"]
