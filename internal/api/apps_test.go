package api_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gantryhq/gantry"
)

// expressApp is an Express server with what the edge must carry: a JSON
// answer about the request, a Server-Sent Events stream, a request body
// echo, a WebSocket echo (a minimal hand-written one on node's own
// 'upgrade' event: text frames of up to 125 bytes), and a crash on request.
var expressApp = map[string]string{
	"package.json": `{"name":"express-demo","version":"1.0.0","main":"server.js",
  "scripts":{"start":"node server.js"},"dependencies":{"express":"^4.21.2"}}`,
	"server.js": `const express = require('express');
const http = require('http');
const crypto = require('crypto');
const app = express();
app.get('/', (req, res) => res.send('hello from express ' + (process.env.APP_VERSION || '')));
app.get('/request', (req, res) => res.json({host: req.headers.host, xff: req.headers['x-forwarded-for'] || '',
  proto: req.headers['x-forwarded-proto'] || ''}));
app.post('/echo', express.text({type: '*/*'}), (req, res) => res.send('got ' + req.body));
app.get('/events', (req, res) => {
  res.set({'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache'});
  res.flushHeaders();
  let i = 0;
  const t = setInterval(() => {
    res.write('data: tick ' + (++i) + '\n\n');
    if (i === 3) { clearInterval(t); res.end(); }
  }, 300);
  req.on('close', () => clearInterval(t));
});
app.get('/crash', (req, res) => { console.error('Error: crash requested'); process.exit(1); });
const server = http.createServer(app);
server.on('upgrade', (req, socket) => {
  const accept = crypto.createHash('sha1')
    .update(req.headers['sec-websocket-key'] + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
  socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
    'Sec-WebSocket-Accept: ' + accept + '\r\n\r\n');
  socket.on('data', (buf) => {
    const len = buf[1] & 0x7f, mask = buf.subarray(2, 6), data = Buffer.alloc(len);
    for (let i = 0; i < len; i++) data[i] = buf[6 + i] ^ mask[i % 4];
    const out = Buffer.from('echo: ' + data);
    socket.write(Buffer.concat([Buffer.from([0x81, out.length]), out]));
  });
});
console.log('api key is ' + process.env.API_KEY);
server.listen(process.env.PORT, () => console.log('listening on ' + process.env.PORT));
`,
}

// liveClient sends requests for sub through a real listener serving the
// whole api.Server (request log wrapper included).
type liveClient struct {
	t    *testing.T
	addr string
	host string
}

func (c liveClient) get(path string) (int, string) {
	c.t.Helper()
	return c.do("GET", path, "")
}

