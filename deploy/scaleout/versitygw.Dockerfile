# versitygw (Apache-2.0), the S3-compatible server of the scale-out example,
# built from the Go module proxy at the version the tests use
# (integration/s3test), with its posix backend on a volume.
FROM golang:1.26-bookworm AS build
RUN CGO_ENABLED=0 GOBIN=/out go install github.com/versity/versitygw/cmd/versitygw@v1.8.0

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/versitygw /usr/local/bin/versitygw
COPY versitygw-start.sh /usr/local/bin/versitygw-start.sh
VOLUME /data
EXPOSE 7070
ENTRYPOINT ["/bin/sh", "/usr/local/bin/versitygw-start.sh"]
