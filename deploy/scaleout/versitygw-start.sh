#!/bin/sh
# Starts versitygw on :7070 over /data and creates the bucket $BUCKET
# (an S3 PUT signed with curl's SigV4), so the writer can publish at once.
set -eu
: "${ROOT_ACCESS_KEY:?}" "${ROOT_SECRET_KEY:?}" "${BUCKET:=fleet}" "${REGION:=us-east-1}"
versitygw --access "$ROOT_ACCESS_KEY" --secret "$ROOT_SECRET_KEY" --region "$REGION" --port :7070 posix /data &
pid=$!
i=0
until curl -s -o /dev/null http://127.0.0.1:7070/; do
  i=$((i + 1)); [ "$i" -lt 100 ] || { echo "versitygw did not start" >&2; exit 1; }
  sleep 0.1
done
code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT --aws-sigv4 "aws:amz:$REGION:s3" \
  --user "$ROOT_ACCESS_KEY:$ROOT_SECRET_KEY" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" \
  "http://127.0.0.1:7070/$BUCKET")
case "$code" in
  200|409) echo "bucket $BUCKET ready" ;;  # 409: it exists (a restart)
  *) echo "creating bucket $BUCKET: HTTP $code" >&2; exit 1 ;;
esac
wait "$pid"
