package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
	"github.com/gantryhq/gantry/internal/deploy"
)

// waitDeployment polls the API until deployment id is no longer in progress.
func (d *deployEnv) waitDeployment(t *testing.T, id string) gantry.Deployment {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		rec := d.do(request{method: "GET", url: "/api/deployments/" + id, headers: bearer(d.token)})
		dep := dataField[gantry.Deployment](t, rec, "deployment")
		if !dep.InProgress() {
			deploy.Settled(d.svc, id) // its route applied
			return dep
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("deployment %s still in progress", id)
	return gantry.Deployment{}
}

func (d *deployEnv) liveGet(path string) *httptest.ResponseRecorder {
	return d.do(request{method: "GET", url: path, host: "my-site.localhost:8080"})
}

func TestDeploymentsAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := withDeploys(t, e, true)
	project := d.createProject(t, d.site(t, "site", "first"), "My Site")
	bob := e.otherToken(t)

	// fail is a refused request: a failure answer with status and, when
	// given, message.
	fail := func(name string, r request, status int, message string) scenario {
		return scenario{name: name, request: r, wantStatus: status, wantMessage: message, wantFailure: true}
	}
	runScenariosOn(t, e, []scenario{
		fail("no project id", request{method: "POST", url: "/api/deployments", headers: bearer(e.token), body: `{"version":"1.0.0"}`}, 400, "projectId is required"),
		fail("bob's deploy of alice's project", request{method: "POST", url: "/api/deployments", headers: bearer(bob), body: `{"projectId":"` + project + `"}`}, 404, "Project not found"),
		fail("escaping output", request{method: "POST", url: "/api/deployments", headers: bearer(e.token), body: `{"projectId":"` + project + `","outputDirectory":"../x"}`}, 400, "Output directory must be a relative path inside the repository"),
		fail("wrong type", request{method: "POST", url: "/api/deployments", headers: bearer(e.token), body: `{"projectId":5}`}, 400, ""),
		fail("no token", request{method: "POST", url: "/api/deployments", body: `{"projectId":"` + project + `"}`}, 401, ""),
		fail("unknown deployment", request{method: "GET", url: "/api/deployments/nope", headers: bearer(e.token)}, 404, "Deployment not found"),
		fail("stop unknown subdomain", request{method: "POST", url: "/api/deployments/hosting/stop/nothing-here", headers: bearer(e.token)}, 404, "No deployment found for nothing-here"),
		fail("bad log limit", request{method: "GET", url: "/api/deployments/x/logs?limit=abc", headers: bearer(e.token)}, 400, "limit must be a whole number from 1 to 5000"),
	})

	rec := e.do(request{method: "POST", url: "/api/deployments", headers: bearer(e.token), body: `{"projectId":"` + project + `","version":"1.0.0"}`})
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body.String())
	}
	created := dataField[gantry.Deployment](t, rec, "deployment")
	if created.ID == "" || created.Status != gantry.DeploymentPending || created.Version != "1.0.0" || created.Subdomain != "my-site" {
		t.Fatalf("created %+v", created)
	}
	dep := d.waitDeployment(t, created.ID)
	if dep.Status != gantry.DeploymentLive || dep.URL != "http://my-site.localhost:8080" || dep.Project == nil || dep.Project.Name != "My Site" ||
		dep.User == nil || dep.User.Username != "alice" || len(dep.BuildLogs) == 0 || dep.Metadata.CommitMessage != "add first" {
		t.Fatalf("live deployment %+v", dep)
	}
	if rec := d.liveGet("/"); rec.Code != 200 || !strings.Contains(rec.Body.String(), "first") {
		t.Fatalf("live site: %d %s", rec.Code, rec.Body.String())
	}
	if rec := e.do(request{method: "GET", url: "/api/deployments/" + dep.ID, headers: bearer(bob)}); rec.Code != 404 {
		t.Fatalf("bob reads alice's deployment: %d", rec.Code)
	}
	if rec := e.do(request{method: "POST", url: "/api/deployments/hosting/stop/my-site", headers: bearer(bob)}); rec.Code != 404 {
		t.Fatalf("bob stops alice's site: %d", rec.Code)
	}
	if rec := e.do(request{method: "DELETE", url: "/api/deployments/" + dep.ID, headers: bearer(bob)}); rec.Code != 404 {
		t.Fatalf("bob deletes alice's deployment: %d", rec.Code)
	}
	logs := dataField[[]gantry.LogEntry](t, e.do(request{method: "GET", url: "/api/deployments/" + dep.ID + "/logs?limit=2", headers: bearer(e.token)}), "logs")
	if len(logs) != 2 || logs[1].Level != gantry.LevelSuccess || !strings.HasPrefix(logs[1].Message, "Deployment is live") {
		t.Fatalf("newest 2 logs: %+v", logs)
	}
	list := dataField[[]gantry.Deployment](t, e.do(request{method: "GET", url: "/api/deployments", headers: bearer(e.token)}), "deployments")
	if len(list) != 1 || list[0].ID != dep.ID || list[0].Project.Name != "My Site" {
		t.Fatalf("list %+v", list)
	}

	// Stop: 503; restart: 200; clear logs; delete: 404 on the site.
	if rec := e.do(request{method: "POST", url: "/api/deployments/hosting/stop/my-site", headers: bearer(e.token), body: `{"deploymentId":"` + dep.ID + `"}`}); rec.Code != 200 {
		t.Fatalf("stop: %d %s", rec.Code, rec.Body.String())
	}
	if rec := d.liveGet("/"); rec.Code != 503 {
		t.Fatalf("stopped site answers %d", rec.Code)
	}
	if rec := e.do(request{method: "POST", url: "/api/deployments/hosting/stop/my-site", headers: bearer(e.token), body: `{"deploymentId":"` + dep.ID + `"}`}); rec.Code != 400 {
		t.Fatalf("second stop: %d %s", rec.Code, rec.Body.String())
	}
	if rec := e.do(request{method: "POST", url: "/api/deployments/hosting/restart/my-site", headers: bearer(e.token)}); rec.Code != 200 {
		t.Fatalf("restart: %d %s", rec.Code, rec.Body.String())
	}
	if rec := d.liveGet("/"); rec.Code != 200 {
		t.Fatalf("restarted site answers %d", rec.Code)
	}
	if rec := e.do(request{method: "DELETE", url: "/api/deployments/" + dep.ID + "/logs", headers: bearer(e.token)}); rec.Code != 200 {
		t.Fatalf("clear logs: %d", rec.Code)
	}
	if rec := e.do(request{method: "GET", url: "/api/deployments/" + dep.ID + "/logs", headers: bearer(e.token)}); dataField[int](t, rec, "total") != 0 {
		t.Fatalf("logs after clear: %s", rec.Body.String())
	}
	if rec := e.do(request{method: "DELETE", url: "/api/deployments/" + dep.ID, headers: bearer(e.token)}); rec.Code != 200 {
		t.Fatalf("delete: %d %s", rec.Code, rec.Body.String())
	}
	if rec := d.liveGet("/"); rec.Code != 404 {
		t.Fatalf("deleted site answers %d", rec.Code)
	}
}

