package snapshot

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// S3 parameters (snapshots.params):
//
//	s3_endpoint        the server's URL, for S3-compatible servers (default: AWS's for the region)
//	s3_region          the region (default us-east-1)
//	s3_auth            key (s3_key and s3_secret, the default), iam_role (the AWS SDK's
//	                   default chain: environment, shared files, IRSA, ECS, EC2) or public (unsigned)
//	s3_key, s3_secret  the access key; use ${env:NAME} rather than writing them in the file
//	s3_session_token   a temporary credential's token
//	s3_path_style      true or false: bucket in the path (default true with an endpoint)
const (
	ParamEndpoint     = "s3_endpoint"
	ParamRegion       = "s3_region"
	ParamAuth         = "s3_auth"
	ParamKey          = "s3_key"
	ParamSecret       = "s3_secret"
	ParamSessionToken = "s3_session_token"
	ParamPathStyle    = "s3_path_style"
)

// multipartPart is the part size of uploads, and the size above which an
// upload is multipart (S3 allows parts of 5 MiB to 5 GiB, 10,000 of them:
// 640 GiB with this size).
var multipartPart int64 = 64 << 20

type s3Store struct {
	c   *s3.Client
	loc Location
}

// NewS3 returns the store of an s3:// location, with the client set up
// from params (above) as S3-compatible servers need: request and response
// checksums only when required.
func NewS3(ctx context.Context, loc Location, params map[string]string) (Store, error) {
	opts := s3.Options{
		Region:                     "us-east-1",
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}
	if r := params[ParamRegion]; r != "" {
		opts.Region = r
	}
	if e := params[ParamEndpoint]; e != "" {
		opts.BaseEndpoint = aws.String(e)
		opts.UsePathStyle = true
	}
	if v, ok := params[ParamPathStyle]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("snapshots.params.%s: %q is not true or false", ParamPathStyle, v)
		}
		opts.UsePathStyle = b
	}
	switch auth := params[ParamAuth]; auth {
	case "", "key":
		if params[ParamKey] == "" || params[ParamSecret] == "" {
			return nil, fmt.Errorf("snapshots.params: s3_auth key needs %s and %s (write them as ${env:NAME})", ParamKey, ParamSecret)
		}
		opts.Credentials = credentials.NewStaticCredentialsProvider(params[ParamKey], params[ParamSecret], params[ParamSessionToken])
	case "public":
		opts.Credentials = aws.AnonymousCredentials{}
	case "iam_role":
		// The SDK's default chain: the environment (AWS_ACCESS_KEY_ID…),
		// the shared config and credentials files, web identity (EKS
		// IRSA), the ECS task role, the EC2 instance profile. Resolved
		// lazily, at the first request, so a start with no network
		// does not fail here.
		cfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(opts.Region))
		if err != nil {
			return nil, fmt.Errorf("snapshots.params.%s iam_role: the AWS default credential chain: %w", ParamAuth, err)
		}
		opts.Credentials = cfg.Credentials
	default:
		return nil, fmt.Errorf("snapshots.params.%s: %q is not key, iam_role or public", ParamAuth, auth)
	}
	return &s3Store{c: s3.New(opts), loc: loc}, nil
}

func (s *s3Store) String() string {
	return "s3://" + s.loc.Bucket + "/" + s.loc.Prefix
}

func (s *s3Store) PutFile(ctx context.Context, key, src string) (int64, string, error) {
	f, err := os.Open(src)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, "", err
	}
	h := sha256.New()
	k := s.loc.key(key)
	if st.Size() <= multipartPart {
		data, err := io.ReadAll(io.TeeReader(f, h))
		if err != nil {
			return 0, "", err
		}
		wctx, touch, stop := watch(ctx)
		_, err = s.c.PutObject(wctx, &s3.PutObjectInput{Bucket: &s.loc.Bucket, Key: &k, Body: touchBody{bytes.NewReader(data), touch},
			ContentLength: aws.Int64(int64(len(data)))})
		err = stalled(wctx, err)
		stop()
		if err != nil {
			return 0, "", storeErr("upload", k, err)
		}
		return int64(len(data)), hex.EncodeToString(h.Sum(nil)), nil
	}
	cctx, cancel := context.WithTimeout(ctx, stallTimeout)
	up, err := s.c.CreateMultipartUpload(cctx, &s3.CreateMultipartUploadInput{Bucket: &s.loc.Bucket, Key: &k})
	cancel()
	if err != nil {
		return 0, "", storeErr("upload", k, err)
	}
	abort := func(err error) (int64, string, error) {
		// With a context of its own: the upload's may have ended.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stallTimeout)
		defer cancel()
		_, aerr := s.c.AbortMultipartUpload(actx, &s3.AbortMultipartUploadInput{Bucket: &s.loc.Bucket, Key: &k, UploadId: up.UploadId})
		if aerr != nil {
			err = fmt.Errorf("%w (and aborting the multipart upload failed: %v)", err, aerr)
		}
		return 0, "", storeErr("upload", k, err)
	}
	var parts []types.CompletedPart
	var total int64
	buf := make([]byte, multipartPart)
	for n := int32(1); ; n++ {
		m, err := io.ReadFull(f, buf)
		if err == io.EOF {
			break
		}
		if err != nil && err != io.ErrUnexpectedEOF {
			return abort(err)
		}
		h.Write(buf[:m])
		wctx, touch, stop := watch(ctx)
		out, perr := s.c.UploadPart(wctx, &s3.UploadPartInput{Bucket: &s.loc.Bucket, Key: &k, UploadId: up.UploadId,
			PartNumber: aws.Int32(n), Body: touchBody{bytes.NewReader(buf[:m]), touch}, ContentLength: aws.Int64(int64(m))})
		perr = stalled(wctx, perr)
		stop()
		if perr != nil {
			return abort(perr)
		}
		parts = append(parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(n)})
		total += int64(m)
		if err == io.ErrUnexpectedEOF {
			break
		}
	}
	cctx, cancel = context.WithTimeout(ctx, stallTimeout)
	defer cancel()
	if _, err := s.c.CompleteMultipartUpload(cctx, &s3.CompleteMultipartUploadInput{Bucket: &s.loc.Bucket, Key: &k, UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}); err != nil {
		return abort(err)
	}
	return total, hex.EncodeToString(h.Sum(nil)), nil
}

