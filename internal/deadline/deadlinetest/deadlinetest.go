// Package deadlinetest plays slow clients against a server, for tests of
// request deadlines: one that trickles its body, one that keeps an idle
// connection open.
package deadlinetest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// Giveup is how long the clients wait for the server before they give up.
const Giveup = 15 * time.Second

// Trickle sends a request head for host and target on a new connection to
// addr, declaring a body of 100 bytes, then one byte of it every 200 ms
// (the whole body would take 20 s). It returns how long after the head the
// server closed the connection, and what it sent meanwhile (an answer, or
// nothing).
func Trickle(tb testing.TB, addr, method, host, target string) (time.Duration, string) {
	tb.Helper()
	c := send(tb, addr, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{", method, target, host)
	defer c.Close()
	start := time.Now()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for range 99 {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			if _, err := c.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	got, _ := io.ReadAll(c) // until the server closes
	return time.Since(start), string(got)
}

// Idle sends a GET for host and target on a new connection to addr, reads
// the answer, and returns its status and how long the server then kept the
// idle connection open before closing it.
func Idle(tb testing.TB, addr, host, target string) (int, time.Duration) {
	tb.Helper()
	c := send(tb, addr, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, host)
	defer c.Close()
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		tb.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	start := time.Now()
	if _, err := br.ReadByte(); err != io.EOF {
		tb.Fatalf("idle connection: got %v, want the server to close it", err)
	}
	return res.StatusCode, time.Since(start)
}

// send opens a connection to addr that gives up after Giveup and writes
// the formatted request on it.
func send(tb testing.TB, addr, format string, args ...any) net.Conn {
	tb.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(Giveup))
	fmt.Fprintf(c, format, args...)
	return c
}