// sseEvent is one parsed Server-Sent Event.
type sseEvent struct {
	id   string
	data string
}

// readEvents reads events from r until want events arrived or the reader ends.
func readEvents(t *testing.T, r io.Reader, events chan<- sseEvent) {
	sc := bufio.NewScanner(r)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.data != "" {
				events <- ev
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			ev.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			ev.data = strings.TrimPrefix(line, "data: ")
		}
	}
	close(events)
}

func TestLogStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := withDeploys(t, e, false) // no workers: the test writes the log entries
	project := d.createProject(t, d.site(t, "site", "x"), "My Site")
	rec := e.do(request{method: "POST", url: "/api/deployments", headers: bearer(e.token), body: `{"projectId":"` + project + `"}`})
	id := dataField[gantry.Deployment](t, rec, "deployment").ID
	srv := httptest.NewServer(e.srv)
	defer srv.Close()

	open := func(token, lastID string) (*http.Response, chan sseEvent, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/deployments/"+id+"/logs/stream", nil)
		req.Host = "localhost:8080"
		req.Header.Set("Authorization", "Bearer "+token)
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		events := make(chan sseEvent, 100)
		if res.StatusCode == 200 {
			go readEvents(t, res.Body, events)
		}
		return res, events, cancel
	}
	next := func(events chan sseEvent) sseEvent {
		t.Helper()
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("stream ended")
			}
			return ev
		case <-time.After(5 * time.Second):
			t.Fatal("no event within 5 s")
		}
		return sseEvent{}
	}
	appendLog := func(msg string) {
		e := gantry.LogEntry{Level: gantry.LevelInfo, Type: gantry.LogDeployment, Message: msg}
		if err := d.svc.Store.AppendLog(context.Background(), id, &e); err != nil {
			t.Fatal(err)
		}
		d.svc.Hub.Publish("logs:"+id, e)
	}

	if res, _, cancel := open(e.otherToken(t), ""); res.StatusCode != 404 {
		t.Fatalf("bob's stream: %d", res.StatusCode)
	} else {
		cancel()
	}
	// Last-Event-ID is a log entry number: digits only.
	for _, bad := range []string{"+5", "-1", "5x", "0x10", "1e3"} {
		res, _, cancel := open(e.token, bad)
		cancel()
		if res.StatusCode != 400 {
			t.Errorf("Last-Event-ID %q: got %d, want 400", bad, res.StatusCode)
		}
	}
	res, events, cancel := open(e.token, "")
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	if ev := next(events); ev.data != `{"type":"connected"}` {
		t.Fatalf("first event %+v", ev)
	}
	for i := 1; i <= 3; i++ {
		appendLog(fmt.Sprint("line ", i))
	}
	var seen []string
	var lastID string
	for i := 0; i < 3; i++ {
		ev := next(events)
		lastID = ev.id
		var m struct {
			Type string          `json:"type"`
			Data gantry.LogEntry `json:"data"`
		}
		json.Unmarshal([]byte(ev.data), &m)
		if m.Type != "log" || ev.id != fmt.Sprint(m.Data.Seq) {
			t.Fatalf("event %+v", ev)
		}
		seen = append(seen, m.Data.Message)
	}
	// The queue line written at creation came before the stream opened.
	if got := strings.Join(seen, ","); got != "line 1,line 2,line 3" {
		t.Fatalf("got %s", got)
	}
	cancel()
	res.Body.Close()

	// Resume: entries written while disconnected arrive once, in order.
	appendLog("line 4")
	appendLog("line 5")
	_, events, cancel = open(e.token, lastID)
	defer cancel()
	next(events) // connected
	var resumed []string
	for i := 0; i < 3; i++ {
		if i == 2 {
			appendLog("line 6")
		}
		ev := next(events)
		var m struct {
			Data gantry.LogEntry `json:"data"`
		}
		json.Unmarshal([]byte(ev.data), &m)
		resumed = append(resumed, m.Data.Message)
	}
	if got := strings.Join(resumed, ","); got != "line 4,line 5,line 6" {
		t.Fatalf("resumed %s, want line 4,line 5,line 6", got)
	}
}

