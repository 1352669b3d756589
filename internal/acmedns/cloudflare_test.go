package acmedns_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/gantryhq/gantry/internal/acmedns"
)

// fakeCloudflare speaks the part of Cloudflare's API v4 the adapter uses:
// zones by name, DNS records listed, created and deleted.
type fakeCloudflare struct {
	mu      sync.Mutex
	records map[string]map[string]string // id → {name, content}
	next    int
}

func (f *fakeCloudflare) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer cf-token" {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"success":false,"errors":[{"code":9109,"message":"Invalid access token"}],"messages":[],"result":null}`)
		return
	}
	reply := func(result any) {
		json.NewEncoder(w).Encode(map[string]any{"success": true, "errors": []any{}, "messages": []any{}, "result": result,
			"result_info": map[string]int{"page": 1, "per_page": 100, "count": 1, "total_count": 1, "total_pages": 1}})
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/zones":
		if r.URL.Query().Get("name") != "apps.example.com" {
			reply([]any{})
			return
		}
		reply([]map[string]string{{"id": "zone1", "name": "apps.example.com"}})
	case r.Method == http.MethodPost && r.URL.Path == "/zones/zone1/dns_records":
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		if body["type"] != "TXT" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		f.next++
		id := fmt.Sprintf("rec%d", f.next)
		f.records[id] = map[string]string{"name": body["name"].(string), "content": body["content"].(string)}
		reply(map[string]any{"id": id, "type": "TXT", "name": body["name"], "content": body["content"]})
	case r.Method == http.MethodGet && r.URL.Path == "/zones/zone1/dns_records":
		q := r.URL.Query()
		var out []map[string]string
		for id, rec := range f.records {
			if rec["name"] == q.Get("name") && rec["content"] == q.Get("content") {
				out = append(out, map[string]string{"id": id, "type": "TXT", "name": rec["name"], "content": rec["content"]})
			}
		}
		reply(out)
	case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/zones/zone1/dns_records/"):
		id := strings.TrimPrefix(r.URL.Path, "/zones/zone1/dns_records/")
		delete(f.records, id)
		reply(map[string]string{"id": id})
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeCloudflare) contents() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.records {
		out = append(out, r["name"]+"="+r["content"])
	}
	return out
}

func TestCloudflare(t *testing.T) {
	f := &fakeCloudflare{records: map[string]map[string]string{}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := &acmedns.Cloudflare{APIToken: "cf-token", BaseURL: srv.URL}
	ctx := context.Background()

	if _, err := p.AppendRecords(ctx, "apps.example.com.", challenge("one")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.AppendRecords(ctx, "apps.example.com.", challenge("two")); err != nil {
		t.Fatal(err)
	}
	if got := f.contents(); len(got) != 2 {
		t.Fatalf("got records %v, want two", got)
	}
	if _, err := p.DeleteRecords(ctx, "apps.example.com.", challenge("one")); err != nil {
		t.Fatal(err)
	}
	if got := f.contents(); len(got) != 1 || got[0] != "_acme-challenge.apps.example.com=two" {
		t.Errorf("after a delete: got %v, want [_acme-challenge.apps.example.com=two]", got)
	}

	bad := &acmedns.Cloudflare{APIToken: "wrong", BaseURL: srv.URL}
	if _, err := bad.AppendRecords(ctx, "apps.example.com.", challenge("x")); err == nil {
		t.Error("wrong token: got no error")
	}
	other := &acmedns.Cloudflare{APIToken: "cf-token", BaseURL: srv.URL}
	if _, err := other.AppendRecords(ctx, "elsewhere.example.", challenge("x")); err == nil {
		t.Error("unknown zone: got no error")
	}
}
