package clustertest

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// received is one log line a stream delivered, and when.
type received struct {
	Seq       int64
	Timestamp time.Time
	Message   string
	at        time.Time
}

// follow reads the deployment's log stream (SSE) on r from its first line
// until ctx ends.
func follow(ctx context.Context, t *testing.T, r *replica, token, id string, mu *sync.Mutex, got *[]received) {
	streamFrom(ctx, r, token, id, 0, mu, got)
}

// streamFrom reads the deployment's log stream on r after the line seq
// last (Last-Event-ID; 0: from the first line) until it ends or ctx does.
func streamFrom(ctx context.Context, r *replica, token, id string, last int64, mu *sync.Mutex, got *[]received) {
	req, _ := http.NewRequestWithContext(ctx, "GET", r.base+"/api/deployments/"+id+"/logs/stream", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Last-Event-ID", strconv.FormatInt(last, 10))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return
	}
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var m struct {
			Type string
			Data *received
		}
		if json.Unmarshal([]byte(data), &m) != nil || m.Type != "log" || m.Data == nil {
			continue
		}
		m.Data.at = time.Now()
		mu.Lock()
		*got = append(*got, *m.Data)
		mu.Unlock()
	}
}

// TestLogsFollowedAcrossReplicas (B1): a build's log followed from the
// start on the replica that does not build it has every line the builder
// stored, in order, without a duplicate, the last one at most 1 s after it
// was stored. Before the change feed such a stream saw what was stored
// when it connected and nothing after.
func TestLogsFollowedAcrossReplicas(t *testing.T) {
	c := newCluster(t, nil)
	a, b := c.start("a"), c.start("b")
	token := register(t, a, "eve")
	url := c.git.Repo(t, "eve/chatty", "main", "chatty", map[string]string{
		"package.json": `{"name":"chatty","version":"1.0.0","private":true}`,
		"build.js": `const fs = require("fs");
let i = 0;
const tick = setInterval(() => {
  console.log("tick " + ++i);
  if (i < 25) return;
  clearInterval(tick);
  fs.mkdirSync("dist", { recursive: true });
  fs.writeFileSync("dist/index.html", "<h1>chatty</h1>");
}, Number(process.argv[2]));
`,
	})
	p := createProject(t, a, token, url, "chatty", "node build.js 120")
	id := deploy(t, a, token, p.ID)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	streams := map[*replica]*[]received{a: {}, b: {}}
	for r, got := range streams {
		go follow(ctx, t, r, token, id, &mu, got)
	}
	building := builder(t, "build.js 120", 60*time.Second, a, b)
	other := map[*replica]*replica{a: b, b: a}[building]
	d := waitDone(t, building, token, id, 90*time.Second)
	if d.Status != "live" {
		t.Fatalf("deployment: %s\n%s", d.Status, d.log())
	}
	var stored struct{ Logs []received }
	building.call(t, "GET", "/api/deployments/"+id+"/logs?limit=5000", token, "", &stored)
	last := stored.Logs[len(stored.Logs)-1]

	// Wait for the last line on the other replica's stream.
	var seen []received
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		seen = slices.Clone(*streams[other])
		mu.Unlock()
		if len(seen) > 0 && seen[len(seen)-1].Seq >= last.Seq || time.Now().After(deadline) {
			break
		}
	}
	var want, got []int64
	for _, l := range stored.Logs {
		want = append(want, l.Seq)
	}
	for _, l := range seen {
		got = append(got, l.Seq)
	}
	if !slices.Equal(got, want) {
		mu.Lock()
		defer mu.Unlock()
		var own []int64
		for _, l := range *streams[building] {
			own = append(own, l.Seq)
		}
		t.Fatalf("replica %s's stream delivered seqs %v; replica %s stored %v (its own stream: %v)", other.node, got, building.node, want, own)
	}
	if lag := seen[len(seen)-1].at.Sub(last.Timestamp); lag > time.Second {
		t.Fatalf("the last line reached replica %s's stream %s after it was logged, want at most 1s", other.node, lag)
	}
}