// openStream opens the log stream of deployment id on srv with token and
// returns its events, closed when the stream ends; the first is
// {"type":"connected"}.
func openStream(t *testing.T, srv *httptest.Server, id, token string) <-chan sseEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/deployments/"+id+"/logs/stream", nil)
	req.Host = "localhost:8080"
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		t.Fatalf("stream: got %d, want 200", res.StatusCode)
	}
	events := make(chan sseEvent, 100)
	go readEvents(t, res.Body, events)
	select {
	case ev := <-events:
		if ev.data != `{"type":"connected"}` {
			t.Fatalf("first event %+v", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("not connected within 5 s")
	}
	return events
}

// waitEnd waits until events closes, failing after within.
func waitEnd(t *testing.T, events <-chan sseEvent, within time.Duration) {
	t.Helper()
	timeout := time.After(within)
	for {
		select {
		case _, ok := <-events:
			if !ok {
				return
			}
		case <-timeout:
			t.Fatalf("the stream was still open after %v", within)
		}
	}
}

// send sends one request for the public host to srv, with token when it
// is not empty, and returns the answer's status.
func send(t *testing.T, srv *httptest.Server, method, path, token, body string) int {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	req.Host = "localhost:8080"
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// streamFixture serves e with one deployment of alice's (no build
// workers) and returns the server and the deployment's id.
func streamFixture(t *testing.T, e *testEnv) (*httptest.Server, string) {
	t.Helper()
	d := withDeploys(t, e, false)
	project := d.createProject(t, d.site(t, "site", "x"), "My Site")
	rec := e.do(request{method: "POST", url: "/api/deployments", headers: bearer(e.token), body: `{"projectId":"` + project + `"}`})
	srv := httptest.NewServer(e.srv)
	t.Cleanup(srv.Close) // after the streams' clients leave (cleanups run last first)
	return srv, dataField[gantry.Deployment](t, rec, "deployment").ID
}

// TestLogStreamEndsWhenDeploymentDeleted: deleting a deployment ends its
// open log streams at once (well before the next heartbeat), and the
// stream cannot be opened again.
func TestLogStreamEndsWhenDeploymentDeleted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv, id := streamFixture(t, e)

	events := openStream(t, srv, id, e.token)
	if got := send(t, srv, "DELETE", "/api/deployments/"+id, e.token, ""); got != 200 {
		t.Fatalf("delete: got %d, want 200", got)
	}
	waitEnd(t, events, 3*time.Second) // the heartbeat is 15 s
	if got := send(t, srv, "GET", "/api/deployments/"+id+"/logs/stream", e.token, ""); got != 404 {
		t.Errorf("reopening the stream: got %d, want 404", got)
	}
}

// TestLogStreamEndsWithSession: a stream whose session no longer signs in
// (here: the account was deactivated) ends at the next heartbeat.
func TestLogStreamEndsWithSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.Heartbeat = 200 * time.Millisecond
	srv, id := streamFixture(t, e)

	events := openStream(t, srv, id, e.token)
	select { // the stream stays open (heartbeats) while the session is good
	case _, ok := <-events:
		if !ok {
			t.Fatal("the stream ended with the session still good")
		}
	case <-time.After(time.Second):
	}
	if err := e.db.SetUserActive(context.Background(), e.alice.ID, false); err != nil {
		t.Fatal(err)
	}
	waitEnd(t, events, 3*time.Second)
	if got := send(t, srv, "GET", "/api/deployments/"+id+"/logs/stream", e.token, ""); got != 403 {
		t.Errorf("reopening the stream: got %d, want 403", got)
	}
}

// TestLogStreamEndsWithLogout: signing out ends the session on the server,
// and with it the session's open log streams, at the next heartbeat.
func TestLogStreamEndsWithLogout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.srv.Heartbeat = 200 * time.Millisecond
	srv, id := streamFixture(t, e)

	events := openStream(t, srv, id, e.token)
	if got := send(t, srv, "POST", "/api/auth/logout", e.token, ""); got != 200 {
		t.Fatalf("logout: got %d, want 200", got)
	}
	waitEnd(t, events, 3*time.Second)
	if got := send(t, srv, "GET", "/api/deployments/"+id+"/logs/stream", e.token, ""); got != 401 {
		t.Errorf("reopening the stream: got %d, want 401", got)
	}
}
