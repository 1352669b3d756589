package config_test

import (
	"io"
	"strings"
	"testing"

	"github.com/gantryhq/gantry/internal/config"
)

// TestObjectStore: GANTRY_OBJECT_STORE parsed into its parts; unset, no
// object store (local folders only) and the default site cache.
func TestObjectStore(t *testing.T) {
	c, err := config.Load(nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.ObjectStore != nil || c.SiteCache != config.DefaultSiteCacheMiB<<20 {
		t.Fatalf("defaults: %+v, %d", c.ObjectStore, c.SiteCache)
	}
	c, err = config.Load([]string{"--site-cache", "512"}, env(map[string]string{
		"GANTRY_OBJECT_STORE": "s3://gantry-artifacts/campus/prod?endpoint=http://127.0.0.1:9000&region=eu-central-1&path_style=1",
	}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := config.ObjectStore{Bucket: "gantry-artifacts", Prefix: "campus/prod", Endpoint: "http://127.0.0.1:9000",
		Region: "eu-central-1", PathStyle: true}
	if c.ObjectStore == nil || *c.ObjectStore != want || c.SiteCache != 512<<20 {
		t.Fatalf("got %+v, %d; want %+v", c.ObjectStore, c.SiteCache, want)
	}
	if c.ObjectStore.String() != "s3://gantry-artifacts/campus/prod" {
		t.Fatalf("String: %s", c.ObjectStore)
	}
	c, err = config.Load(nil, env(map[string]string{"GANTRY_OBJECT_STORE": "s3://bucket"}), io.Discard)
	if err != nil || *c.ObjectStore != (config.ObjectStore{Bucket: "bucket"}) {
		t.Fatalf("bare bucket: %+v %v", c.ObjectStore, err)
	}
}

// TestObjectStoreInvalid: each bad value gets one line naming the
// setting and what to write instead.
func TestObjectStoreInvalid(t *testing.T) {
	t.Parallel()
	const pre = "--object-store (GANTRY_OBJECT_STORE): "
	for _, tc := range []struct{ value, want string }{
		{"https://s3.example/bucket", pre + "must be s3://bucket/prefix?endpoint=…&region=…&path_style=1"},
		{"gantry-artifacts", pre + "must be s3://bucket/prefix"},
		{"s3://Bad_Bucket/x", pre + `bucket "Bad_Bucket" is not a bucket name`},
		{"s3:///prefix", pre + `bucket "" is not a bucket name`},
		{"s3://AKIA:secret@bucket", pre + "must not carry credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY instead"},
		{"s3://bucket/a//b", pre + `prefix "a//b" must be folder names separated by single slashes`},
		{"s3://bucket/a/../b", pre + `prefix "a/../b" must be folder names`},
		{"s3://bucket?endpoint=minio:9000", pre + `endpoint "minio:9000" must be http(s)://host[:port] of the S3 service`},
		{"s3://bucket?endpoint=http://h/x", pre + `endpoint "http://h/x" must be http(s)://host[:port]`},
		{"s3://bucket?path_style=yes", pre + `path_style "yes" must be 1 or 0`},
		{"s3://bucket?region=", pre + `region "" is not a region name`},
		{"s3://bucket?regoin=eu-west-1", pre + `unknown parameter "regoin": only endpoint, region and path_style are read`},
		{"s3://bucket?region=a&region=b", pre + "region is given more than once"},
	} {
		t.Run(tc.value, func(t *testing.T) {
			t.Parallel()
			_, err := config.Load(nil, env(map[string]string{"GANTRY_OBJECT_STORE": tc.value}), io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
			if err != nil && strings.Count(err.Error(), "\n") != 1 {
				t.Errorf("want one line under the header, got %q", err)
			}
		})
	}
	_, err := config.Load([]string{"--site-cache", "1G"}, env(nil), io.Discard)
	if err == nil || !strings.Contains(err.Error(), `--site-cache (GANTRY_SITE_CACHE): "1G" must be a size in MiB, at least 16`) {
		t.Errorf("site cache: %v", err)
	}
}
