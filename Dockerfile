# pgaccel image: build with cgo (pg_query and DuckDB are C/C++), run on slim Debian.
#   docker build --build-arg VERSION=$(git describe --tags --always --dirty) -t pgaccel .
# (make docker does this). The build context has no .git (.dockerignore), so
# the version comes only from VERSION; without it, pgaccel version prints dev.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=1 go build -trimpath -ldflags "-X main.version=${VERSION}" -o /out/pgaccel ./cmd/pgaccel \
 && /out/pgaccel version

FROM debian:bookworm-slim
ARG VERSION=dev
LABEL org.opencontainers.image.title="pgaccel" org.opencontainers.image.version="${VERSION}"
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --home /var/lib/pgaccel --create-home pgaccel
COPY --from=build /out/pgaccel /usr/local/bin/pgaccel
USER pgaccel
WORKDIR /var/lib/pgaccel
EXPOSE 15432 8090
ENTRYPOINT ["pgaccel"]
CMD ["run", "-c", "/etc/pgaccel/pgaccel.yaml"]
