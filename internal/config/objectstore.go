package config

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// ObjectStore is GANTRY_OBJECT_STORE parsed: an S3-compatible bucket the
// replicas keep artifacts in (issue 26, point 4). Credentials are not
// part of it: they come from the standard AWS variables and files.
type ObjectStore struct {
	Bucket    string
	Prefix    string // without slashes at either end; "" for none
	Endpoint  string // http(s)://host[:port]; "" for AWS S3
	Region    string // "" for the SDK's default (AWS_REGION)
	PathStyle bool   // bucket in the path rather than in the host name
}

// DefaultSiteCacheMiB bounds the sites an edge keeps fetched from the
// object store: 2 GiB holds a few hundred typical static sites.
const DefaultSiteCacheMiB = 2048

// bucketPattern is an S3 bucket name (the rules every S3 service shares).
var bucketPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// checkObjectStore validates --object-store and --site-cache.
func (c *Config) checkObjectStore(v func(string) string, bad badSetting) {
	if n, err := strconv.ParseInt(v("site-cache"), 10, 64); err != nil || n < 16 || n > 1<<30 {
		bad("site-cache", "%q must be a size in MiB, at least 16", v("site-cache"))
	} else {
		c.SiteCache = n << 20
	}
	raw := v("object-store")
	if raw == "" {
		return
	}
	o, msg := parseObjectStore(raw)
	if msg != "" {
		bad("object-store", "%s", msg)
		return
	}
	c.ObjectStore = o
}

// parseObjectStore parses s3://bucket/prefix?endpoint=…&region=…&path_style=1,
// or says in one line what is wrong with it.
func parseObjectStore(raw string) (*ObjectStore, string) {
	const form = "s3://bucket/prefix?endpoint=…&region=…&path_style=1"
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "s3" || u.Opaque != "" {
		return nil, "must be " + form
	}
	if u.User != nil {
		return nil, "must not carry credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY instead"
	}
	if u.Fragment != "" {
		return nil, "must not have a #fragment"
	}
	o := &ObjectStore{Bucket: u.Host}
	if !bucketPattern.MatchString(o.Bucket) || strings.Contains(o.Bucket, "..") {
		return nil, "bucket " + strconv.Quote(o.Bucket) + " is not a bucket name (3 to 63 lowercase letters, digits, dots and hyphens): " + form
	}
	o.Prefix = strings.Trim(u.Path, "/")
	for _, part := range strings.Split(o.Prefix, "/") {
		if o.Prefix != "" && (part == "" || part == "." || part == "..") {
			return nil, "prefix " + strconv.Quote(o.Prefix) + " must be folder names separated by single slashes, without . or .."
		}
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, "has a bad query: " + form
	}
	for k, vs := range q {
		if len(vs) != 1 {
			return nil, k + " is given more than once"
		}
		val := vs[0]
		switch k {
		case "endpoint":
			e, err := url.Parse(val)
			if err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" || e.User != nil ||
				strings.Trim(e.Path, "/") != "" || e.RawQuery != "" || e.Fragment != "" {
				return nil, "endpoint " + strconv.Quote(val) + " must be http(s)://host[:port] of the S3 service (e.g. endpoint=https://s3.campus.example)"
			}
			o.Endpoint = strings.TrimSuffix(val, "/")
		case "region":
			if val == "" || strings.ContainsAny(val, " /?#") {
				return nil, "region " + strconv.Quote(val) + " is not a region name (e.g. region=eu-central-1)"
			}
			o.Region = val
		case "path_style":
			b, err := strconv.ParseBool(val)
			if err != nil {
				return nil, "path_style " + strconv.Quote(val) + " must be 1 or 0"
			}
			o.PathStyle = b
		default:
			return nil, "unknown parameter " + strconv.Quote(k) + ": only endpoint, region and path_style are read"
		}
	}
	return o, ""
}

// String is the store's URL without anything secret (it has nothing
// secret): for logs.
func (o *ObjectStore) String() string {
	s := "s3://" + o.Bucket
	if o.Prefix != "" {
		s += "/" + o.Prefix
	}
	return s
}