func (s *s3Store) GetFile(ctx context.Context, key, dst string) (int64, string, error) {
	k := s.loc.key(key)
	wctx, touch, stop := watch(ctx)
	defer stop()
	out, err := s.c.GetObject(wctx, &s3.GetObjectInput{Bucket: &s.loc.Bucket, Key: &k})
	if err != nil {
		if status(err) == http.StatusNotFound {
			return 0, "", fmt.Errorf("%w: %s", ErrNotFound, k)
		}
		return 0, "", storeErr("download", k, stalled(wctx, err))
	}
	defer out.Body.Close()
	n, sum, err := writeFrom(wctx, touchReader{out.Body, touch}, dst)
	if err = stalled(wctx, err); err != nil {
		return 0, "", storeErr("download", k, err)
	}
	return n, sum, nil
}

func (s *s3Store) ReadMeta(ctx context.Context, ifNoneMatch string) ([]byte, string, error) {
	k := s.loc.key(MetadataKey)
	in := &s3.GetObjectInput{Bucket: &s.loc.Bucket, Key: &k}
	if ifNoneMatch != "" {
		in.IfNoneMatch = aws.String(ifNoneMatch)
	}
	ctx, cancel := context.WithTimeout(ctx, stallTimeout)
	defer cancel()
	out, err := s.c.GetObject(ctx, in)
	switch status(err) {
	case 0:
	case http.StatusNotModified:
		return nil, ifNoneMatch, ErrNotModified
	case http.StatusNotFound:
		return nil, "", ErrNotFound
	default:
		return nil, "", storeErr("read", k, err)
	}
	if out == nil || out.Body == nil {
		return nil, "", storeErr("read", k, errors.New("no response"))
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, "", storeErr("read", k, err)
	}
	return data, aws.ToString(out.ETag), nil
}

func (s *s3Store) WriteMeta(ctx context.Context, data []byte, ifMatch string) (string, error) {
	k := s.loc.key(MetadataKey)
	in := &s3.PutObjectInput{Bucket: &s.loc.Bucket, Key: &k, Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data))),
		ContentType: aws.String("application/json")}
	if ifMatch == "" {
		in.IfNoneMatch = aws.String("*")
	} else {
		in.IfMatch = aws.String(ifMatch)
	}
	ctx, cancel := context.WithTimeout(ctx, stallTimeout)
	defer cancel()
	out, err := s.c.PutObject(ctx, in)
	switch status(err) {
	case 0:
		if out == nil {
			return "", storeErr("write", k, unknownOutcome(errors.New("no response")))
		}
		return aws.ToString(out.ETag), nil
	case http.StatusPreconditionFailed, http.StatusConflict:
		// 409: a concurrent conditional write is in progress (AWS).
		return "", ErrConflict
	}
	if st := status(err); st < 0 || st >= 500 {
		// No answer (timed out, cancelled, the connection lost: the
		// request may have reached the server), or a server error: the
		// server may have applied it.
		return "", storeErr("write", k, unknownOutcome(err))
	}
	return "", storeErr("write", k, err)
}

func (s *s3Store) Delete(ctx context.Context, key string) error {
	k := s.loc.key(key)
	ctx, cancel := context.WithTimeout(ctx, stallTimeout)
	defer cancel()
	if _, err := s.c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.loc.Bucket, Key: &k}); err != nil && status(err) != http.StatusNotFound {
		return storeErr("delete", k, err)
	}
	return nil
}

// status is the HTTP status of an S3 call's error: 0 for none, -1 for an
// error without a response (or with one that has no status: a response
// error of status 0 was once taken for success, and its nil output
// crashed the process).
func status(err error) int {
	if err == nil {
		return 0
	}
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		if re.Response == nil || re.HTTPStatusCode() <= 0 {
			return -1
		}
		return re.HTTPStatusCode()
	}
	if strings.Contains(err.Error(), "NotModified") {
		return http.StatusNotModified
	}
	return -1
}
