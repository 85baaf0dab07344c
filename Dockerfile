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
# Locales: pgaccel orders text of a linguistic libc collation (en_US.UTF-8, ...)
# by the C library's own locale data, when it is the origin's glibc release
# (bookworm's 2.36, as the official postgres:*-bookworm images). LOCALES names
# the ones generated; add yours.
ARG LOCALES="en_US de_DE fr_FR es_ES en_GB"
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates locales \
 && for l in ${LOCALES}; do localedef -i "$l" -f UTF-8 "$l.UTF-8"; done \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --home /var/lib/pgaccel --create-home pgaccel
COPY --from=build /out/pgaccel /usr/local/bin/pgaccel
USER pgaccel
WORKDIR /var/lib/pgaccel
EXPOSE 15432 8090
ENTRYPOINT ["pgaccel"]
CMD ["run", "-c", "/etc/pgaccel/pgaccel.yaml"]
