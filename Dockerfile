# pgaccel image: build with cgo (pg_query and DuckDB are C/C++), run on slim Debian.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=1 go build -trimpath -o /out/pgaccel ./cmd/pgaccel

FROM debian:bookworm-slim
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
