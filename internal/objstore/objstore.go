// Package objstore keeps Gantry's artifacts in an S3-compatible object
// store (issue 26, point 4): AWS S3, Ceph RGW, SeaweedFS, Garage,
// versitygw. It has only what Gantry needs — put with the content's
// SHA-256 checked, get with it verified, a presence check and delete —
// behind the narrow Store interface, so its users never see the SDK.
//
// Objects are named by their callers (content-addressed blobs, one
// manifest per deployment); every key is put under the configured prefix.
// Credentials come from the standard AWS variables and files
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_PROFILE, …), as the
// SDK's default chain finds them.
package objstore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// Store is an object store as Gantry uses it.
type Store interface {
	// Put stores the bytes of r under key. sum is their hex SHA-256: the
	// store checks the bytes it received against it (x-amz-checksum-sha256)
	// and refuses the put on a mismatch, and so does Put before sending.
	Put(ctx context.Context, key string, r io.ReadSeeker, sum string) error
	// Get copies the object at key to w. With sum set, the bytes are
	// hashed on the way and a mismatch is ErrCorrupt (w then holds bytes
	// that must not be used). A missing object is ErrNotFound.
	Get(ctx context.Context, key, sum string, w io.Writer) (int64, error)
	// Has reports whether key exists.
	Has(ctx context.Context, key string) (bool, error)
	// Delete removes the objects at keys; missing ones are no error.
	Delete(ctx context.Context, keys ...string) error
	// List returns the keys that start with prefix.
	List(ctx context.Context, prefix string) ([]string, error)
}

var (
	// ErrNotFound is a get of a key that holds nothing.
	ErrNotFound = errors.New("object store: no such object")
	// ErrCorrupt is an object whose bytes do not match their SHA-256.
	ErrCorrupt = errors.New("object store: the object's bytes do not match its SHA-256")
)

// Options configure an S3 store.
type Options struct {
	Bucket    string
	Prefix    string // put before every key, without slashes at either end ("" for none)
	Endpoint  string // http(s)://host[:port] of an S3-compatible service; "" for AWS
	Region    string // "" for the SDK's (AWS_REGION), else us-east-1
	PathStyle bool   // http://endpoint/bucket/key rather than http://bucket.endpoint/key
	// AccessKey and SecretKey, when set, are the credentials (tests);
	// otherwise the SDK's default chain finds them.
	AccessKey, SecretKey string
	// Timeout bounds each call, retries included (default 60s). Connecting
	// and waiting for an answer's headers have bounds of their own (5s,
	// 15s), so a store that is down or paused is noticed in seconds.
	Timeout time.Duration
}

// S3 is a Store on the S3 API (aws-sdk-go-v2).
type S3 struct {
	client  *s3.Client
	bucket  string
	prefix  string
	timeout time.Duration
}

var _ Store = (*S3)(nil)

// New returns the store o describes. It sends no request.
func New(ctx context.Context, o Options) (*S3, error) {
	var opts []func(*awsconfig.LoadOptions) error
	if o.Region != "" {
		opts = append(opts, awsconfig.WithRegion(o.Region))
	}
	hc := awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = 5 * time.Second }).
		WithTransportOptions(func(tr *http.Transport) {
			tr.ResponseHeaderTimeout = 15 * time.Second
			tr.MaxIdleConnsPerHost = 32
		})
	opts = append(opts, awsconfig.WithHTTPClient(hc))
	if o.AccessKey != "" {
		opts = append(opts, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(o.AccessKey, o.SecretKey, "")))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("object store: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	// Checksums only where the API requires them (and the explicit
	// SHA-256 of Put): many S3-compatible services do not take the
	// SDK's default CRC32 trailers.
	cfg.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
	cfg.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	client := s3.NewFromConfig(cfg, func(so *s3.Options) {
		if o.Endpoint != "" {
			so.BaseEndpoint = aws.String(o.Endpoint)
		}
		so.UsePathStyle = o.PathStyle
	})
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	prefix := strings.Trim(o.Prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	return &S3{client: client, bucket: o.Bucket, prefix: prefix, timeout: timeout}, nil
}

func (s *S3) key(k string) *string { return aws.String(s.prefix + k) }

// Put implements Store.
func (s *S3) Put(ctx context.Context, key string, r io.ReadSeeker, sum string) error {
	raw, err := hex.DecodeString(sum)
	if err != nil || len(raw) != sha256.Size {
		return fmt.Errorf("object store: put %s: %q is not a SHA-256", key, sum)
	}
	// Checked here too: the store refusing it would say less.
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return fmt.Errorf("object store: put %s: %w", key, err)
	}
	if hex.EncodeToString(h.Sum(nil)) != sum {
		return fmt.Errorf("object store: put %s: %w", key, ErrCorrupt)
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("object store: put %s: %w", key, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	_, err = s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:         aws.String(s.bucket),
		Key:            s.key(key),
		Body:           r,
		ContentLength:  aws.Int64(n),
		ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(raw)),
	})
	if err != nil {
		return fmt.Errorf("object store: put %s: %w", key, err)
	}
	return nil
}

// Get implements Store.
func (s *S3) Get(ctx context.Context, key, sum string, w io.Writer) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: s.key(key)})
	if err != nil {
		if notFound(err) {
			return 0, fmt.Errorf("object store: get %s: %w", key, ErrNotFound)
		}
		return 0, fmt.Errorf("object store: get %s: %w", key, err)
	}
	defer out.Body.Close()
	var h hash.Hash
	if sum != "" {
		h = sha256.New()
		w = io.MultiWriter(w, h)
	}
	n, err := io.Copy(w, out.Body)
	if err != nil {
		return n, fmt.Errorf("object store: get %s: %w", key, err)
	}
	if h != nil && hex.EncodeToString(h.Sum(nil)) != sum {
		return n, fmt.Errorf("object store: get %s: %w", key, ErrCorrupt)
	}
	return n, nil
}

// Has implements Store.
func (s *S3) Has(ctx context.Context, key string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	_, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: s.key(key)})
	switch {
	case err == nil:
		return true, nil
	case notFound(err):
		return false, nil
	default:
		return false, fmt.Errorf("object store: head %s: %w", key, err)
	}
}

// Delete implements Store, in batches of 1,000 (the API's limit).
func (s *S3) Delete(ctx context.Context, keys ...string) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		ids := make([]types.ObjectIdentifier, n)
		for i, k := range keys[:n] {
			ids[i] = types.ObjectIdentifier{Key: s.key(k)}
		}
		out, err := s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: aws.String(s.bucket),
			Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)},
		})
		if err != nil {
			return fmt.Errorf("object store: delete: %w", err)
		}
		for _, e := range out.Errors {
			if aws.ToString(e.Code) != "NoSuchKey" {
				return fmt.Errorf("object store: delete %s: %s: %s", aws.ToString(e.Key), aws.ToString(e.Code), aws.ToString(e.Message))
			}
		}
		keys = keys[n:]
	}
	return nil
}

// List implements Store.
func (s *S3) List(ctx context.Context, prefix string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var keys []string
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: s.key(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("object store: list %s: %w", prefix, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, strings.TrimPrefix(aws.ToString(o.Key), s.prefix))
		}
	}
	return keys, nil
}

// notFound reports whether err is S3's answer for a missing key.
func notFound(err error) bool {
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	if errors.As(err, &nsk) || errors.As(err, &nf) {
		return true
	}
	var ae smithy.APIError
	return errors.As(err, &ae) && (ae.ErrorCode() == "NoSuchKey" || ae.ErrorCode() == "NotFound")
}