func (c liveClient) do(method, path, body string) (int, string) {
	c.t.Helper()
	req, _ := http.NewRequest(method, "http://"+c.addr+path, strings.NewReader(body))
	req.Host = c.host
	if body != "" {
		req.Header.Set("Content-Type", "text/plain")
	}
	cl := &http.Client{Timeout: 20 * time.Second}
	resp, err := cl.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestExpressApp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := withDeploys(t, e, true)
	url := d.git.Repo(t, "alice/express-demo", "main", "express app", expressApp)
	rec := e.do(request{method: "POST", url: "/api/projects/public", headers: bearer(e.token),
		body: fmt.Sprintf(`{"repository":{"url":%q},"name":"Express Demo","branch":"main"}`, url)})
	if rec.Code != http.StatusCreated {
		t.Fatalf("create project: %d %s", rec.Code, rec.Body.String())
	}
	project := dataField[gantry.Project](t, rec, "project")
	const apiKey = "sk_live_4f9a8b7c6d5e"
	rec = e.do(request{method: "PUT", url: "/api/projects/" + project.ID + "/env", headers: bearer(e.token),
		body: `{"variables":[{"key":"API_KEY","value":"` + apiKey + `","isSecret":true},{"key":"APP_VERSION","value":"v1"}]}`})
	if rec.Code != 200 || strings.Contains(rec.Body.String(), apiKey) {
		t.Fatalf("set env: %d %s", rec.Code, rec.Body.String())
	}
	rec = e.do(request{method: "POST", url: "/api/deployments", headers: bearer(e.token), body: `{"projectId":"` + project.ID + `"}`})
	id := dataField[gantry.Deployment](t, rec, "deployment").ID
	dep := d.waitDeployment(t, id)
	logsOf := func() string {
		rec := e.do(request{method: "GET", url: "/api/deployments/" + id + "/logs?limit=5000", headers: bearer(e.token)})
		var lines []string
		for _, l := range dataField[[]gantry.LogEntry](t, rec, "logs") {
			lines = append(lines, l.Type+" "+l.Level+": "+l.Message)
		}
		return strings.Join(lines, "\n")
	}
	if dep.Status != gantry.DeploymentLive {
		t.Fatalf("got %q (%s); logs:\n%s", dep.Status, dep.Error, logsOf())
	}
	if dep.BuildInfo.StartCommand != "npm start" || dep.BuildInfo.Framework != "express" {
		t.Fatalf("got build info %+v", dep.BuildInfo)
	}

	srv := httptest.NewServer(e.srv)
	defer srv.Close()
	live := liveClient{t: t, addr: srv.Listener.Addr().String(), host: project.Subdomain + ".localhost:8080"}
	if code, body := live.get("/"); code != 200 || body != "hello from express v1" {
		t.Fatalf("GET /: %d %q", code, body)
	}
	_, body := live.get("/request")
	var seen struct{ Host, Xff, Proto string }
	json.Unmarshal([]byte(body), &seen)
	if seen.Host != live.host || seen.Xff != "127.0.0.1" || seen.Proto != "http" {
		t.Fatalf("the app saw %s", body)
	}
	if code, body := live.do("POST", "/echo", "ping"); code != 200 || body != "got ping" {
		t.Fatalf("POST /echo: %d %q", code, body)
	}

	t.Run("server-sent events stream through", func(t *testing.T) {
		req, _ := http.NewRequest("GET", "http://"+live.addr+"/events", nil)
		req.Host = live.host
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		for i := 1; i <= 2; i++ {
			line, err := br.ReadString('\n')
			if want := fmt.Sprintf("data: tick %d\n", i); err != nil || line != want {
				t.Fatalf("got %q %v, want %q", line, err, want)
			}
			br.ReadString('\n')
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("two ticks took %s: the stream is buffered", d)
		}
	})

	t.Run("a WebSocket echoes through", func(t *testing.T) {
		conn, err := net.Dial("tcp", live.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		key := make([]byte, 16)
		rand.Read(key)
		k := base64.StdEncoding.EncodeToString(key)
		fmt.Fprintf(conn, "GET /ws HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n", live.host, k)
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("handshake: %v %v", resp, err)
		}
		sum := sha1.Sum([]byte(k + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
		if got := resp.Header.Get("Sec-WebSocket-Accept"); got != base64.StdEncoding.EncodeToString(sum[:]) {
			t.Fatalf("got Sec-WebSocket-Accept %q", got)
		}
		for _, msg := range []string{"hello", "again"} {
			frame := []byte{0x81, 0x80 | byte(len(msg)), 1, 2, 3, 4}
			for i := range len(msg) {
				frame = append(frame, msg[i]^frame[2+i%4])
			}
			conn.Write(frame)
			head := make([]byte, 2)
			if _, err := io.ReadFull(br, head); err != nil {
				t.Fatal(err)
			}
			payload := make([]byte, head[1]&0x7f)
			if _, err := io.ReadFull(br, payload); err != nil {
				t.Fatal(err)
			}
			if head[0] != 0x81 || string(payload) != "echo: "+msg {
				t.Fatalf("got frame %x %q", head, payload)
			}
		}
	})

	// Secrets: masked in API answers, redacted from runtime logs.
	rec = e.do(request{method: "GET", url: "/api/deployments/" + id, headers: bearer(e.token)})
	if strings.Contains(rec.Body.String(), apiKey) || !strings.Contains(rec.Body.String(), `"key":"API_KEY","value":"••••••••","isSecret":true`) {
		t.Fatalf("deployment answer: %s", rec.Body.String())
	}
	waitFor(t, "the app's output in its logs", func() bool { return strings.Contains(logsOf(), "runtime info: listening on 3000") })
	logs := logsOf()
	if strings.Contains(logs, apiKey) || !strings.Contains(logs, "runtime info: api key is ••••••••") {
		t.Fatalf("logs:\n%s", logs)
	}

	// A crash restarts the app; the log stream carries it live.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/deployments/"+id+"/logs/stream", nil)
	req.Host = "localhost:8080"
	req.Header.Set("Authorization", "Bearer "+e.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan sseEvent, 100)
	go readEvents(t, res.Body, events)
	live.get("/crash")
	for saw := false; !saw; {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("log stream ended")
			}
			var m struct{ Data gantry.LogEntry }
			json.Unmarshal([]byte(ev.data), &m)
			saw = m.Data.Type == gantry.LogRuntime && strings.HasPrefix(m.Data.Message, "App exited with code 1; restarting in")
		case <-time.After(20 * time.Second):
			t.Fatalf("no crash entry on the stream; logs:\n%s", logsOf())
		}
	}
	cancel()
	waitFor(t, "the app to answer again", func() bool { code, _ := live.get("/"); return code == 200 })
	if !strings.Contains(logsOf(), "runtime error: Error: crash requested") {
		t.Fatalf("no crash output in the logs:\n%s", logsOf())
	}

	// Stop: 503. Restart: health-checked, 200. Delete: 404.
	sub := project.Subdomain
	if rec := e.do(request{method: "POST", url: "/api/deployments/hosting/stop/" + sub, headers: bearer(e.token)}); rec.Code != 200 {
		t.Fatalf("stop: %d %s", rec.Code, rec.Body.String())
	}
	if code, body := live.get("/"); code != 503 || !strings.Contains(body, "This app is stopped") {
		t.Fatalf("stopped: %d %q", code, body)
	}
	if rec := e.do(request{method: "POST", url: "/api/deployments/hosting/restart/" + sub, headers: bearer(e.token)}); rec.Code != 200 {
		t.Fatalf("restart: %d %s", rec.Code, rec.Body.String())
	}
	if code, body := live.get("/"); code != 200 || body != "hello from express v1" {
		t.Fatalf("restarted: %d %q", code, body)
	}
	if rec := e.do(request{method: "DELETE", url: "/api/deployments/" + id, headers: bearer(e.token)}); rec.Code != 200 {
		t.Fatalf("delete: %d %s", rec.Code, rec.Body.String())
	}
	if code, _ := live.get("/"); code != 404 {
		t.Fatalf("deleted: %d", code)
	}
}

// waitFor polls cond for up to 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
